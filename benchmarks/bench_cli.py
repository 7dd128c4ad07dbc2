"""
CLI case: the wall time of ``presets``, ``--help`` and a bad parameter beside ``import numpy``.

Each command runs as its own ``python`` process, as a user types it, the median of `repeats`;
``python -c "import numpy"`` in the same run is the floor any command of this package pays.
"""

import os
from pathlib import Path
import statistics
import subprocess
import sys
import time

_TREE = Path(os.environ.get('UBOT_LIDAR_SIM_TREE', Path(__file__).resolve().parents[1]))
COLUMNS = ('case', 'command', 'wall_s_median', 'import_numpy_s_median', 'ratio_to_numpy')

CASES = (('CLI_presets', ['-m', 'ubot_lidar_sim', 'presets']),
         ('CLI_help', ['-m', 'ubot_lidar_sim', '--help']),
         ('CLI_bad_parameter', ['-m', 'ubot_lidar_sim', 'scan', '--out', 'x.npz',
                                '--set', 'sub_ray=3']))


def _wall(argv, repeats):
    """Return the median wall time in s of `python argv`."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(_TREE), os.environ.get('PYTHONPATH', '')) if p))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, *argv], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False, env=env)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run(repeats=5):
    """Return one bench.json row per CLI case (case CLI_*)."""
    numpy_s = _wall(['-c', 'import numpy'], repeats)
    rows = []
    for case, argv in CASES:
        wall = _wall(argv, repeats)
        rows.append({'case': case, 'command': ' '.join(argv[2:]), 'wall_s_median': round(wall, 3),
                     'import_numpy_s_median': round(numpy_s, 3),
                     'ratio_to_numpy': round(wall / numpy_s, 2)})
    return rows


if __name__ == '__main__':
    for row in run():
        print(row)
