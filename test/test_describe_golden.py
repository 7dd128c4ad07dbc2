"""
``describe --sensor lidar_3d`` against its golden output (test/fixtures/describe_lidar_3d.json).

The golden file is the output of ``python -m ubot_lidar_sim describe --sensor lidar_3d`` at
commit 2ac1172, before configs were composed of parts and weather effects registered, with two
changes made on purpose since: the random-streams text names stream 6 (false_alarm, sunlight's
false-alarm points), and two settings are added, robot_sensor ('': a robot description's
sensor whose Gazebo values become the node's defaults) and fleet_body ('box': how the
fleet_frames' robots are drawn). The names and values of the settings, and the
models' texts, must come out the same; the order of the settings follows the config's parts
(four settings moved when LidarConfig was composed of parts), so names compare as a set. Config
values and texts compare exactly; the two numbers the physics computes, detection_z and
detection_threshold_counts, within the bound of their bisection (core/detection.py).
"""

import json
import math
from pathlib import Path
import subprocess
import sys

GOLDEN = Path(__file__).resolve().parent / 'fixtures' / 'describe_lidar_3d.json'
# normal_ppf bisects to |error| < 1e-12 (core/detection.py); T = S10 - z sqrt(S10 + A) moves by
# sqrt(100 + 20) times that at the default S10 = 100 and A = 20 counts.
Z_BOUND = 1e-12
T_BOUND = Z_BOUND * math.sqrt(120.0)


def _describe():
    out = subprocess.run([sys.executable, '-m', 'ubot_lidar_sim', 'describe', '--sensor',
                          'lidar_3d'], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout)


def test_describe_lidar_3d_gives_the_golden_names_values_and_texts():
    golden = json.loads(GOLDEN.read_text())
    now = _describe()
    assert list(now) == list(golden)
    assert now['sensor'] == golden['sensor']
    # The settings: the same names with the same values and JSON types.
    assert sorted(now['settings']) == sorted(golden['settings'])
    for name, value in golden['settings'].items():
        got = now['settings'][name]
        assert got == value and type(got) is type(value), (name, got, value)
    assert now['models'] == golden['models']
    assert abs(now['detection_z'] - golden['detection_z']) <= Z_BOUND
    assert abs(now['detection_threshold_counts'] - golden['detection_threshold_counts']) \
        <= T_BOUND
