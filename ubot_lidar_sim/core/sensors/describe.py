"""The models of a LiDAR config in words, with its numbers (the CLI's ``describe``)."""

import math
from typing import Dict

from ubot_lidar_sim.core.beams import planar_and_rosette
from ubot_lidar_sim.core.physics.clutter import describe_air
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


def describe_models(cfg) -> Dict[str, str]:
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
