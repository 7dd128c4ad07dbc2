"""
The compiled echo kernels (physics/radiometry_passes.py) against their plain-numpy references.

Stated tolerance: bit for bit for the echo kernels (numpy's order, only +, -, *, /); relative
1e-12 for the radiometry kernels, which call libm's exp / pow / acos (RTOL_LIBM below).
"""

import numpy as np
import pytest
from tolerances import F64_KERNEL_RTOL, F64_LIBM_REL

from ubot_lidar_sim.core.physics.radiometry_passes import first_max_flags, form_echoes, hit_power
from ubot_lidar_sim.core.physics.return_selection import (FLAG_FIRST, FLAG_LAST,
                                                          FLAG_SECOND_STRONGEST, FLAG_STRONGEST)


def form_echoes_reference(beam, r, pw, st, air, gap_m):
    """Chain and sum echoes as echoes.process_beams did with bincounts (numpy reference)."""
    new = np.ones(beam.size, dtype=bool)
    new[1:] = (beam[1:] != beam[:-1]) | (np.diff(r) >= gap_m)
    eid = np.cumsum(new) - 1
    start = np.flatnonzero(new)
    n_e = start.size
    energy = np.bincount(eid, pw, n_e)
    peak = np.bincount(eid, pw * st, n_e)
    # The dominant side (air or surfaces) by energy; its largest contributor and mean range.
    en_air = np.bincount(eid, pw * air, n_e)
    en_surf = np.bincount(eid, pw * ~air, n_e)
    n_surf = np.bincount(eid, ~air, n_e)
    side_air = (en_air > en_surf) | (n_surf == 0)
    in_side = air == side_air[eid]
    pw_side = np.where(in_side, pw, -1.0)
    is_max = pw_side == np.maximum.reduceat(pw_side, start)[eid]
    cand = np.flatnonzero(is_max)
    big = cand[np.r_[True, eid[cand][1:] != eid[cand][:-1]]]
    side = in_side.astype(np.float64)
    with np.errstate(invalid='ignore', divide='ignore'):
        en_side = np.bincount(eid, pw * side, n_e)
        r_e = np.bincount(eid, pw * r * side, n_e) / en_side
        dark = ~(en_side > 0)
        n_c = np.bincount(eid, minlength=n_e)
        r_e = np.where(dark, np.bincount(eid, r, n_e) / np.maximum(n_c, 1), r_e)
    return start, energy, r_e, peak, big


def _first_max(x, starts, group):
    out = np.zeros(x.size, dtype=bool)
    cand = np.flatnonzero(x == np.maximum.reduceat(x, starts)[group])
    out[cand[np.r_[True, group[cand][1:] != group[cand][:-1]]]] = True
    return out


def flags_reference(beam, strength):
    """Flag echoes as select_returns did with two max passes (numpy reference)."""
    n = beam.size
    first = np.r_[True, beam[1:] != beam[:-1]]
    last = np.r_[beam[1:] != beam[:-1], True]
    starts = np.flatnonzero(first)
    group = np.cumsum(first) - 1
    strongest = _first_max(strength, starts, group)
    rest = np.where(strongest, -np.inf, strength)
    size = np.diff(np.r_[starts, n])
    second = _first_max(rest, starts, group) & (size >= 2)[group]
    return (first * FLAG_FIRST | strongest * FLAG_STRONGEST | last * FLAG_LAST
            | second * FLAG_SECOND_STRONGEST).astype(np.uint8)


def _contributions(seed, m=20000):
    rng = np.random.default_rng(seed)
    beam = np.sort(rng.integers(0, m // 6, m))
    r = rng.uniform(0.5, 80.0, m)
    r[rng.random(m) < 0.3] = 10.0                       # exact ties and gaps of exactly 0
    order = np.lexsort((r, beam))
    pw = rng.exponential(50.0, m)
    pw[rng.random(m) < 0.05] = 0.0                      # dark contributions (some dark echoes)
    pw[rng.random(m) < 0.1] = 7.0                       # ties for the largest contributor
    st = np.where(rng.random(m) < 0.5, 1.0, rng.uniform(0.2, 1.0, m))
    air = rng.random(m) < 0.3                           # fog, drops and flakes among surfaces
    return beam[order], r[order], pw, st, air


@pytest.mark.parametrize('seed', [1, 2, 3])
def test_echo_formation_kernel_gives_the_bits_of_the_bincount_code(seed):
    beam, r, pw, st, air = _contributions(seed)
    gap = 0.75 * (1.0 - 1e-9)
    got = form_echoes(beam, r, pw, st, air, gap)
    ref = form_echoes_reference(beam, r, pw, st, air, gap)
    assert 1000 < got[0].size < beam.size and np.any(~(ref[1] > 0))
    for a, b in zip(got, ref):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize('seed', [1, 2])
def test_return_flag_kernel_gives_the_flags_of_the_two_max_passes(seed):
    rng = np.random.default_rng(seed)
    beam = np.sort(rng.integers(0, 3000, 9000))
    strength = np.round(rng.uniform(0.0, 20.0, 9000))   # many ties
    flags = first_max_flags(beam, strength, FLAG_FIRST, FLAG_STRONGEST, FLAG_LAST,
                            FLAG_SECOND_STRONGEST)
    np.testing.assert_array_equal(flags, flags_reference(beam, strength))
    assert first_max_flags(beam[:0], strength[:0], 1, 2, 4, 8).shape == (0,)


def backscatter_reference(table, m, c, w, albedo):
    """Backscatter as radiometry.backscatter did with numpy (valid m, scalar w)."""
    c = np.clip(np.abs(c), 0.0, 1.0)
    wet = (1.0 - table.wet_darkening * np.clip(w, 0.0, 1.0))[m]
    diffuse = table.reflectivity[m] * albedo * wet * c ** table.incidence_exponent[m]
    theta_deg = np.degrees(np.arccos(c))
    with np.errstate(divide='ignore', invalid='ignore'):
        lobe = table.specular[m] * np.exp(-(theta_deg / table.specular_width_deg[m]) ** 2)
    return diffuse + np.where(table.specular[m] != 0.0, lobe, 0.0)


def front_transmission2_reference(foliage_rows, log_t, ray, cs):
    """Two-way gap fractions behind foliage as echoes.py did with numpy (rows, t2)."""
    h = ray.shape[0]
    later = np.flatnonzero(ray[1:] == ray[:-1]) + 1
    first = np.ones(h, bool)
    first[later] = False
    starts = np.flatnonzero(first)
    base = starts[np.cumsum(first)[later] - 1]
    is_fol = np.zeros(h, bool)
    is_fol[foliage_rows] = True
    upto = np.cumsum(is_fol)

    def exclusive(rows):
        k = upto[rows] - 1
        safe = np.maximum(k, 0)
        run = np.where(k >= 0, cs[safe], 0.0)
        own = np.where(is_fol[rows], log_t[safe], 0.0)
        return run - own

    return later, np.exp(2.0 * (exclusive(later) - exclusive(base)))


# bound: the libm kernels against numpy's SIMD exp / pow / arccos: tolerances.F64_KERNEL_RTOL
# (a few ulps of each libm call times the formula's condition number, derived there).
RTOL_LIBM = F64_KERNEL_RTOL


def counts_reference(cfg, r, ring=None):
    """Return radiometry.counts_per_reflectance as it was computed with numpy."""
    from ubot_lidar_sim.core.physics import radiometry
    r = np.maximum(np.asarray(r, np.float64), 1e-3)
    overlap = (-np.expm1(-(r / cfg.overlap_range_m) ** cfg.overlap_exponent)
               if cfg.overlap_range_m > 0.0 else 1.0)
    r10 = radiometry.ring_r10(cfg.radiometry, ring, cfg.ring_range_at_10pct_m)
    return cfg.signal_at_10pct_counts / 0.1 * (r10 / r) ** 2 * overlap


def snr_reference(s, ambient):
    """Return radiometry.snr as it was computed with numpy."""
    s = np.maximum(np.asarray(s, np.float64), 0.0)
    return s / np.sqrt(np.maximum(s + ambient, 1e-12))


def range_noise_reference(cfg, snr, r):
    """Return radiometry.range_noise_std as it was computed with numpy (floor by range band)."""
    s10 = cfg.signal_at_10pct_counts
    snr_spec = s10 / np.sqrt(s10 + cfg.ambient_counts)
    q = np.maximum(np.asarray(snr, np.float64), 1e-9)
    extra = cfg.range_std_low_snr_m * (snr_spec / q) ** cfg.range_noise_snr_exponent
    bands = np.asarray(cfg.range_noise_bands_m, np.float64)
    floor = (np.interp(r, bands[0::2], bands[1::2]) if bands.size else
             np.full(np.shape(r), cfg.range_noise_std_m))
    return np.sqrt(floor ** 2 + extra ** 2)


def reflectivity_byte_reference(rho):
    """Return radiometry.reflectivity_byte as it was computed with numpy."""
    r = np.asarray(rho, dtype=np.float64)
    good = np.isfinite(r) & (r > 0.0) | (r == np.inf)
    r = np.where(good, r, 0.0)
    with np.errstate(divide='ignore', invalid='ignore'):
        log_part = 100.0 + 155.0 * np.minimum(1.0, np.log(np.maximum(r, 1.0)) / np.log(64.0))
    linear = np.floor(100.0 * np.minimum(r, 1.0) + 0.5)
    out = np.where(r <= 1.0, linear, np.floor(np.maximum(log_part, 100.0) + 0.5))
    return np.clip(out, 0, 255).astype(np.uint8)


@pytest.mark.parametrize('preset', ['velodyne_vlp16', 'robosense_helios32', 'livox_mid360'])
def test_the_compiled_laws_applied_to_arrays_give_the_numpy_values(preset):
    from ubot_lidar_sim.core.config import from_dict, LidarConfig
    from ubot_lidar_sim.core.physics import radiometry
    from ubot_lidar_sim.core.config.presets import load_preset
    cfg = from_dict(LidarConfig, {**load_preset(preset), 'range_noise_snr_exponent': 1.3,
                                  'overlap_exponent': 3.5 if preset == 'velodyne_vlp16' else 2.0})
    rng = np.random.default_rng(12)
    r = np.concatenate([[0.0, 1e-4, 1e-3], rng.uniform(0.0, 200.0, 5000)])
    ring = rng.integers(-1, cfg.channels + 2, r.size)            # out of range: the scalar
    # bound: RTOL_LIBM = F64_KERNEL_RTOL (tolerances.py)
    rings = cfg.ring_range_at_10pct_m
    np.testing.assert_allclose(radiometry.counts_per_reflectance(cfg.radiometry, r, ring, rings),
                               counts_reference(cfg, r, ring), rtol=RTOL_LIBM)
    s = rng.normal(50.0, 80.0, 5000)
    np.testing.assert_allclose(radiometry.snr(s, 3.0), snr_reference(s, 3.0), rtol=RTOL_LIBM)
    q = np.concatenate([[0.0], rng.uniform(0.0, 40.0, 5000)])
    rq = r[:q.size]                      # the livox_mid360 preset's floor is by range band
    np.testing.assert_allclose(radiometry.range_noise_std(cfg.noise, cfg.radiometry, q, rq),
                               range_noise_reference(cfg, q, rq), rtol=RTOL_LIBM)
    rho = np.concatenate([[np.nan, -1.0, 0.0, 0.005, 0.995, 1.0, 64.0, 1e9, np.inf],
                          rng.uniform(0.0, 3.0, 5000)])
    np.testing.assert_array_equal(radiometry.reflectivity_byte(rho),
                                  reflectivity_byte_reference(rho))
    # Shapes as numpy's: a scalar gives a scalar, a column against a row a table.
    assert np.ndim(radiometry.counts_per_reflectance(cfg.radiometry, 10.0)) == 0
    assert radiometry.counts_per_reflectance(cfg.radiometry, r[:4, None], ring[None, :3],
                                             rings).shape == (4, 3)


def test_backscatter_kernel_matches_the_numpy_rule_within_the_stated_tolerance(materials):
    from ubot_lidar_sim.core.physics import radiometry
    table = materials
    rng = np.random.default_rng(7)
    n = 200000
    m = rng.integers(0, table.reflectivity.size, n).astype(np.uint8)
    c = rng.uniform(-1.0, 1.0, n)
    albedo = rng.lognormal(0.0, 0.2, n)
    got = radiometry.backscatter(table, m, c, 0.4, albedo)
    ref = backscatter_reference(table, m, c, 0.4, albedo)
    np.testing.assert_allclose(got, ref, rtol=RTOL_LIBM, atol=1e-300)
    assert np.mean(got == ref) > 0.9
    # The bound covers these inputs: the lobe's condition 2 x^2 x its share of rho stays under
    # RTOL_LIBM / F64_LIBM_REL (a few more for the pow and the products). Rows whose
    # backscatter is below 1e-12 (a narrow lobe far off its peak: glass, mirror) give no count
    # (S10 / 0.1 x (R10 / R)^2 <= 1e12) and are left out of the bound, not of the comparison.
    spec = (table.specular[m] != 0.0) & (ref > 1e-12)
    x2 = (np.degrees(np.arccos(np.abs(c[spec]))) / table.specular_width_deg[m[spec]]) ** 2
    share = table.specular[m[spec]] * np.exp(-x2) / np.maximum(ref[spec], 1e-300)
    assert (8.0 + 2.0 * np.max(x2 * share)) * F64_LIBM_REL <= RTOL_LIBM
    # Scalars and broadcasting keep their shapes.
    assert radiometry.backscatter(table, 5, c[:3], 0.0).shape == (3,)
    assert np.shape(radiometry.backscatter(table, 5, 0.5, 0.0)) == ()


def hit_power_reference(cfg, table, ray, r, m, cos, albedo, foliage, wetness, alpha,
                        ring_of_beam, weights):
    """rho_app and power as echoes.contributions_from_hits did with numpy."""
    from ubot_lidar_sim.core.physics import radiometry
    s = weights.size
    beam = ray // s
    from ubot_lidar_sim.core.physics.fresnel import pane_transmission
    fol = np.flatnonzero(foliage)
    t_fol = table.transmission[m[fol]]
    rho = backscatter_reference(table, m, cos, wetness, albedo)
    # A pane (specular_reflectance > 0) returns from its whole footprint, foliage from 1 - t.
    pane = table.specular_reflectance[m[fol]] > 0.0
    rho[fol] *= np.where(pane, 1.0, 1.0 - t_fol)
    # A pane passes Fresnel's t(theta) of its t0 at the hit's incidence.
    t_fol = np.where(pane & (t_fol > 0.0), pane_transmission(t_fol, cos[fol]), t_fol)
    log_t = np.log(np.maximum(t_fol, 1e-12))
    cs = np.cumsum(log_t)
    later, t2 = front_transmission2_reference(fol, log_t, ray, cs)
    rho[later] *= t2
    rho *= np.exp(-2.0 * alpha * r)
    ring = None if radiometry.uniform_r10(cfg.ring_range_at_10pct_m) else ring_of_beam[beam]
    power = weights[ray - beam * s] * (rho * counts_reference(cfg, r, ring))
    return rho, power


@pytest.mark.parametrize('preset', ['velodyne_vlp16', 'robosense_helios32'])
def test_hit_power_kernel_matches_the_numpy_contributions_within_the_stated_tolerance(
        preset, materials):
    from ubot_lidar_sim.core.config import from_dict, LidarConfig
    from ubot_lidar_sim.core.physics import fresnel, radiometry
    from ubot_lidar_sim.core.config.presets import load_preset
    table = materials
    cfg = from_dict(LidarConfig, {**load_preset(preset),       # both form-factor exponents
                                  'overlap_exponent': 4.0 if preset == 'velodyne_vlp16' else 2.0})
    rings = cfg.ring_range_at_10pct_m
    assert radiometry.uniform_r10(rings) == (preset == 'velodyne_vlp16')    # both signal laws
    rng = np.random.default_rng(8)
    n, n_sub = 120000, 7
    weights = rng.uniform(0.05, 0.3, n_sub)
    ray = np.sort(rng.integers(0, 30000 * n_sub, n))
    r = np.sort(rng.uniform(0.0005, 120.0, n))[rng.permutation(n)]
    r = r[np.lexsort((r, ray))]
    m = rng.integers(0, table.reflectivity.size, n).astype(np.uint8)
    foliage = rng.random(n) < 0.4
    cos = rng.uniform(0.0, 1.0, n)
    albedo = rng.lognormal(0.0, 0.2, n)
    ring_of_beam = rng.integers(0, cfg.channels, 30000)
    r10 = (np.array([radiometry.ring_r10(cfg.radiometry)]) if radiometry.uniform_r10(rings) else
           radiometry.ring_r10(cfg.radiometry, ring_of_beam, rings))
    for alpha in (0.0, 0.004):                            # clear air, rain
        rho, power = hit_power(
            ray, r, m, cos, albedo, foliage, 0.4, radiometry.surface_tables(table),
            table.transmission, radiometry.pass_cover(table), 2.0 * alpha, r10,
            cfg.signal_at_10pct_counts / 0.1,
            *radiometry.form_factor(cfg.radiometry), weights, fresnel.pane_log_gain(table, m, cos))
        ref = hit_power_reference(cfg, table, ray, r, m, cos, albedo, foliage, 0.4, alpha,
                                  ring_of_beam, weights)
        np.testing.assert_allclose(rho, ref[0], rtol=RTOL_LIBM, atol=1e-300)
        np.testing.assert_allclose(power, ref[1], rtol=RTOL_LIBM, atol=1e-300)
        assert np.mean(rho == ref[0]) > 0.5 and np.any(rho < 0.5 * ref[0].max())


def test_the_same_seed_gives_the_same_bytes_through_every_kernel():
    from ubot_lidar_sim.core.config import LidarConfig
    from ubot_lidar_sim.core.physics.weather import Weather
    from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg
    from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
    from ubot_lidar_sim.core.world.materials import MaterialTable
    from ubot_lidar_sim.core.world.world import World
    cfg = LidarConfig(channels=16, horizontal_samples=400, sub_rays=7, seed=11,
                      return_mode='dual_strongest_last')
    pose = BodyTwist(pose_matrix_deg([12.0, 0.0, 1.8], [0.0, 0.0, 90.0]),
                     (2.0, 0.0, 0.0, 0.0, 0.0, 0.2))
    rain = Weather(rain_mm_h=10.0, visibility_m=1000.0)
    scans = []
    for _ in range(2):
        materials = MaterialTable.load()
        sim = LidarSimulator(cfg, World.load('demo', materials), materials)
        scans.append(sim.scan(pose, 0.3, rain, 3).points)
    assert scans[0].size > 1000 and np.any(scans[0]['material'] != scans[0]['material'][0])
    assert scans[0].tobytes() == scans[1].tobytes()


def detect_reference(cfg, peak, r_e, e_beam, draws, n_beams, ambient=None):
    """Detect as echoes.process_beams did with numpy: (s_meas, d, r_d, too_close)."""
    # ambient: one background for all (None: cfg's) or one per beam (B,).
    a = cfg.ambient_counts if ambient is None else ambient[e_beam]
    if cfg.noise_enabled:
        s_meas = peak + draws[:, 0] * np.sqrt(peak + a)
    else:
        s_meas = peak
    up = np.flatnonzero(s_meas >= cfg.detection_threshold_counts)
    if cfg.noise_enabled:
        sigma_r = range_noise_reference(cfg, snr_reference(
            peak[up], a if ambient is None else a[up]), r_e[up])
        r_up = r_e[up] + draws[up, 1] * sigma_r
    else:
        r_up = r_e[up]
    too_close = np.zeros(n_beams, dtype=bool)
    too_close[e_beam[up[r_up < cfg.min_range_m]]] = True
    in_window = (r_up >= cfg.min_range_m) & (r_up <= cfg.max_range_m)
    return s_meas, up[in_window], r_up[in_window], too_close


@pytest.mark.parametrize('per_beam', [False, True])
@pytest.mark.parametrize('noise', [True, False])
@pytest.mark.parametrize('bands', [(), (0.2, 0.03, 10.0, 0.02, 50.0, 0.05)])
def test_detection_kernel_gives_the_numpy_detection(noise, bands, per_beam):
    import math
    from ubot_lidar_sim.core.config import LidarConfig
    from ubot_lidar_sim.core.physics.radiometry import range_noise_floor_m
    from ubot_lidar_sim.core.physics.radiometry_passes import detect_echoes
    cfg = LidarConfig(noise_enabled=noise, min_range_m=0.5, max_range_m=80.0,
                      range_noise_std_m=0.02, range_noise_bands_m=bands)
    rng = np.random.default_rng(9)
    n, n_beams = 50000, 20000
    peak = rng.exponential(2.0 * cfg.detection_threshold_counts, n)
    r_e = rng.uniform(0.0, 100.0, n)
    e_beam = np.sort(rng.integers(0, n_beams, n))
    draws = rng.standard_normal((n, 2))
    too_close = np.zeros(n_beams, dtype=bool)
    s10 = cfg.signal_at_10pct_counts
    # One background for every beam, or one per beam (sunlight with a direction).
    ambient = rng.uniform(0.0, 500.0, n_beams) if per_beam else None
    got = detect_echoes(peak, r_e, e_beam, draws, noise,
                        np.array([cfg.ambient_counts]) if ambient is None else ambient,
                        cfg.detection_threshold_counts, cfg.min_range_m, cfg.max_range_m,
                        s10 / math.sqrt(s10 + cfg.ambient_counts),
                        range_noise_floor_m(cfg.noise, r_e),
                        cfg.range_std_low_snr_m, cfg.range_noise_snr_exponent, too_close)
    ref = detect_reference(cfg, peak, r_e, e_beam, draws, n_beams, ambient)
    np.testing.assert_array_equal(got[0], ref[0])
    np.testing.assert_array_equal(got[1], ref[1])
    np.testing.assert_allclose(got[2], ref[2], rtol=RTOL_LIBM, atol=0.0)
    np.testing.assert_array_equal(too_close, ref[3])
    assert 0 < got[1].size < n and too_close.any()


@pytest.mark.parametrize('preset', ['velodyne_vlp16', 'robosense_helios32'])
def test_emitted_values_kernel_gives_the_numpy_reflectivity_signal_and_byte(preset):
    from ubot_lidar_sim.core.config import from_dict, LidarConfig
    from ubot_lidar_sim.core.physics import radiometry
    from ubot_lidar_sim.core.physics.radiometry_passes import emitted_values
    from ubot_lidar_sim.core.config.presets import load_preset
    cfg = from_dict(LidarConfig, load_preset(preset))
    rng = np.random.default_rng(10)
    n, n_beams = 40000, 9000
    r_e = rng.uniform(0.0, 150.0, n)
    peak = rng.exponential(3.0 * cfg.signal_at_10pct_counts, n)
    peak[:50] = 0.0
    s_meas = peak + rng.normal(0.0, 5.0, n)
    energy = peak * rng.uniform(0.5, 1.0, n)
    p = np.sort(rng.choice(n, 30000, replace=False))
    ring_of_beam = rng.integers(0, cfg.channels, n_beams)
    pb = rng.integers(0, n_beams, p.size)
    rings = cfg.ring_range_at_10pct_m
    r10 = (np.array([radiometry.ring_r10(cfg.radiometry)]) if radiometry.uniform_r10(rings) else
           radiometry.ring_r10(cfg.radiometry, ring_of_beam, rings))
    refl, signal, byte = emitted_values(p, pb, r_e, peak, energy, s_meas, r10,
                                        cfg.signal_at_10pct_counts / 0.1,
                                        *radiometry.form_factor(cfg.radiometry),
                                        float(cfg.saturation_counts))
    with np.errstate(invalid='ignore', divide='ignore'):     # the numpy code it replaced
        g_per = counts_reference(cfg, r_e[p],
                                 None if radiometry.uniform_r10(rings) else ring_of_beam[pb])
        ref = np.where(peak[p] > 0, energy[p] / g_per * s_meas[p] / peak[p], 0.0)
    np.testing.assert_allclose(refl, ref, rtol=RTOL_LIBM, atol=0.0)
    clipped = np.clip(s_meas[p], 0.0, cfg.saturation_counts)
    np.testing.assert_array_equal(signal, np.rint(clipped).astype(np.uint16))
    np.testing.assert_array_equal(byte, reflectivity_byte_reference(refl))
    assert np.any(refl > 1.0) and np.any((refl > 0) & (refl < 1.0)) and np.any(refl == 0.0)
