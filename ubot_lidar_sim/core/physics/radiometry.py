"""
Radiometry (docs/physics.md), vectorised over hits.

Backscatter, signal, detection threshold, reflectivity byte, pulse stretching, range noise, surface
wetness and the pond rule. Functions take numpy arrays (any broadcastable shape) and the config
parts they read (RadiometryConfig, NoiseConfig); the detection threshold is core/detection.py.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence, Tuple, TYPE_CHECKING, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.config.radiometry import NoiseConfig, RadiometryConfig
from ubot_lidar_sim.core.material_ids import OTHER, WATER
from ubot_lidar_sim.core.physics import radiometry_passes, rules
from ubot_lidar_sim.core.physics.radiometry_passes import SurfaceTables

if TYPE_CHECKING:       # annotations only
    from ubot_lidar_sim.core.world.materials import MaterialTable

# Rain rate at which a surface is 1 - 1/e wet (steady state), mm/h: see wetness_from_rain.
WETTING_RAIN_MM_H = 1.0


def backscatter(table: MaterialTable, material: ArrayLike, cos: ArrayLike, wetness: ArrayLike,
                albedo: ArrayLike = 1.0) -> NDArray[np.float64]:
    """
    Lambertian-equivalent backscatter rho_bs (docs/physics.md, "Surfaces and materials").

    rho_bs = rho albedo (1 - a w) |cos|^k + s exp(-(theta / width)^2); material bytes out of
    range fall back to 'other'; wetness is clipped to [0, 1]; albedo scales the diffuse term only
    (it is the ground's diffuse texture).
    """
    m = valid_materials(table, material)
    cos = np.asarray(cos, dtype=np.float64)
    w = np.clip(np.asarray(wetness, dtype=np.float64), 0.0, 1.0)
    albedo = np.asarray(albedo, dtype=np.float64)
    shape = np.broadcast_shapes(m.shape, cos.shape, w.shape, albedo.shape)

    def rows(x, dtype=np.float64, one_for_all=False):
        """Return x as writeable C rows: (H,) of the broadcast shape, or (1,) for one value."""
        x = x.reshape(1) if one_for_all and x.size == 1 else \
            np.broadcast_to(x, shape).reshape(-1)
        # One argument type whatever the caller passed (uint8 or int64 bytes, a broadcast
        # view, a read-only array): numba compiles one signature per type, and a signature
        # the build's cache lacks compiles inside a node's sweep (seconds, +30 MB of RSS).
        return np.require(x, dtype=dtype, requirements=['C', 'W'])

    # One compiled pass over the hits.
    out = radiometry_passes.backscatter_rows(
        rows(m, np.int64), rows(cos), rows(albedo, one_for_all=True),
        rows(w, one_for_all=True), *surface_tables(table))
    return out.reshape(shape)


def _elementwise(rows, arrays, *scalars):
    """
    Apply a rules.py row loop to float64 arrays broadcast together; shape of the broadcast.

    A 0-d result is returned as a numpy scalar, as numpy's own elementwise functions do.
    """
    args = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in arrays))
    shape = args[0].shape
    out = rows(*(np.ascontiguousarray(a).reshape(-1) for a in args), *scalars)
    return out.reshape(shape)[()]


def valid_materials(table: MaterialTable, material: ArrayLike) -> NDArray[np.integer]:
    """Return material indices with the bytes out of the table's range turned to 'other'."""
    m = np.asarray(material)
    n_mat = table.reflectivity.shape[0]
    if not (m.dtype == np.uint8 and (m.size == 0 or m.max() < n_mat)):
        m = np.asarray(material, dtype=np.int64)
        m = np.where((m >= 0) & (m < n_mat), m, OTHER)
    return m


def surface_tables(table: MaterialTable) -> SurfaceTables:
    """
    Return the per-material arrays of the backscatter kernels (physics/radiometry_passes.py).

    (wet darkening, reflectivity, incidence exponent, specular, specular width (deg), lobe): the
    lobe flag says where s exp(...) is evaluated; without a lobe it is +0 exactly (a width > 0
    keeps the exponential finite), so it is evaluated only for specular materials.
    """
    width = table.specular_width_deg
    return (table.wet_darkening, table.reflectivity, table.incidence_exponent, table.specular,
            width, (table.specular != 0.0) | ~(width > 0.0))


def pass_cover(table: MaterialTable) -> NDArray[np.float64]:
    """
    Return the share of a pass-through hit's footprint that returns, per material (M,).

    Foliage covers 1 - t of the footprint (its gaps pass the rest); a glass pane (a material
    with a specular_reflectance) covers all of it and passes t through its bulk.
    """
    return np.where(table.specular_reflectance > 0.0, 1.0, 1.0 - table.transmission)


def ring_r10(spec: RadiometryConfig, ring: Optional[ArrayLike] = None,
             ring_table_m: Sequence[float] = ()) -> Union[float, NDArray[np.float64]]:
    """
    Return range_at_10pct_m per ring, m (shape of ``ring``; a float without ``ring``).

    ring_table_m (the sensor's ring_range_at_10pct_m) applies where given; rings out of its range
    (or -1) use the radiometry's range_at_10pct_m.
    """
    table = np.asarray(ring_table_m, dtype=np.float64)
    if ring is None:
        return float(spec.range_at_10pct_m)
    r = np.asarray(ring, dtype=np.int64)
    if table.size == 0:
        return np.full(r.shape, float(spec.range_at_10pct_m))
    ok = (r >= 0) & (r < table.size)
    return np.where(ok, table[np.clip(r, 0, table.size - 1)], spec.range_at_10pct_m)


def counts_per_reflectance(spec: RadiometryConfig, range_m: ArrayLike,
                           ring: Optional[ArrayLike] = None,
                           ring_table_m: Sequence[float] = ()) -> NDArray[np.float64]:
    """
    Return the signal of a rho = 1 target, S10 / 0.1 (R10 / R)^2 overlap(R), counts.

    R10 of each ``ring`` from ring_table_m (ring_r10); without ``ring`` the radiometry's.
    """
    return _elementwise(rules.counts_per_reflectance_rows,
                        (range_m, ring_r10(spec, ring, ring_table_m)),
                        spec.signal_at_10pct_counts / 0.1, *form_factor(spec))


def form_factor(radiometry: RadiometryConfig) -> Tuple[float, float]:
    """Return (Rov, n) of the near-field form factor 1 - exp(-(R / Rov)^n) as floats."""
    return float(radiometry.overlap_range_m), float(radiometry.overlap_exponent)


def uniform_r10(ring_table_m: Sequence[float]) -> bool:
    """Return True when every ring has range_at_10pct_m (an empty per-ring table)."""
    return len(ring_table_m) == 0


def reflectivity_byte(rho: ArrayLike) -> NDArray[np.uint8]:
    """
    Return the calibrated reflectivity byte (uint8, shape of ``rho``).

    round(100 rho) up to 100; above, 100 + 155 min(1, ln rho / ln 64); 0 for rho <= 0 or NaN
    (rules.reflectivity_byte: C round(), halves away from zero).
    """
    return _elementwise(rules.reflectivity_byte_rows, (rho,))


def pulse_stretch_factor(pulse_length_m: float, range_m: ArrayLike, cos: ArrayLike,
                         beta_rad: ArrayLike) -> NDArray[np.float64]:
    """
    Return the peak factor L / sqrt(L^2 + dR^2), dR = R tan(theta) beta (1 when L or beta = 0).

    beta is the full-angle divergence in the plane of incidence; L and dR are both full widths.
    """
    c = np.clip(np.abs(np.asarray(cos, dtype=np.float64)), 0.0, 1.0)
    r = np.asarray(range_m, dtype=np.float64)
    beta = np.asarray(beta_rad, dtype=np.float64)
    if pulse_length_m <= 0.0:
        return np.ones(np.broadcast(c, r, beta).shape)
    with np.errstate(divide='ignore', invalid='ignore'):
        tan = np.sqrt(1.0 - c * c) / c
        dr = np.where(beta > 0.0, r * tan * beta, 0.0)
        factor = pulse_length_m / np.sqrt(pulse_length_m ** 2 + dr ** 2)
    return np.where(np.isfinite(dr), factor, 0.0)


def snr(signal_counts_: ArrayLike, ambient_counts: float) -> NDArray[np.float64]:
    """Return the shot-noise SNR S / sqrt(S + ambient)."""
    return _elementwise(rules.snr_rows, (signal_counts_,), float(ambient_counts))


def range_noise_floor_m(noise: NoiseConfig, range_m: ArrayLike) -> np.ndarray:
    """
    Return the range-noise floor at ``range_m``, m (float64, shape of ``range_m``).

    range_noise_bands_m empty: range_noise_std_m everywhere. Else the bands' std_m interpolated
    linearly in range between their points and held at the end values outside them (np.interp);
    linear interpolation between a datasheet's points is this package's assumption.
    """
    r = np.asarray(range_m, dtype=np.float64)
    bands = noise.range_noise_bands_m
    if not bands:
        return np.full(r.shape, float(noise.range_noise_std_m))
    points = np.asarray(bands, dtype=np.float64).reshape(-1, 2)
    return np.interp(r, points[:, 0], points[:, 1])


def range_noise_std(noise: NoiseConfig, radiometry: RadiometryConfig, snr_: ArrayLike,
                    range_m: ArrayLike) -> np.ndarray:
    """
    Return the 1-sigma range noise for an echo of SNR ``snr_`` at ``range_m``, m.

    Root-sum-square of the floor range_noise_floor_m (range_noise_std_m, or the bands of
    range_noise_bands_m at range_m) and the low-SNR term range_std_low_snr_m (SNR_spec /
    SNR)^range_noise_snr_exponent, SNR_spec = S10 / sqrt(S10 + ambient): independent timing
    errors add in quadrature, and the floor dominates strong echoes.
    """
    floor_m = range_noise_floor_m(noise, range_m)
    return _elementwise(rules.range_noise_std_rows, (snr_, floor_m),
                        snr_at_spec(radiometry), float(noise.range_std_low_snr_m),
                        float(noise.range_noise_snr_exponent))


def snr_at_spec(radiometry: RadiometryConfig) -> float:
    """Return SNR_spec = S10 / sqrt(S10 + A_spec), the SNR of the 10 % target at R10."""
    s10 = radiometry.signal_at_10pct_counts
    return s10 / math.sqrt(s10 + radiometry.spec_background_counts)


def wetness_from_rain(rain_mm_h: ArrayLike) -> NDArray[np.float64]:
    """
    Return the steady-state surface wetness 1 - exp(-R / 1 mm/h), 0-1 (0 without rain).

    Engineering model: surfaces film over within minutes even in light rain (0.18 at 0.2 mm/h,
    0.63 at 1 mm/h, > 0.99 from 5 mm/h); drying after rain is not modelled.
    """
    r = np.maximum(np.asarray(rain_mm_h, dtype=np.float64), 0.0)
    return -np.expm1(-r / WETTING_RAIN_MM_H)


def surface_wetness(weather_wetness: float, rain_mm_h: float) -> float:
    """Return the wetness to use: the given one (clipped to 1) or, when negative, from the rain."""
    if weather_wetness < 0.0:
        return float(wetness_from_rain(rain_mm_h))
    return min(float(weather_wetness), 1.0)


def pond_material(material: ArrayLike, ground: ArrayLike,
                  puddle_depth_m: Union[float, NDArray[np.float64]],
                  pond_threshold_m: float) -> NDArray[np.uint8]:
    """
    Return materials with ground hits turned into water where a puddle is deep enough.

    Water when ground and puddle_depth_m >= pond_threshold_m and puddle_depth_m > 0 (no puddle,
    no water, even with a zero threshold). Always a new uint8 array.
    """
    m = np.asarray(material, dtype=np.uint8)
    deep = (puddle_depth_m >= pond_threshold_m) & (puddle_depth_m > 0.0)
    if np.ndim(deep) == 0 and not deep:
        return np.array(np.broadcast_to(m, np.broadcast(m, ground).shape), dtype=np.uint8)
    flooded = np.asarray(ground, dtype=bool) & deep
    return np.where(flooded, np.uint8(WATER), m).astype(np.uint8)


def rough_range_sigma_m(roughness_m: ArrayLike, cos: ArrayLike) -> NDArray[np.float64]:
    """Return the ground-relief range sigma RoughnessM |cos|^-1.5, m (cos floored at 0.01)."""
    return _elementwise(rules.rough_range_sigma_rows, (roughness_m, cos))
