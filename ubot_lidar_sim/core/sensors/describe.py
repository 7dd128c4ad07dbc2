"""The models of a LiDAR config in words, with its numbers (the CLI's ``describe``)."""

import math
from typing import Dict

from ubot_lidar_sim.core.beams import planar_and_rosette
from ubot_lidar_sim.core.config import LaserScanConfig, LidarConfig, replace
from ubot_lidar_sim.core.physics import snow_laws
from ubot_lidar_sim.core.physics.pulse_length import soft_pulse_length_m
from ubot_lidar_sim.core.sensors.random_streams import describe_streams


def _pattern_text(cfg) -> str:
    """Return the scan pattern of a LidarConfig in words (its beams and their firing times)."""
    pattern = cfg.pattern
    if pattern.kind == 'rosette':
        up, down = cfg.vertical_fov_up_deg, cfg.vertical_fov_down_deg
        el = planar_and_rosette.rosette_line_elevations_deg(cfg.channels, up, down,
                                                            cfg.elevations_deg)
        theta = math.degrees(planar_and_rosette.rosette_cone_half_angle_rad(up, down, el))
        (f1, f2), spin = pattern.rosette_prism_hz, pattern.rosette_spin_hz
        rate = cfg.channels * cfg.horizontal_samples * cfg.rate_hz
        return (f'Risley rosette (non-repetitive): {cfg.channels} lines x '
                f'{cfg.horizontal_samples} shots per {1e3 / cfg.rate_hz:g} ms frame '
                f'({rate:,.0f} points/s, point i on line i mod {cfg.channels}, every point at its '
                f'own time), prisms at {f1:g} and {f2:g} Hz sweeping a {theta:.4g} deg cone about '
                f'axes at {", ".join(f"{e:g}" for e in el)} deg elevation'
                + (f', head turning at {spin:g} Hz' if spin else '')
                + '; sweep k continues the pattern at k / rate_hz')
    offsets = pattern.ring_time_offsets_us
    order = ('each ring at its firing offset (ring_time_offsets_us, max '
             f'{max(offsets):g} us)' if offsets else 'every ring of a column at once')
    return (f'{cfg.channels} channels x {cfg.horizontal_samples} columns over '
            f'{cfg.horizontal_fov_deg:g} deg, {cfg.rate_hz:g} Hz, spin '
            f'{pattern.spin_direction} from {pattern.scan_start_azimuth_deg:g} deg, {order}')


_SENSOR_FRAME = ('Points in the sensor frame at the instant their column fired; stamp at the '
                 'sweep {stamp_at}.')


def _geometric_models(cfg) -> Dict[str, str]:
    """Return the descriptions of model geometric: model, beam, sensor_frame."""
    beam = (_pattern_text(cfg) + ', motion distortion '
            f'{"on" if cfg.motion_distortion else "off"}. Each beam is one pencil ray.')
    return {'model': 'geometric: the first surface each beam meets (foliage included, '
                     f'smoke not) within {cfg.max_range_m:g} m gives one point, its first, '
                     'strongest and last return; nearer than '
                     f'{cfg.min_range_m:g} m it is too close. No radiometry, detection '
                     'statistics, noise or weather: intensity, reflectivity and signal 0.',
            'beam': beam,
            'sensor_frame': _SENSOR_FRAME.format(stamp_at=cfg.stamp_at)}


def _beam_text(cfg) -> str:
    """Return the beams of the physical model in words: pattern, sub-rays, divergence."""
    div_v = cfg.divergence_v_mrad or cfg.divergence_mrad
    return (_pattern_text(cfg) + ', motion distortion '
            f'{"on" if cfg.motion_distortion else "off"}. Each beam is '
            + ('one pencil ray' if cfg.sub_rays == 1 else
               f'7 sub-rays: centre (weight 0.25) + hexagon at 0.35 x {cfg.divergence_mrad:g} '
               'mrad (0.125 each), '
               + ('every one traced (footprint exhaustive)' if cfg.footprint == 'exhaustive'
                  else 'footprint adaptive: the centre traced first, the hexagon only where the '
                  'footprint may straddle surfaces (neighbours off its plane or hitting other '
                  'layers, grazing incidence, block edges); elsewhere one echo of the centre '
                  'hit with the whole power and the footprint-mean ground albedo'))
            + f'; divergence {cfg.divergence_mrad:g} x {div_v:g} mrad, up to '
            f'{cfg.max_hits_per_sub_ray} surfaces per sub-ray (foliage transmits, '
            f'continue step {cfg.continue_step_m:g} m).')


def _noise_floor_text(cfg) -> str:
    """Return the range-noise floor in words: one value, or the bands of range_noise_bands_m."""
    bands = cfg.range_noise_bands_m
    if not bands:
        return f'{cfg.range_noise_std_m:g} m'
    points = ', '.join(f'{s:g} m at {r:g} m' for r, s in zip(bands[0::2], bands[1::2]))
    return f'by range band ({points}; linear between, held outside)'


def _imperfections_text(cfg) -> str:
    """Return the sensor's own imperfections in words (core/physics/imperfections.py)."""
    if not cfg.imperfections:
        return 'off (imperfections false): an ideally calibrated sensor.'
    return (f'per-laser calibration residuals N(0, {cfg.calibration_elevation_std_deg:g} deg) '
            f'elevation, N(0, {cfg.calibration_azimuth_std_deg:g} deg) azimuth, N(0, '
            f'{cfg.calibration_range_std_m:g} m) range, fixed by calibration_serial '
            f'{cfg.calibration_serial}; range walk {cfg.range_walk_m:g} m x (1 - sqrt(ln(S / T) / '
            f'ln {cfg.range_walk_dynamic_range:g})), 0 above {cfg.range_walk_dynamic_range:g} T.')


def describe_models(cfg: LidarConfig) -> Dict[str, str]:
    """
    Return plain-text descriptions of the models with this config's numbers.

    Keys: beam, echo, signal, return_selection, intensity, weather (with the near-range model:
    form factor, blanking, soft return, lidar ratios, snow law), material, imperfections (for
    ``describe``);
    for model geometric: model, beam, sensor_frame.
    """
    if cfg.model == 'geometric':
        return _geometric_models(cfg)
    beam = _beam_text(cfg)
    echo = (f'Contributions weight x two-way transmission x S_i cluster into one echo while '
            f'gaps are <= {cfg.min_separation_m:g} m; the dominant side of an echo (the '
            "air's returns or the surfaces, by power) gives its range (power-weighted mean) "
            'and its material and class (largest contributor)'
            + (f'; pulse stretching with L = {cfg.pulse_length_m:g} m.' if cfg.pulse_length_m > 0
               else '; no pulse stretching (pulse_length_m 0).'))
    signal = (f'S = {cfg.signal_at_10pct_counts:g} (rho / 0.1) (R10 / R)^2 (1 - exp(-(R / '
              f'{cfg.overlap_range_m:g})^{cfg.overlap_exponent:g})) counts, R10 = '
              f'{cfg.range_at_10pct_m:g} m'
              + (' (per ring table)' if cfg.ring_range_at_10pct_m else '')
              + f'; detected when S + N(0, S + A) >= T = '
              f'{cfg.detection_threshold_counts:.4g} counts (P_det {cfg.detection_at_spec:g} '
              f'at the spec point, A = {cfg.spec_background_counts:g} counts at '
              f'{cfg.spec_sun_klx:g} klx; A = {cfg.ambient_counts:g} + '
              f'{cfg.solar_counts_per_klx:g} x sun klx); range noise floor '
              f'{_noise_floor_text(cfg)} plus '
              f'{cfg.range_std_low_snr_m:g} m x (SNR_spec / SNR)^{cfg.range_noise_snr_exponent:g}'
              f'; noise {"on" if cfg.noise_enabled else "off"}; detection window '
              f'{cfg.min_range_m:g}-{cfg.max_range_m:g} m.')
    selection = (f'return_mode {cfg.return_mode}: detected echoes in range order, flags bit 0 '
                 'first, 1 strongest, 2 last, 3 second strongest, 4 ghost; return_index 1-based.'
                 + (' Velodyne dual rule: the second strongest when the strongest is the last.'
                    if cfg.dual_second_strongest_when_last else ''))
    intensity = ('Calibrated reflectivity byte: round(100 rho) for 0-100 % diffuse, 100 + 155 '
                 'min(1, ln rho / ln 64) above (specular / retro-reflective); rho = rho_app x '
                 'S_measured / S_peak, transmission losses not corrected, as on a real sensor.')
    weather = describe_air(cfg)
    material = ('Material table of config/materials.yaml' + (
        f' overridden by {cfg.materials_file}' if cfg.materials_file else '')
        + ': rho_bs = rho albedo (1 - a w) cos^k + s exp(-(theta / width)^2); foliage returns '
        '(1 - t) and passes t per layer (two-way t^2 behind it); ground texture (albedo sd per '
        '0.1 m cell, micro-slope per 0.25 m cell) and roughness range noise '
        'RoughnessM |cos|^-1.5 z per beam.')
    n_blocks = cfg.n_column_blocks
    blocks = (f'; {n_blocks} column blocks: block j appends j to the key.' if n_blocks > 1
              else '.')
    return {'model': 'physical: the radiometric model of docs/physics.md.', 'beam': beam,
            'echo': echo, 'signal': signal, 'return_selection': selection,
            'intensity': intensity, 'weather': weather, 'material': material,
            'imperfections': _imperfections_text(cfg),
            'sensor_frame': _SENSOR_FRAME.format(stamp_at=cfg.stamp_at),
            'random_streams': 'PCG64(SeedSequence([seed, crc32(sensor_id), scan_index, '
                              'stream])): ' + describe_streams() + '; the exponentials of a '
                              'clutter medium from a jump of its Poisson stream' + blocks}


def describe_air(cfg: LidarConfig) -> str:
    """Return the weather and near-range model of a config in plain text (for ``describe``)."""
    if not cfg.weather:
        return 'Weather off: clear air whatever the environment says.'
    length = soft_pulse_length_m(cfg.optics, cfg.echoes)
    slope, intercept, b = snow_laws.SNOW_LAWS[cfg.snow_type]
    return (
        f'Near range: form factor 1 - exp(-(R / {cfg.overlap_range_m:g} m)^'
        f'{cfg.overlap_exponent:g}) on every signal; '
        f'receiver blanking below min_range_m = {cfg.min_range_m:g} m. Two-way exp(-2 alpha R) '
        'on every contribution. Fog/haze: visibility (Koschmieder 3.912 / V) minus its rain '
        f'and snow parts ({cfg.rain_visibility_model}), Kim et al. (2001) to '
        f'{cfg.wavelength_nm:g} nm, droplet share of the extinction 1 - V / '
        f'{cfg.fog_droplet_visibility_m:g} m, lidar ratio {cfg.fog_lidar_ratio_sr:g} sr '
        f'(droplets) to {cfg.haze_lidar_ratio_sr:g} sr (haze); one pulse-integrated soft return '
        f'per beam (Hahner et al. 2021), pulse length {length:g} m ('
        + ('pulse_length_m' if cfg.pulse_length_m > 0.0 else 'min_separation_m')
        + f'), at its peak between min_range_m and the nearest solid hit, up to '
        f"{cfg.clutter_max_range_m:g} m, its fog droplets' backscatter times a gamma factor "
        f'per pulse (shape {cfg.fog_fluctuation_shape:g} x {cfg.fog_fluctuation_reference_m:g} m '
        '/ V, mean 1; haze steady). Rain: '
        f'alpha = {cfg.rain_db_per_km:g} R^'
        f'{cfg.rain_exponent:g} dB/km, lidar ratio {cfg.rain_lidar_ratio_sr:g} sr, '
        f'Marshall-Palmer drops {cfg.rain_drops_per_m3:g} R^{cfg.rain_drops_exponent:g} /m^3. '
        f'Snow ({cfg.snow_type}, ITU-R): alpha = {slope * cfg.wavelength_nm + intercept:.4g} '
        f'S^{b:g} dB/km (S mm/h water), lidar ratio {cfg.snow_lidar_ratio_sr:g} sr, '
        f'Gunn-Marshall flakes {snow_laws.GM_N0 / snow_laws.GM_LAMBDA:.0f} '
        f'S^{snow_laws.GM_N0_EXP - snow_laws.GM_LAMBDA_EXP:.2f} /m^3 of Brandes et al. (2007) '
        'density, '
        + ("optical area Mitchell's (1996) aggregate law A = 0.2285 D^1.88 (cgs), whatever "
           'the rate; ' if cfg.snow_flake_optics == 'area_law' else
           'optical area the share of their discs that gives the snow law extinction; ')
        + 'snow_depth_m > 0 turns ground into snow. Drops and flakes: each particle '
        'large enough to be detected is drawn in the beam volume up to the nearest solid hit, '
        'returns 2 pi / S times the share of the footprint it covers and shadows what lies '
        'behind it. Wetness from '
        f'the environment or 1 - exp(-R / 1 mm/h); puddles >= {cfg.pond_threshold_m:g} m turn '
        'ground into water. Smoke volumes stop the rays'
        + (' (enabled).' if cfg.smoke_enabled else ' (disabled).'))


def describe_laser(cfg: LaserScanConfig) -> Dict[str, str]:
    """Return the plain-text models of a LaserScanConfig (the CLI's ``describe``)."""
    planar = cfg.pattern
    n = planar.n_rays
    az = planar_and_rosette.planar_azimuths_rad(planar.fov_deg, planar.resolution_deg,
                                                planar.fov_centre_deg)
    beam = (f'{n} rays every {planar.resolution_deg:g} deg (ceil({planar.fov_deg:g} / '
            f'{planar.resolution_deg:g})) from {math.degrees(az[0]):g} to '
            f'{math.degrees(az[-1]):g} deg, counter-clockwise at {cfg.rate_hz:g} Hz; ray k '
            'fires k x time_increment after the stamp, motion distortion '
            f'{"on" if cfg.motion_distortion else "off"}; REP 117: +inf no return, -inf nearer '
            f'than {cfg.min_range_m:g} m, readings in [{cfg.min_range_m:g}, '
            f'{cfg.max_range_m:g}] m.')
    if cfg.model == 'geometric':
        return {'model': 'geometric: a line trace. The first surface each ray '
                         'meets (foliage included, smoke not) gives the range, rounded once '
                         'to float32; no detection statistics, noise, weather or intensities.',
                'beam': beam}
    out = describe_models(replace(cfg.to_lidar_config(), min_range_m=cfg.min_range_m))
    rays = 'one pencil ray.' if cfg.sub_rays == 1 else '7 sub-rays (centre + hexagon).'
    out.update(model='physical: the radiometric model of docs/physics.md on one channel.',
               beam=f'{beam} Each beam is {rays}')
    return out
