"""
Echo formation, detection and return selection (ProcessBeam of document 001) for a whole scan.

Surface hits (and clutter slabs) become Contributions; process_beams clusters them into echoes
per beam, draws the noise, detects against the threshold and applies the return mode, all with
sorted keys and bincounts: no Python loop over beams, hits or echoes.
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ubot_lidar_sim.core import radiometry
from ubot_lidar_sim.core.scan_pattern import perpendicular_basis

FLAG_FIRST, FLAG_STRONGEST, FLAG_LAST, FLAG_SECOND_STRONGEST = 1, 2, 4, 8


@dataclass(frozen=True, eq=False)
class Contributions:
    """
    M contributions, any order. power_counts = weight x two-way transmission x S_i.

    beam (M,) int64; range_m (M,) float64; power_counts (M,) float64 (energy, no stretch);
    rho_app (M,) weight-free apparent reflectance (backscatter x transmissions); stretch (M,) peak
    factor (1 = none); material, class_id (M,) uint8; is_ground (M,) bool and roughness_m (M,)
    float64 optional (for the caller's ground-relief range noise).
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

    def __len__(self):
        """Return M."""
        return self.beam.shape[0]

    @classmethod
    def build(cls, beam, range_m, power_counts, rho_app, stretch=None, material=0, class_id=0,
              is_ground=None, roughness_m=None):
        """Build from array-likes, broadcasting scalars and fixing dtypes."""
        beam = np.asarray(beam, dtype=np.int64).reshape(-1)
        m = beam.shape[0]

        def arr(x, dtype, fill=None):
            if x is None:
                return None if fill is None else np.full(m, fill, dtype=dtype)
            return np.broadcast_to(np.asarray(x, dtype=dtype), (m,)).copy()

        return cls(beam, arr(range_m, np.float64), arr(power_counts, np.float64),
                   arr(rho_app, np.float64), arr(stretch, np.float64, 1.0),
                   arr(material, np.uint8), arr(class_id, np.uint8),
                   arr(is_ground, bool), arr(roughness_m, np.float64))

    @classmethod
    def empty(cls):
        """Return zero contributions."""
        return cls.build(np.zeros(0, np.int64), 0.0, 0.0, 0.0)

    @classmethod
    def concat(cls, *parts):
        """Concatenate contributions; optional fields survive only if every part has them."""
        parts = [p for p in parts if p is not None]
        if not parts:
            return cls.empty()
        out = {}
        for name in ('beam', 'range_m', 'power_counts', 'rho_app', 'stretch', 'material',
                     'class_id', 'is_ground', 'roughness_m'):
            vals = [getattr(p, name) for p in parts]
            out[name] = None if any(v is None for v in vals) else np.concatenate(vals)
        return cls(**out)


@dataclass(frozen=True, eq=False)
class Returns:
    """
    P points, beam order then range order, and per-scan echo statistics.

    beam (P,) int64; range_m (P,) float64 measured; reflectivity (P,) float64 (1 = 100 %);
    signal (P,) uint16; intensity, class_id, material, return_index (1-based), return_count,
    return_flags (P,) uint8; n_echoes formed before detection; too_close (B,) bool: a beam
    with an echo above threshold nearer than min_range_m (REP 117 -inf for the 2D scanner).
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

    def __len__(self):
        """Return P."""
        return self.beam.shape[0]


def _group_exclusive_cumsum(values, keys):
    """Exclusive cumulative sum of ``values`` within runs of equal consecutive ``keys``."""
    cs = np.cumsum(values)
    excl = cs - values
    start = np.r_[True, keys[1:] != keys[:-1]] if keys.size else np.zeros(0, bool)
    base = np.maximum.accumulate(np.where(start, np.arange(keys.size), 0))
    return excl - excl[base]


def contributions_from_hits(cfg, table, hits, weights, ring_of_beam, atm=None, wetness=0.0,
                            puddle_depth_m=0.0, ray_dirs=None):
    """
    Turn sub-ray hits into Contributions (the per-hit part of ProcessBeam).

    hits: the Hits of world.trace, sub-ray k of beam b at ray b * S + k, S = len(weights);
    ring_of_beam (B,); atm an Atmosphere (None = clear air); wetness 0-1 for every surface;
    puddle_depth_m turns ground into water (pond rule); ray_dirs (B * S, 3) world unit directions
    of the traced sub-rays, for the plane-of-incidence divergence of pulse stretching (without
    them, ground hits use the vertical and other hits the horizontal divergence).
    A foliage hit returns (1 - t) of what reaches it; every later hit of the sub-ray is scaled by
    the two-way gap fraction t^2 of each foliage layer in front of it.
    """
    weights = np.asarray(weights, dtype=np.float64)
    s = weights.shape[0]
    ray = np.asarray(hits.ray, dtype=np.int64)
    r = np.asarray(hits.range_m, dtype=np.float64)
    if ray.size and not (np.all(np.diff(ray) >= 0)
                         and np.all(np.diff(r)[np.diff(ray) == 0] >= 0)):
        order = np.lexsort((r, ray))
    else:
        order = slice(None)
    ray, r = ray[order], r[order]
    cos = np.abs(np.asarray(hits.cos_inc, dtype=np.float64)[order])
    ground = np.asarray(hits.ground, dtype=bool)[order]
    foliage = np.asarray(hits.foliage, dtype=bool)[order]
    material = radiometry.pond_material(np.asarray(hits.material)[order], ground,
                                        puddle_depth_m, cfg.pond_threshold_m)
    foliage &= material != radiometry.WATER
    albedo = np.asarray(hits.albedo, dtype=np.float64)[order]
    beam = ray // s
    t = np.where(foliage, table.transmission[material], 0.0)
    log_t = np.log(np.maximum(t, 1e-12))
    t_front2 = np.exp(2.0 * _group_exclusive_cumsum(np.where(foliage, log_t, 0.0), ray))
    frac = np.where(foliage, 1.0 - t, 1.0)
    rho_bs = radiometry.backscatter(table, material, cos, wetness, albedo)
    t_atm = np.exp(-2.0 * atm.alpha * r) if atm is not None and atm.active else 1.0
    rho_app = rho_bs * frac * t_front2 * t_atm
    power = weights[ray % s] * radiometry.signal_counts(
        cfg, rho_app, r, np.asarray(ring_of_beam)[beam])
    stretch = None
    if cfg.pulse_length_m > 0.0:
        beta = _plane_of_incidence_divergence(cfg, hits, order, ground, ray_dirs, ray)
        stretch = radiometry.pulse_stretch_factor(cfg.pulse_length_m, r, cos,
                                                  np.where(foliage, 0.0, beta))
    return Contributions.build(beam, r, power, rho_app, stretch, material,
                               np.asarray(hits.class_id)[order], ground,
                               table.roughness_m[material])


def _plane_of_incidence_divergence(cfg, hits, order, ground, ray_dirs, ray):
    """Full-angle divergence along the plane of incidence, rad (H,), from the beam ellipse."""
    bh = cfg.divergence_mrad * 1e-3
    bv = (cfg.divergence_v_mrad or cfg.divergence_mrad) * 1e-3
    if ray_dirs is None or getattr(hits, 'normal', None) is None:
        return np.where(ground, bv, bh)
    d = np.asarray(ray_dirs, dtype=np.float64)[ray]
    n = np.asarray(hits.normal, dtype=np.float64)[order]
    p = n - np.sum(n * d, axis=1, keepdims=True) * d
    norm = np.linalg.norm(p, axis=1, keepdims=True)
    p = np.where(norm > 1e-12, p / np.maximum(norm, 1e-12), 0.0)
    u, v = perpendicular_basis(d)
    # Support function of the footprint ellipse along the in-plane direction p.
    return np.hypot(bh * np.sum(p * u, axis=1), bv * np.sum(p * v, axis=1))


def process_beams(cfg, contrib, n_beams, noise_rng, ring_of_beam):
    """
    Vectorised ProcessBeam over a scan: Contributions -> Returns.

    Contributions sorted by (beam, range) chain into one echo while consecutive gaps are <
    min_separation_m (a gap >= min_separation_m starts a new echo). Echo range = power-weighted
    mean; material/class of its largest contributor; peak P = sum power x stretch. noise_rng
    draws exactly (n_echoes, 2) standard normals in one call (beam then range order; also with
    noise off): draw 0 the shot noise sigma sqrt(P + ambient), draw 1 the range noise
    (radiometry.range_noise_std). Detected when S' >= T and min_range_m <= range <= max_range_m.
    Reflectivity = rho_e S' / P with rho_e = energy / counts_per_reflectance(range): transmission
    losses stay in, as on a real sensor.
    """
    ring_of_beam = np.asarray(ring_of_beam)
    beam = np.asarray(contrib.beam, dtype=np.int64)
    r = np.asarray(contrib.range_m, dtype=np.float64)
    if r.size:
        # One float key beam x span + range sorts like lexsort((range, beam)) at ~um resolution,
        # several times faster on millions of contributions.
        span = float(r.max() - r.min()) + 1.0
        order = np.argsort(beam * span + (r - r.min()), kind='stable')
    else:
        order = np.zeros(0, np.int64)
    beam, r = beam[order], r[order]
    pw = np.asarray(contrib.power_counts, dtype=np.float64)[order]
    st = np.asarray(contrib.stretch, dtype=np.float64)[order]
    new = np.ones(beam.size, dtype=bool)
    # Document 001: contributions *closer* than min_separation_m merge, so a gap of exactly
    # min_separation_m (adjacent clutter slabs) separates; the tolerance absorbs rounding.
    new[1:] = (beam[1:] != beam[:-1]) | (np.diff(r) >= cfg.min_separation_m * (1.0 - 1e-9))
    eid = np.cumsum(new) - 1
    n_e = int(new.sum())
    start = np.flatnonzero(new)
    energy = np.bincount(eid, pw, n_e)
    n_c = np.bincount(eid, minlength=n_e)
    with np.errstate(invalid='ignore', divide='ignore'):
        r_e = np.where(energy > 0, np.bincount(eid, pw * r, n_e) / energy,
                       np.bincount(eid, r, n_e) / np.maximum(n_c, 1))
    peak = np.bincount(eid, pw * st, n_e)
    # Largest contributor of each echo, the nearest among ties (O(M), no second sort).
    is_max = pw == np.maximum.reduceat(pw, start)[eid] if pw.size else np.zeros(0, bool)
    cand = np.flatnonzero(is_max)
    big = cand[np.r_[True, eid[cand][1:] != eid[cand][:-1]]] if cand.size else cand
    e_beam = beam[start]
    material = np.asarray(contrib.material, dtype=np.uint8)[order][big]
    class_id = np.asarray(contrib.class_id, dtype=np.uint8)[order][big]

    draws = noise_rng.standard_normal((n_e, 2))
    if cfg.noise_enabled:
        s_meas = peak + draws[:, 0] * np.sqrt(peak + cfg.ambient_counts)
        sigma_r = radiometry.range_noise_std(cfg, radiometry.snr(peak, cfg.ambient_counts))
        r_meas = r_e + draws[:, 1] * sigma_r
    else:
        s_meas, r_meas = peak, r_e
    above = s_meas >= cfg.detection_threshold_counts
    too_close = np.zeros(n_beams, dtype=bool)
    too_close[e_beam[above & (r_meas < cfg.min_range_m)]] = True
    detected = above & (r_meas >= cfg.min_range_m) & (r_meas <= cfg.max_range_m)

    g_per = radiometry.counts_per_reflectance(cfg, r_e, ring_of_beam[e_beam])
    with np.errstate(invalid='ignore', divide='ignore'):
        refl = np.where(peak > 0, energy / g_per * s_meas / peak, 0.0)

    d = np.flatnonzero(detected)
    flags, emit = _select(cfg.return_mode, e_beam[d], s_meas[d])
    p = d[emit]
    pb = e_beam[p]
    first_of_beam = np.r_[True, pb[1:] != pb[:-1]] if pb.size else np.zeros(0, bool)
    gstart = np.maximum.accumulate(np.where(first_of_beam, np.arange(pb.size), 0))
    count = np.bincount(pb, minlength=n_beams)[pb] if pb.size else np.zeros(0, np.int64)
    signal = np.rint(np.clip(s_meas[p], 0.0, cfg.saturation_counts)).astype(np.uint16)
    return Returns(
        beam=pb, range_m=r_meas[p], reflectivity=refl[p], signal=signal,
        intensity=radiometry.intensity_byte(refl[p]), class_id=class_id[p], material=material[p],
        return_index=(np.arange(pb.size) - gstart + 1).astype(np.uint8),
        return_count=count.astype(np.uint8), return_flags=flags[emit], n_echoes=n_e,
        too_close=too_close)


def _select(mode, beam, strength):
    """Return flags (D,) uint8 of detected echoes (beam, range order) and the emit mask (D,)."""
    n = beam.size
    idx = np.arange(n)
    first = np.r_[True, beam[1:] != beam[:-1]] if n else np.zeros(0, bool)
    last = np.r_[beam[1:] != beam[:-1], True] if n else np.zeros(0, bool)
    gstart = np.maximum.accumulate(np.where(first, idx, 0)) if n else idx
    order = np.lexsort((idx, -strength, beam))  # strongest first, nearest among ties
    rank = np.empty(n, dtype=np.int64)
    rank[order] = idx - gstart[order]
    strongest, second = rank == 0, rank == 1
    flags = (first * FLAG_FIRST | strongest * FLAG_STRONGEST | last * FLAG_LAST
             | second * FLAG_SECOND_STRONGEST).astype(np.uint8)
    emit = {
        'strongest': strongest, 'first': first, 'last': last,
        'dual_strongest_last': strongest | last, 'dual_first_last': first | last,
        'triple_first_strongest_last': first | strongest | last,
    }[mode]
    return flags, emit
