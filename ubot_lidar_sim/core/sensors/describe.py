"""The models of a LiDAR config in words, with its numbers (the CLI's ``describe``)."""

from typing import Dict


def describe_models(cfg) -> Dict[str, str]:
    """
    Return plain-text descriptions of the models with this config's numbers.

    Keys: beam, echo, signal, return_selection, intensity, weather, material (for ``describe``).
    """
    div_v = cfg.divergence_v_mrad or cfg.divergence_mrad
    beam = (f'{cfg.channels} channels x {cfg.horizontal_samples} columns over '
            f'{cfg.horizontal_fov_deg:g} deg, {cfg.rate_hz:g} Hz, spin {cfg.spin_direction} from '
            f'{cfg.scan_start_azimuth_deg:g} deg, motion distortion '
            f'{"on" if cfg.motion_distortion else "off"}. Each beam is '
            + ('one pencil ray' if cfg.sub_rays == 1 else
               f'7 sub-rays: centre (weight 0.25) + hexagon at 0.35 x {cfg.divergence_mrad:g} '
               'mrad (0.125 each)')
            + f'; divergence {cfg.divergence_mrad:g} x {div_v:g} mrad, up to '
            f'{cfg.max_hits_per_sub_ray} surfaces per sub-ray (foliage transmits, '
            f'continue step {cfg.continue_step_m:g} m).')
    echo = (f'Contributions weight x two-way transmission x S_i cluster into one echo while '
            f'gaps are <= {cfg.min_separation_m:g} m; echo range is the power-weighted mean, '
            'material and class those of the largest contributor'
            + (f'; pulse stretching with L = {cfg.pulse_length_m:g} m.' if cfg.pulse_length_m > 0
               else '; no pulse stretching (pulse_length_m 0).'))
    signal = (f'S = {cfg.signal_at_10pct_counts:g} (rho / 0.1) (R10 / R)^2 (1 - exp(-(R / '
              f'{cfg.overlap_range_m:g})^2)) counts, R10 = {cfg.range_at_10pct_m:g} m'
              + (' (per ring table)' if cfg.ring_range_at_10pct_m else '')
              + f'; detected when S + N(0, S + {cfg.ambient_counts:g}) >= T = '
              f'{cfg.detection_threshold_counts:.4g} counts (P_det {cfg.detection_at_spec:g} '
              f'at the spec point); range noise floor {cfg.range_noise_std_m:g} m plus '
              f'{cfg.range_std_low_snr_m:g} m x (SNR_spec / SNR)^{cfg.range_noise_snr_exponent:g}'
              f'; noise {"on" if cfg.noise_enabled else "off"}; detection window '
              f'{cfg.min_range_m:g}-{cfg.max_range_m:g} m.')
    selection = (f'return_mode {cfg.return_mode}: detected echoes in range order, flags bit 0 '
                 'first, 1 strongest, 2 last, 3 second strongest; return_index 1-based.')
    intensity = ('Calibrated reflectivity byte: round(100 rho) for 0-100 % diffuse, 100 + 155 '
                 'min(1, ln rho / ln 64) above (specular / retro-reflective); rho = rho_app x '
                 'S_measured / S_peak, transmission losses not corrected, as on a real sensor.')
    weather = (('Rain: alpha = ' f'{cfg.rain_db_per_km:g} R^{cfg.rain_exponent:g} dB/km; fog/haze '
                'from the visibility (Koschmieder 3.912 / V) minus its rain part '
                f'({cfg.rain_visibility_model}), scaled by Kim et al. (2001) to '
                f'{cfg.wavelength_nm:g} nm; two-way exp(-2 alpha R) on every contribution; '
                f'clutter slabs up to {cfg.clutter_max_range_m:g} m (fog lidar ratio '
                f'{cfg.fog_lidar_ratio_sr:g} sr, haze {cfg.haze_lidar_ratio_sr:g} sr, rain '
                f'{cfg.rain_lidar_ratio_sr:g} sr; drops {cfg.rain_drops_per_m3:g} '
                f'R^{cfg.rain_drops_exponent:g} /m^3). Wetness from the environment or '
                f'1 - exp(-R / 1 mm/h); puddles >= {cfg.pond_threshold_m:g} m turn ground '
                'into water. Smoke volumes stop the rays'
                + (' (enabled).' if cfg.smoke_enabled else ' (disabled).'))
               if cfg.weather else 'Weather off: clear air whatever the environment says.')
    material = ('Material table of config/materials.yaml' + (
        f' overridden by {cfg.materials_file}' if cfg.materials_file else '')
        + ': rho_bs = rho albedo (1 - a w) cos^k + s exp(-(theta / width)^2); foliage returns '
        '(1 - t) and passes t per layer (two-way t^2 behind it); ground texture (albedo sd per '
        '0.1 m cell, micro-slope per 0.25 m cell) and roughness range noise '
        'RoughnessM |cos|^-1.5 z per beam.')
    return {'beam': beam, 'echo': echo, 'signal': signal, 'return_selection': selection,
            'intensity': intensity, 'weather': weather, 'material': material,
            'sensor_frame': 'Points in the sensor frame at the instant their column fired; '
                            f'stamp at the sweep {cfg.stamp_at}.',
            'random_streams': 'PCG64(SeedSequence([seed, crc32(sensor_id), scan_index, '
                              'stream])): 0 noise, 1 clutter, 2 roughness.'}
