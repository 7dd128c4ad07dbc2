"""Mimic joints: the follower moves by multiplier x leader + offset, and its body with it."""

import math

import numpy as np
import pytest
from robot_files import urdf

from ubot_lidar_sim.core.labels import SELF_CLASS
from ubot_lidar_sim.core.robot.description import RobotError
from ubot_lidar_sim.core.robot.joint_frames import moving_joints, moving_transforms
from ubot_lidar_sim.core.robot.load import load_robot
from ubot_lidar_sim.core.robot.scanner import RobotScanner
from ubot_lidar_sim.core.robot.tree import link_poses
from ubot_lidar_sim.core.world.world import World

# A gripper: two fingers on prismatic joints along y, the right one mimicking the left with
# multiplier -1 and offset 0.01 m (it closes as the left one opens, 1 cm further out).
GRIPPER = """<robot name="gripper">
 <link name="palm"/><link name="left"/><link name="right"/>
 <joint name="left_joint" type="prismatic"><parent link="palm"/><child link="left"/>
  <origin xyz="0.1 0.02 0"/><axis xyz="0 1 0"/>
  <limit lower="0" upper="0.05" effort="1" velocity="1"/></joint>
 <joint name="right_joint" type="prismatic"><parent link="palm"/><child link="right"/>
  <origin xyz="0.1 -0.02 0"/><axis xyz="0 1 0"/>
  <limit lower="-0.05" upper="0.05" effort="1" velocity="1"/>
  <mimic joint="{leader}" multiplier="-1" offset="0.01"/></joint>
 {extra}
</robot>"""

SDF_GRIPPER = """<?xml version="1.0"?>
<sdf version="1.11"><model name="sdf_gripper">
 <link name="palm"/><link name="left"/><link name="right"><pose>0.1 -0.02 0 0 0 0</pose></link>
 <joint name="left_joint" type="revolute"><parent>palm</parent><child>left</child>
  <axis><xyz>0 0 1</xyz></axis></joint>
 <joint name="right_joint" type="revolute"><parent>palm</parent><child>right</child>
  <axis><xyz>0 0 1</xyz><mimic joint="left_joint"><multiplier>2</multiplier>
   <offset>0.1</offset><reference>0.05</reference></mimic></axis></joint>
</model></sdf>"""


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_urdf_mimic_finger_moves_by_multiplier_times_leader_plus_offset(tmp_path):
    desc = load_robot(_write(tmp_path, 'g.urdf', GRIPPER.format(leader='left_joint', extra='')))
    poses = link_poses(desc, {'left_joint': 0.03})
    # left: 0.02 + 0.03 = 0.05 m; right: -0.02 + (-1 x 0.03 + 0.01) = -0.04 m
    # bound: float64 products of 4x4 transforms, cm offsets: < 1e-15 m or rad; 1e-12 is slack
    assert poses['left'][:3, 3] == pytest.approx([0.1, 0.05, 0.0], abs=1e-12)
    assert poses['right'][:3, 3] == pytest.approx([0.1, -0.04, 0.0], abs=1e-12)
    # with the leader at 0 the follower sits at its offset, 0.01 m out: -0.02 + 0.01
    # bound: float64 products of 4x4 transforms, cm offsets: < 1e-15 m or rad; 1e-12 is slack
    assert link_poses(desc)['right'][:3, 3] == pytest.approx([0.1, -0.01, 0.0], abs=1e-12)


def test_a_given_value_of_the_mimic_joint_is_replaced_by_its_leaders(tmp_path):
    desc = load_robot(_write(tmp_path, 'g.urdf', GRIPPER.format(leader='left_joint', extra='')))
    poses = link_poses(desc, {'left_joint': 0.03, 'right_joint': 0.5})
    # bound: float64 products of 4x4 transforms, cm offsets: < 1e-15 m or rad; 1e-12 is slack
    assert poses['right'][1, 3] == pytest.approx(-0.04, abs=1e-12)


def test_sdf_mimic_uses_multiplier_offset_and_reference(tmp_path):
    desc = load_robot(_write(tmp_path, 'model.sdf', SDF_GRIPPER))
    right = desc.joints[1].mimic
    assert (right.joint, right.multiplier, right.offset, right.reference) == (
        'left_joint', 2.0, 0.1, 0.05)
    # follower = 2 (0.3 - 0.05) + 0.1 = 0.6 rad about z
    yaw = link_poses(desc, {'left_joint': 0.3})['right'][:3, :3]
    # bound: float64 products of 4x4 transforms, cm offsets: < 1e-15 m or rad; 1e-12 is slack
    assert math.atan2(yaw[1, 0], yaw[0, 0]) == pytest.approx(0.6, abs=1e-12)


def test_the_mimic_joint_goes_on_tf_at_its_leaders_position(tmp_path):
    desc = load_robot(_write(tmp_path, 'g.urdf', GRIPPER.format(leader='left_joint', extra='')))
    # /joint_states sets the leader only; the follower's transform comes from it
    assert moving_joints(desc) == ['left_joint']
    moved = {c: m for _, c, m in moving_transforms(desc, {'left_joint': 0.03})}
    # bound: float64 products of 4x4 transforms, cm offsets: < 1e-15 m or rad; 1e-12 is slack
    assert moved['right'][:3, 3] == pytest.approx([0.1, -0.04, 0.0], abs=1e-12)


@pytest.mark.parametrize('leader, extra, match', [
    ('gone_joint', '', r"g\.urdf: joint 'right_joint'/mimic: joint 'gone_joint' is not a joint "
                       r'of the description \(allowed: left_joint, right_joint\)'),
    ('right_joint', '', r"g\.urdf: joint 'right_joint'/mimic: the mimics make a cycle "
                        r'right_joint -> right_joint'),
    ('third_joint', '<link name="third"/><joint name="third_joint" type="revolute"><parent '
                    'link="palm"/><child link="third"/><axis xyz="0 0 1"/><limit lower="-1" '
                    'upper="1" effort="1" velocity="1"/><mimic joint="right_joint"/></joint>',
     r'cycle right_joint -> third_joint -> right_joint \(allowed: a chain of mimics that ends '
     r'at a joint that mimics none\)'),
])
def test_a_bad_mimic_is_one_line_naming_file_joint_and_rule(tmp_path, leader, extra, match):
    with pytest.raises(RobotError, match=match) as err:
        load_robot(_write(tmp_path, 'g.urdf', GRIPPER.format(leader=leader, extra=extra)))
    assert '\n' not in str(err.value)


def test_sdf_mimic_without_a_joint_is_refused(tmp_path):
    text = SDF_GRIPPER.replace('<mimic joint="left_joint">', '<mimic>')
    with pytest.raises(RobotError, match=r"joint 'right_joint'/axis/mimic: no joint attribute"):
        load_robot(_write(tmp_path, 'model.sdf', text))


def test_a_mast_that_mimics_a_pan_joint_blanks_the_sector_it_turns_to(tmp_path, materials):
    # The self-occlusion test's mast (near face 0.45 m ahead of the laser, 0.1 m wide) turned by
    # a joint that mimics a pan joint: multiplier 2, offset 0.1 rad. Pan 0.2 rad: mast 0.5 rad.
    pan = ('<link name="pan"/><joint name="pan_joint" type="revolute"><parent link="base_link"/>'
           '<child link="pan"/><origin xyz="0 0 0.3"/><axis xyz="0 0 1"/>'
           '<limit lower="-3" upper="3" effort="1" velocity="1"/></joint>')
    text = urdf(samples=361, lo=-math.pi / 2, hi=math.pi / 2, mast_joint='revolute',
                extra=pan).replace(
        '<axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/>\n </joint>',
        '<axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/>'
        '<mimic joint="pan_joint" multiplier="2" offset="0.1"/></joint>', 1)
    desc = load_robot(_write(tmp_path, 'bot.urdf', text))
    assert desc.joints[1].mimic is not None
    walls = [{'name': n, 'type': 'box', 'size_m': s, 'pose': {'xyz': p}, 'material': 'concrete'}
             for n, s, p in (('n', [10, 0.2, 3], [0, 5, 1]), ('s', [10, 0.2, 3], [0, -5, 1]),
                             ('e', [0.2, 10, 3], [5, 0, 1]), ('w', [0.2, 10, 3], [-5, 0, 1]))]
    world = World.from_dict({'frame': 'map', 'objects': walls}, materials=materials)
    res = RobotScanner(desc, 'front_laser', world, materials,
                       {'front_laser': {'noise_enabled': False}},
                       joint_positions={'pan_joint': 0.2}).scan(np.eye(4))
    ang = res.angle_min + np.arange(len(res.ranges)) * res.angle_increment
    half = math.atan2(0.05, 0.45) - math.radians(0.6)   # a ray's width inside the face's edge
    turned = np.abs(ang - 0.5) < half
    assert turned.sum() == 23 and np.all(res.class_id[turned] == SELF_CLASS)
    # bound: the face at 0.45 m in the turned direction, one float32 cast (as the mast test's)
    assert np.allclose(res.ranges[turned], 0.45 / np.cos(ang[turned] - 0.5), atol=1e-4)
    assert not np.any(res.class_id[np.abs(ang - 0.5) > half + math.radians(1.2)] == SELF_CLASS)
