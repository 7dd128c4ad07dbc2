"""
False alarms (docs/physics.md, "Sunlight"): the background alone crossing the threshold.

A range bin without an echo holds only the background's shot noise, of variance A (the
detection law of docs/physics.md, "Detection", at P = 0); it crosses the threshold T with
probability p = Phi(-T / sqrt(A)) = erfc(T / sqrt(2 A)) / 2, which the sun raises through A
(physics/sunlight.py). A beam has n = floor((max_range_m - min_range_m) / min_separation_m)
independent bins (the echo model resolves one echo per min_separation_m, docs/physics.md,
"Echoes"), so a beam without a return reports a false alarm with probability
q = 1 - (1 - p)^n, at a range uniform over [min_range_m, max_range_m] (every bin alike). A beam
with a return (or an echo nearer than min_range_m, too_close) keeps it: its echo is above T,
the noise crossing only at it, and the sensor's return selection takes the echo.

False points carry class labels.FALSE_ALARM_CLASS and return flag
return_selection.FLAG_FALSE_ALARM, a signal at the threshold and the reflectivity such a signal
reads at their range. They draw from their own random stream (random_streams 'false_alarm'):
two uniforms per beam, the first for the event and the second for the range.
"""

from dataclasses import replace
import math

import numba
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core import numba_cache  # noqa: F401  (stamps the kernel cache)
from ubot_lidar_sim.core.class_ids import CLASS_DTYPE
from ubot_lidar_sim.core.config.optics import EchoesConfig
from ubot_lidar_sim.core.config.physical_model import PhysicalModel
from ubot_lidar_sim.core.labels import FALSE_ALARM_CLASS
from ubot_lidar_sim.core.material_ids import OTHER
from ubot_lidar_sim.core.physics import radiometry
from ubot_lidar_sim.core.physics.echoes import Returns
from ubot_lidar_sim.core.physics.return_selection import (FLAG_FALSE_ALARM, FLAG_FIRST,
                                                          FLAG_LAST, FLAG_STRONGEST)
from ubot_lidar_sim.core.physics.sensor_part import SensorPart

#: Below this expected number of false points in a sweep none is drawn (the stream is not used):
#: in the dark the OS1 expects 1e-58 per bin, a sweep of 1e5 beams x 1e3 bins 1e-50 points.
NEGLIGIBLE_EXPECTED = 1e-12


@numba.njit(cache=True, nogil=True)
def per_bin_probability(threshold: float,
                        background: NDArray[np.float64]) -> NDArray[np.float64]:
    """Return p (N,) = erfc(T / sqrt(2 A)) / 2 for backgrounds A (N,) counts (0 where A <= 0)."""
    out = np.empty(background.shape[0])
    for i in range(background.shape[0]):
        a = background[i]
        # erfc keeps the far tail (Phi(-16) ~ 1e-58) that 1 + erf(x) rounds to 0.
        out[i] = 0.5 * math.erfc(threshold / math.sqrt(2.0 * a)) if a > 0.0 else 0.0
    return out


def bins_per_beam(echoes: EchoesConfig, sensor: SensorPart) -> int:
    """Return n, the independent range bins of one beam: (max - min range) / min_separation_m."""
    return max(1, int((sensor.max_range_m - sensor.min_range_m) // echoes.min_separation_m))


def beam_probability(model: PhysicalModel, sensor: SensorPart,
                     background: ArrayLike) -> NDArray[np.float64]:
    """Return q = 1 - (1 - p)^n per background value (shape of ``background``, counts)."""
    a = np.atleast_1d(np.asarray(background, dtype=np.float64))
    p = per_bin_probability(float(model.radiometry.detection_threshold_counts), a)
    return -np.expm1(bins_per_beam(model.echoes, sensor) * np.log1p(-p))


def with_false_alarms(model: PhysicalModel, sensor: SensorPart, ret: Returns,
                      background: ArrayLike, ring_of_beam: ArrayLike,
                      rng: np.random.Generator) -> Returns:
    """
    Return Returns ret with the false alarms of its beams without a return, in beam order.

    model: the physical model (echoes, radiometry); sensor: its range window and per-ring R10;
    background: one value or (B,) per beam, counts (sunlight.beam_background); ring_of_beam
    (B,); rng: the false-alarm stream's Generator (drawn from only when the sweep's expected
    count reaches NEGLIGIBLE_EXPECTED).
    """
    n_beams = ret.too_close.shape[0]
    q = beam_probability(model, sensor, background)
    if n_beams == 0 or float(q.max()) * n_beams < NEGLIGIBLE_EXPECTED:
        return ret
    u = rng.random((2, n_beams))
    quiet = ~np.asarray(ret.too_close, dtype=bool)     # a blinding near echo is a return too
    quiet[ret.beam] = False
    beam = np.flatnonzero(quiet & (u[0] < np.broadcast_to(q, (n_beams,))))
    if beam.size == 0:
        return ret
    return _merged(ret, _false_returns(model.radiometry, sensor, beam, u[1, beam],
                                       np.asarray(ring_of_beam)[beam]))


def _false_returns(spec, sensor, beam, u, ring):
    """Return the field arrays of false points on beams (K,) with uniforms u (K,)."""
    k = beam.size
    r = sensor.min_range_m + (sensor.max_range_m - sensor.min_range_m) * u
    t = float(spec.detection_threshold_counts)
    rho = t / radiometry.counts_per_reflectance(spec, r, ring, sensor.ring_range_at_10pct_m)
    return {'beam': beam.astype(np.int64), 'range_m': r, 'reflectivity': rho,
            'signal': np.full(k, np.rint(min(t, spec.saturation_counts)), np.uint16),
            'intensity': radiometry.reflectivity_byte(rho),
            'class_id': np.full(k, FALSE_ALARM_CLASS, CLASS_DTYPE),
            'material': np.full(k, OTHER, np.uint8),
            'return_index': np.ones(k, np.uint8), 'return_count': np.ones(k, np.uint8),
            'return_flags': np.full(k, FLAG_FALSE_ALARM | FLAG_FIRST | FLAG_STRONGEST | FLAG_LAST,
                                    np.uint8)}


def _merged(ret, extra):
    """Return ret with the rows of extra (field -> (K,)) in beam order (ret's rows keep theirs)."""
    order = np.argsort(np.concatenate([ret.beam, extra['beam']]), kind='stable')
    fields = {name: np.concatenate([np.asarray(getattr(ret, name)), values.astype(
        np.asarray(getattr(ret, name)).dtype, copy=False)])[order]
        for name, values in extra.items()}
    if ret.instance_id is not None:
        fields['instance_id'] = np.concatenate(
            [ret.instance_id, np.zeros(extra['beam'].size, ret.instance_id.dtype)])[order]
    return replace(ret, **fields)
