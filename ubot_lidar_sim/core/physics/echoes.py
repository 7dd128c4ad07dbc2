"""
Echo formation, detection and return selection for a whole scan (docs/physics.md, "Echoes").

Surface hits (and clutter slabs) become Contributions; process_beams clusters them into echoes
per beam, draws the noise, detects against the threshold and applies the return mode, all with
sorted keys and bincounts: no Python loop over beams, hits or echoes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.class_ids import CLASS_DTYPE
from ubot_lidar_sim.core.config.physical_model import PhysicalModel
from ubot_lidar_sim.core.labels import PRECIPITATION_CLASS
from ubot_lidar_sim.core.physics import fresnel
from ubot_lidar_sim.core.physics import imperfections
from ubot_lidar_sim.core.physics import radiometry
from ubot_lidar_sim.core.physics import radiometry_passes
from ubot_lidar_sim.core.physics import snow
from ubot_lidar_sim.core.physics.footprint import perpendicular_basis
from ubot_lidar_sim.core.physics.return_selection import select_returns
from ubot_lidar_sim.core.physics.sensor_part import SensorPart

if TYPE_CHECKING:       # annotations only
    from ubot_lidar_sim.core.physics.atmosphere import Atmosphere
    from ubot_lidar_sim.core.raycast.hits import Hits
    from ubot_lidar_sim.core.world.materials import MaterialTable


@dataclass(frozen=True, eq=False)
class Contributions:
    """
    M contributions, any order. power_counts = weight x two-way transmission x S_i.

    beam (M,) int64; range_m (M,) float64; power_counts (M,) float64 (energy, no stretch);
    rho_app (M,) weight-free apparent reflectance (backscatter x transmissions); stretch (M,) peak
    factor (1 = none); material (M,) uint8, class_id (M,) uint16; is_ground (M,) bool and
    roughness_m (M,) float64 optional (for the caller's ground-relief range noise);
    instance_id (M,) uint16 optional (the actor hit, 0 the static world; a part without it
    counts as 0 in concat).
    """

    beam: np.ndarray
    range_m: np.ndarray
    power_counts: np.ndarray
    rho_app: np.ndarray
    stretch: np.ndarray
    material: np.ndarray
    class_id: np.ndarray
    is_ground: Optional[np.ndarray] = None
    roughness_m: Optional[np.ndarray] = None
    instance_id: Optional[np.ndarray] = None

    def __len__(self):
        """Return M."""
        return self.beam.shape[0]

    @classmethod
    def build(cls, beam: ArrayLike, range_m: ArrayLike, power_counts: ArrayLike,
              rho_app: ArrayLike, stretch: Optional[ArrayLike] = None,
              material: ArrayLike = 0, class_id: ArrayLike = 0,
              is_ground: Optional[ArrayLike] = None,
              roughness_m: Optional[ArrayLike] = None) -> Contributions:
        """Build from array-likes, broadcasting scalars and fixing dtypes."""
        beam = np.asarray(beam, dtype=np.int64).reshape(-1)
        m = beam.shape[0]

        def arr(x, dtype, fill=None):
            if x is None:
                return None if fill is None else np.full(m, fill, dtype=dtype)
            return np.broadcast_to(np.asarray(x, dtype=dtype), (m,)).copy()

        return cls(beam, arr(range_m, np.float64), arr(power_counts, np.float64),
                   arr(rho_app, np.float64), arr(stretch, np.float64, 1.0),
                   arr(material, np.uint8), arr(class_id, CLASS_DTYPE),
                   arr(is_ground, bool), arr(roughness_m, np.float64))

    @classmethod
    def empty(cls) -> Contributions:
        """Return zero contributions."""
        return cls.build(np.zeros(0, np.int64), 0.0, 0.0, 0.0)

    @classmethod
    def concat(cls, *parts: Optional[Contributions]) -> Contributions:
        """Concatenate contributions; optional fields survive only if every part has them."""
        given = [p for p in parts if p is not None]
        if not given:
            return cls.empty()
        out: dict[str, Any] = {}
        for name in ('beam', 'range_m', 'power_counts', 'rho_app', 'stretch', 'material',
                     'class_id', 'is_ground', 'roughness_m'):
            vals = [getattr(p, name) for p in given]
            out[name] = None if any(v is None for v in vals) else np.concatenate(vals)
        if any(p.instance_id is not None for p in given):
            out['instance_id'] = np.concatenate([
                np.zeros(len(p), np.uint16) if p.instance_id is None else p.instance_id
                for p in given])
        return cls(**out)


@dataclass(frozen=True, eq=False)
class Returns:
    """
    P points, beam order then range order, and per-scan echo statistics.

    beam (P,) int64; range_m (P,) float64 measured; reflectivity (P,) float64 (1 = 100 %);
    signal (P,) uint16; class_id (P,) uint16; intensity, material, return_index (1-based),
    return_count, return_flags (P,) uint8; n_echoes formed before detection; too_close (B,)
    bool: a beam with an echo above threshold nearer than min_range_m (REP 117 -inf for the 2D
    scanner); instance_id (P,) uint16 of the largest contributor (None: the trace had no actors).
    """

    beam: np.ndarray
    range_m: np.ndarray
    reflectivity: np.ndarray
    signal: np.ndarray
    intensity: np.ndarray
    class_id: np.ndarray
    material: np.ndarray
    return_index: np.ndarray
    return_count: np.ndarray
    return_flags: np.ndarray
    n_echoes: int
    too_close: np.ndarray
    instance_id: Optional[np.ndarray] = None

    def __len__(self):
        """Return P."""
        return self.beam.shape[0]


def _range_order_fix(ray, r):
    """
    Rows that lexsort((r, ray)) moves: None (already in order), (None, order) or (rows, src).

    Hits come in ray order with ranges ascending per ray, except where ground-relief noise
    swapped two hits of one ray: only those rays are sorted (stably, like the full lexsort) and
    out[rows] = x[src] puts them in place.
    """
    if ray.size < 2:
        return None
    d_ray = ray[1:] - ray[:-1]
    if np.any(d_ray < 0):
        return None, np.lexsort((r, ray))
    bad = np.flatnonzero((d_ray == 0) & ~(r[1:] - r[:-1] >= 0))
    if bad.size == 0:
        return None
    rays = np.unique(ray[bad])
    lo = np.searchsorted(ray, rays, side='left')
    hi = np.searchsorted(ray, rays, side='right')
    n = hi - lo
    rows = np.repeat(lo - np.cumsum(n) + n, n) + np.arange(n.sum())
    return rows, rows[np.lexsort((r[rows], ray[rows]))]


def contributions_from_hits(model: PhysicalModel, sensor: SensorPart, table: MaterialTable,
                            hits: Hits, weights: ArrayLike, ring_of_beam: ArrayLike,
                            atm: Optional[Atmosphere] = None, wetness: float = 0.0,
                            puddle_depth_m: float = 0.0,
                            ray_dirs: Optional[NDArray[np.float64]] = None,
                            snow_depth_m: float = 0.0) -> Contributions:
    """
    Turn sub-ray hits into Contributions (the per-hit part of ProcessBeam).

    model: the physical model (optics, radiometry, the atmosphere's pond rule); sensor: its
    per-ring R10 table; hits: the Hits of world.trace, sub-ray k of beam b at ray b * S + k,
    S = len(weights); ring_of_beam (B,); atm an Atmosphere (None = clear air); wetness 0-1 for
    every surface; puddle_depth_m turns ground into water (pond rule) and snow_depth_m > 0 into
    snow, whose cover hides the ground's albedo texture; ray_dirs (B * S, 3) world unit
    directions of the traced sub-rays, for the plane-of-incidence divergence of pulse
    stretching (without them, ground hits use the vertical and other hits the horizontal
    divergence).
    A foliage hit returns (1 - t) of what reaches it, a glass pane (glass: physical) all of its
    backscatter; every later hit of the sub-ray is scaled by the two-way transmission t^2 of each
    pass-through layer in front of it.
    """
    weights = np.asarray(weights, dtype=np.float64)
    s = weights.shape[0]
    fix, sel = _hit_order(hits)
    ray, r = sel(hits.ray, np.int64), sel(hits.range_m, np.float64)
    cos = np.abs(sel(hits.cos_inc, np.float64))
    ground, foliage, material, albedo = _surfaces(model.atmosphere, hits, sel, puddle_depth_m,
                                                  snow_depth_m)
    beam, spec, optics = ray // s, model.radiometry, model.optics
    r10 = _r10(spec, sensor, ring_of_beam)
    alpha = atm.alpha if atm is not None and atm.active else 0.0

    valid = radiometry.valid_materials(table, material)
    # One compiled pass: backscatter, foliage (1 - t), the two-way gap fraction of the foliage
    # in front, the atmosphere's two-way loss, the signal law and the sub-ray weight.
    rho_app, power = radiometry_passes.hit_power(
        ray, r, valid, cos, albedo, foliage, min(max(float(wetness), 0.0), 1.0),
        radiometry.surface_tables(table), table.transmission, radiometry.pass_cover(table),
        2.0 * alpha, r10,
        spec.signal_at_10pct_counts / 0.1, *radiometry.form_factor(spec), weights,
        fresnel.pane_log_gain(table, valid, cos))
    stretch = np.ones(ray.shape[0])
    if optics.pulse_length_m > 0.0:
        beta = _plane_of_incidence_divergence(optics, hits, sel, ground, ray_dirs, ray)
        stretch = radiometry.pulse_stretch_factor(optics.pulse_length_m, r, cos,
                                                  np.where(foliage, 0.0, beta))
    instance = hits.instance_id
    return Contributions(beam, r if fix is not None else r.copy(), power, rho_app, stretch,
                         material, sel(hits.class_id, CLASS_DTYPE).copy(), ground.copy(),
                         table.roughness_m[material],
                         None if instance is None else sel(instance, np.uint16).copy())


def _hit_order(hits):
    """
    Return (fix, sel): the hits' _range_order_fix and sel(x, dtype) that puts a column in order.

    sel returns a new array when rows move, else np.asarray of the column itself.
    """
    fix = _range_order_fix(np.asarray(hits.ray, dtype=np.int64),
                           np.asarray(hits.range_m, dtype=np.float64))

    def sel(x, dtype):
        """Return a hits column in (ray, range) order (a new array when rows move)."""
        x = np.asarray(x, dtype=dtype)
        if fix is None:
            return x
        if fix[0] is None:
            return x[fix[1]]
        out = x.copy()
        out[fix[0]] = x[fix[1]]
        return out

    return fix, sel


def _surfaces(air, hits, sel, puddle_depth_m, snow_depth_m):
    """Return (ground, foliage, material, albedo) of the hits, with the pond and snow rules."""
    ground = sel(hits.ground, bool)
    # A copy: the caller's Hits stay as traced (lidar.py derives its own solid flags).
    foliage = sel(hits.foliage, bool).copy()
    material = snow.ground_material(sel(hits.material, np.uint8), ground, puddle_depth_m,
                                    air.pond_threshold_m, snow_depth_m)
    foliage &= material != radiometry.WATER
    albedo = sel(hits.albedo, np.float64)
    if snow_depth_m > 0.0:
        albedo = np.where(ground, 1.0, albedo)
    return ground, foliage, material, albedo


def _r10(spec, sensor, ring_of_beam):
    """Return range_at_10pct_m for every beam (B,) float64, or (1,) when all rings share it."""
    table = sensor.ring_range_at_10pct_m
    if radiometry.uniform_r10(table):
        return np.array([radiometry.ring_r10(spec)])
    return np.ascontiguousarray(radiometry.ring_r10(spec, np.asarray(ring_of_beam), table),
                                np.float64)


def _plane_of_incidence_divergence(optics, hits, sel, ground, ray_dirs, ray):
    """Full-angle divergence along the plane of incidence, rad (H,), from the beam ellipse."""
    bh = optics.divergence_mrad * 1e-3
    bv = (optics.divergence_v_mrad or optics.divergence_mrad) * 1e-3
    if ray_dirs is None or getattr(hits, 'normal', None) is None:
        return np.where(ground, bv, bh)
    d = np.asarray(ray_dirs, dtype=np.float64)[ray]
    n = sel(hits.normal, np.float64)
    p = n - np.sum(n * d, axis=1, keepdims=True) * d
    norm = np.linalg.norm(p, axis=1, keepdims=True)
    p = np.where(norm > 1e-12, p / np.maximum(norm, 1e-12), 0.0)
    u, v = perpendicular_basis(d)
    # Support function of the footprint ellipse along the in-plane direction p.
    return np.hypot(bh * np.sum(p * u, axis=1), bv * np.sum(p * v, axis=1))


def _sort_key_span(max_range_m, clutter_max_range_m):
    """Return (origin, span) of process_beams' sort key, m: the trace's and clutter's ranges."""
    far = max(float(max_range_m), float(clutter_max_range_m)) + 1.0
    return -far, 3.0 * far


def _background(spec, background_counts):
    """Return the shot-noise background as float64 (1,) (one for all) or (B,) (per beam)."""
    a = spec.ambient_counts if background_counts is None else background_counts
    return np.atleast_1d(np.asarray(a, dtype=np.float64))


def _sorted_by_beam_and_range(window, contrib):
    """
    Return (order, beam, range, power, stretch, air) of the contributions in (beam, range) order.

    order is None when they already are (the columns are then the contributions' own).
    """
    beam = np.asarray(contrib.beam, dtype=np.int64)
    r = np.asarray(contrib.range_m, dtype=np.float64)
    pw = np.asarray(contrib.power_counts, dtype=np.float64)
    st = np.asarray(contrib.stretch, dtype=np.float64)
    air = np.asarray(contrib.class_id) == PRECIPITATION_CLASS
    order = None
    if r.size:
        # One float key beam x span + range sorts like lexsort((range, beam)) at ~um resolution,
        # several times faster on millions of contributions; a key already in order (one
        # sub-ray, no clutter) is the identity of the stable sort. Its origin and span come
        # from the config (window, _sort_key_span); a range outside them (ground relief at
        # grazing incidence, far beyond the window) is clipped and keeps its row order.
        r_lo, span = window
        key = beam * span + np.clip(
            r - r_lo, 0.0, span - 1.0)
        if not np.all(key[1:] >= key[:-1]):
            order = np.argsort(key, kind='stable')
            beam, r, pw, st, air = beam[order], r[order], pw[order], st[order], air[order]
    return order, beam, r, pw, st, air


def _return_numbering(pb):
    """Return (return_index 1-based, return_count) uint8 of emitted points sorted by beam pb."""
    first_of_beam = np.r_[True, pb[1:] != pb[:-1]] if pb.size else np.zeros(0, bool)
    gstart = np.flatnonzero(first_of_beam)
    run = np.diff(np.r_[gstart, pb.size])
    return ((np.arange(pb.size) - np.repeat(gstart, run) + 1).astype(np.uint8),
            np.repeat(run, run).astype(np.uint8))


def process_beams(model: PhysicalModel, sensor: SensorPart, contrib: Contributions,
                  n_beams: int, noise_rng: np.random.Generator, ring_of_beam: ArrayLike,
                  background_counts: Optional[ArrayLike] = None) -> Returns:
    """
    Vectorised ProcessBeam over a scan: Contributions -> Returns.

    model: the physical model (echoes, noise, radiometry, imperfections, the atmosphere's
    clutter range); sensor: its range window and per-ring R10 table.

    Contributions sorted by (beam, range) chain into one echo while consecutive gaps are <
    min_separation_m (a gap >= min_separation_m starts a new echo). Its dominant side is the
    air's returns (class PRECIPITATION_CLASS) when they carry more power than the surfaces',
    else the surfaces: echo range = the power-weighted mean over that side's contributions,
    material/class of that side's largest contributor, so a target merged with a weaker fog or
    flake echo keeps its own range and class; peak P = sum power x stretch. noise_rng draws
    exactly (n_echoes, 2) standard normals in one call (beam then range order; also with
    noise off): draw 0 the shot noise sigma sqrt(P + ambient), draw 1 the range noise
    (radiometry.range_noise_std at the echo range). Detected when S' >= T and min_range_m <=
    range; a detected echo's range adds the range walk of its S' (imperfections.range_walk_m)
    and it is returned when that walked range <= max_range_m (the receiver gates the walked
    time).
    Reflectivity = rho_e S' / P with rho_e = energy / counts_per_reflectance(range): transmission
    losses stay in, as on a real sensor. background_counts: the scan's background A of the shot
    noise, one value or one per beam (B,) (physics/sunlight.py; None: in the dark, the
    radiometry's ambient_counts).
    """
    ring_of_beam = np.asarray(ring_of_beam)
    echo, noise, spec = model.echoes, model.noise, model.radiometry
    order, beam, r, pw, st, air = _sorted_by_beam_and_range(
        _sort_key_span(sensor.max_range_m, model.atmosphere.clutter_max_range_m), contrib)
    # docs/physics.md, "Echoes": contributions *closer* than min_separation_m merge, so a gap of
    # exactly min_separation_m (adjacent clutter slabs) separates; the tolerance absorbs rounding.
    # One compiled pass: echo starts, energy, power-weighted range, peak, largest contributor.
    start, energy, r_e, peak, big = radiometry_passes.form_echoes(
        beam, r, pw, st, air, echo.min_separation_m * (1.0 - 1e-9))
    n_e = start.size
    e_beam = beam[start]
    src = big if order is None else order[big]
    material = np.asarray(contrib.material, dtype=np.uint8)[src]
    class_id = np.asarray(contrib.class_id, dtype=CLASS_DTYPE)[src]
    instance = None if contrib.instance_id is None else contrib.instance_id[src]

    draws = noise_rng.standard_normal((n_e, 2))
    too_close = np.zeros(n_beams, dtype=bool)
    # One compiled pass: measured signal, detection, range noise (radiometry.snr and
    # range_noise_std, its floor at each echo range), too-close beams and the range window.
    s_meas, d, r_d = radiometry_passes.detect_echoes(
        peak, r_e, e_beam, draws, bool(noise.noise_enabled), _background(spec, background_counts),
        float(spec.detection_threshold_counts), float(sensor.min_range_m),
        float(sensor.max_range_m), radiometry.snr_at_spec(spec),
        radiometry.range_noise_floor_m(noise, r_e), float(noise.range_std_low_snr_m),
        float(noise.range_noise_snr_exponent), too_close)
    # Range walk: a weak echo crosses the leading-edge threshold late (imperfections.py); the
    # receiver gates the walked time, so an echo walked past max_range_m is not returned.
    r_d = r_d + imperfections.range_walk_m(model.sensor_imperfections, spec, s_meas[d])
    inside = r_d <= sensor.max_range_m
    d, r_d = d[inside], r_d[inside]

    flags, emit = select_returns(echo.return_mode, e_beam[d], s_meas[d],
                                 echo.dual_second_strongest_when_last)
    p = d[emit]
    pb = e_beam[p]
    refl, signal, intensity = radiometry_passes.emitted_values(
        p, pb, r_e, peak, energy, s_meas, _r10(spec, sensor, ring_of_beam),
        spec.signal_at_10pct_counts / 0.1, *radiometry.form_factor(spec),
        float(spec.saturation_counts))
    return_index, return_count = _return_numbering(pb)
    return Returns(
        beam=pb, range_m=r_d[emit],
        reflectivity=refl, signal=signal,
        intensity=intensity, class_id=class_id[p], material=material[p],
        return_index=return_index, return_count=return_count, return_flags=flags[emit],
        n_echoes=n_e, too_close=too_close, instance_id=None if instance is None else instance[p])
