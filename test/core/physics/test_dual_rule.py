"""
Velodyne's dual-return rule (issue 42).

VLP-16 User Manual 63-9243 Rev D, p. 57 (VLP-32C 63-9325 Rev C, p. 57): in dual mode, "if the
strongest return is also the last return, then the second-strongest return is provided".
"""

from pathlib import Path

import numpy as np
import pytest

from ubot_lidar_sim.core.config.configure import effective_config
from ubot_lidar_sim.core.config.presets import load_preset
from ubot_lidar_sim.core.labels import PRECIPITATION_CLASS
from ubot_lidar_sim.core.physics.return_selection import (
    FLAG_FIRST, FLAG_LAST, FLAG_SECOND_STRONGEST, FLAG_STRONGEST, select_returns)
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.sensors.point_layouts import (
    _to_autoware, AUTOWARE_DTYPE, FULL_DTYPE, NEBULA_RETURN_TYPE, return_type_table)
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World

# Hand-built echoes in (beam, range) order and their measured signal, counts:
#   beam 0: fog echo 40 at 3 m, wall 300 at 5 m   -> strongest is last: fog is the 2nd return
#   beam 1: wall 300 at 5 m, weak echo 50 at 9 m  -> strongest is first: strongest + last
#   beam 2: one echo 120                          -> one point
#   beam 3: 30 at 2 m, 90 at 4 m, 400 at 6 m      -> strongest last: the 90 (not the first)
BEAM = np.array([0, 0, 1, 1, 2, 3, 3, 3])
STRENGTH = np.array([40.0, 300.0, 300.0, 50.0, 120.0, 30.0, 90.0, 400.0])


def test_second_strongest_is_emitted_when_the_strongest_is_last():
    flags, emit = select_returns('dual_strongest_last', BEAM, STRENGTH, second_when_last=True)
    assert emit.tolist() == [True, True, True, True, True, False, True, True]
    assert flags.tolist() == [
        FLAG_FIRST | FLAG_SECOND_STRONGEST, FLAG_STRONGEST | FLAG_LAST,
        FLAG_FIRST | FLAG_STRONGEST, FLAG_LAST | FLAG_SECOND_STRONGEST,
        FLAG_FIRST | FLAG_STRONGEST | FLAG_LAST,
        FLAG_FIRST, FLAG_SECOND_STRONGEST, FLAG_STRONGEST | FLAG_LAST]


def test_without_the_rule_the_strongest_last_echo_is_alone():
    _, emit = select_returns('dual_strongest_last', BEAM, STRENGTH)
    assert emit.tolist() == [False, True, True, True, True, False, False, True]


@pytest.mark.parametrize('mode', ['strongest', 'last', 'dual_first_last',
                                  'triple_first_strongest_last'])
def test_the_rule_changes_no_other_mode(mode):
    plain = select_returns(mode, BEAM, STRENGTH)
    ruled = select_returns(mode, BEAM, STRENGTH, second_when_last=True)
    assert np.array_equal(plain[0], ruled[0]) and np.array_equal(plain[1], ruled[1])


def test_autoware_return_type_of_the_second_strongest():
    flags, emit = select_returns('dual_strongest_last', BEAM, STRENGTH, second_when_last=True)
    points = np.zeros(int(emit.sum()), FULL_DTYPE)
    points['return_flags'] = flags[emit]
    kinds = _to_autoware(points, np.zeros(points.size, AUTOWARE_DTYPE),
                         'dual_strongest_last')['return_type']
    t = NEBULA_RETURN_TYPE
    # Nebula's ReturnType (nebula_common.hpp): SECONDSTRONGEST = 8.
    # An echo both strongest and last holds all the mode's flags: IDENTICAL, as before.
    assert kinds.tolist() == [t['second_strongest'], t['identical'], t['strongest'],
                              t['last'], t['identical'], t['second_strongest'], t['identical']]
    assert return_type_table('dual_strongest_last')[0] == t['unknown']


@pytest.mark.parametrize('preset', ['velodyne_vlp16', 'velodyne_vlp32c'])
def test_velodyne_presets_follow_the_manual(preset):
    assert load_preset(preset)['dual_second_strongest_when_last'] is True


WALL = """frame: map
objects:
  - {name: ground, type: plane, size_m: [200, 200], material: grass}
  - {name: wall, type: box, size_m: [0.2, 40, 40], pose: {xyz: [5.1, 0, 0]}, material: other}
"""


@pytest.fixture(scope='module')
def wall_in_fog(tmp_path_factory):
    """Return the fog-clutter share of the wall's beams without and with the rule."""
    tmp = Path(tmp_path_factory.mktemp('dual'))
    (tmp / 'w.yaml').write_text(WALL)
    (tmp / 'm.yaml').write_text('other: {reflectivity: 0.10}\n')
    materials = MaterialTable.load(str(tmp / 'm.yaml'))
    world = World.load(str(tmp / 'w.yaml'), materials)
    pose = BodyTwist(pose_matrix_deg([0.0, 0.0, 2.0], [0.0, 0.0, 0.0]), np.zeros(6))
    shares = []
    for rule in (False, True):
        cfg = effective_config('lidar_3d', overrides={
            'preset': 'velodyne_vlp16', 'world_file': 'flat', 'motion_distortion': False,
            'return_mode': 'dual_strongest_last', 'horizontal_samples': 360,
            'dual_second_strongest_when_last': rule})
        res = LidarSimulator(cfg, world, materials).scan(pose, 0.0, Weather(visibility_m=50.0),
                                                         scan_index=0)
        on = np.flatnonzero(res.hit_range_m < 5.3)
        fog = res.beam[res.points['class_id'] == PRECIPITATION_CLASS]
        shares.append(np.isin(on, fog).mean())
    return shares


def test_a_fog_echo_before_a_dark_wall_shows_only_with_the_rule(wall_in_fog):
    # The case: a 10 % target at 5 m in 50 m fog. The wall is nearly always each
    # beam's strongest and last echo, so without the rule its fog echo shows only where the
    # fog's pulse-to-pulse factor makes it the strongest (0.5 % of the beams; 0 % in the issue,
    # before issue 42's wider factor); with the rule it shows wherever it is detected.
    without, with_rule = wall_in_fog
    assert without < 0.02
    assert with_rule > 0.2 and with_rule > 10.0 * without
