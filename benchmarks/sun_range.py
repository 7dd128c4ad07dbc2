"""
Detection range in sunlight and in the dark, per preset, against the datasheets (one command).

For each preset whose datasheet gives its range under 100 klx of sunlight, the range where a 10 %
and an 80 % Lambertian target are detected with the preset's detection_at_spec in clear air, at
100 klx and in the dark, from the model of docs/physics.md ("Signal", "Detection", "Sunlight":
physics/sunlight.py), and the probability that a sample without an echo crosses the threshold.
A preset without a published false-alarm rate read here has no solar response
(solar_counts_per_klx 0): its ranges are the same in sunlight and in the dark, and its row says
so.

Usage: python benchmarks/sun_range.py [--write]
  --write: replace the table in docs/physics.md ("Sunlight"); otherwise print it.
"""

import argparse
import os
from pathlib import Path
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ubot_lidar_sim.core.config import from_dict, LidarConfig  # noqa: E402
from ubot_lidar_sim.core.config.presets import load_preset  # noqa: E402
from ubot_lidar_sim.core.physics import sunlight  # noqa: E402
from weather_docs import replace_table  # noqa: E402

#: Datasheet ranges at 100 klx: (10 % target m, 80 % target m, false positives, source).
DATASHEETS = {
    'ouster_os1_64': (40.0, 120.0, 1e-4, 'Ouster OS1 datasheet, optical performance'),
    'ouster_os1_128': (40.0, 120.0, 1e-4, 'Ouster OS1 datasheet, optical performance'),
    'livox_mid360': (40.0, 70.0, None, 'Livox Mid-360 User Manual v1.0, Specifications'),
    'livox_avia': (190.0, 450.0, None, 'Livox Avia User Manual v1.0, Specifications'),
}
HEADER = ('| preset | datasheet at 100 klx: 10 % / 80 % | model at 100 klx: 10 % / 80 % | '
          'model in the dark: 10 % / 80 % | false alarms per sample at 100 klx / dark '
          '(datasheet) | source |')


def rows():
    """Return the Markdown lines of the table."""
    out = [HEADER, '|---|---|---|---|---|---|']
    for preset, (r10, r80, far, source) in DATASHEETS.items():
        cfg = from_dict(LidarConfig, load_preset(preset))
        sheet = f'{r10:g} m / {r80:g} m'
        sun = [sunlight.detection_range_m(cfg.radiometry, rho, 100.0) for rho in (0.1, 0.8)]
        dark = [sunlight.detection_range_m(cfg.radiometry, rho, 0.0) for rho in (0.1, 0.8)]
        fa = [sunlight.false_alarm_probability(cfg.radiometry, e) for e in (100.0, 0.0)]
        rates = (f'{fa[0]:.2g} / {fa[1]:.2g} ({far:g})' if cfg.solar_counts_per_klx > 0.0 else
                 'no solar response: no false-alarm rate read from the manual')
        out.append(f'| {preset} | {sheet} | {sun[0]:.1f} m / {sun[1]:.1f} m | '
                   f'{dark[0]:.1f} m / {dark[1]:.1f} m | {rates} | {source} |')
    return out


def main(argv=None):
    """Print the table, or write it into docs/physics.md with --write."""
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    ap.add_argument('--write', action='store_true')
    args = ap.parse_args(argv)
    table = rows()
    if not args.write:
        print('\n'.join(table))
        return 0
    path = Path(__file__).resolve().parents[1] / 'docs' / 'physics.md'
    path.write_text(replace_table(path.read_text(encoding='utf-8'), table), encoding='utf-8')
    print(f'rewritten: {path.name}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
