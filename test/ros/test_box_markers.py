"""The lidar_3d node's ~/boxes markers: one CUBE per actor at its pose at the stamp (issue 43)."""

from builtin_interfaces.msg import Time
import numpy as np
from ubot_lidar_sim.core.world.world import World
from ubot_lidar_sim.ros.box_markers import box_markers, sweep_boxes
from visualization_msgs.msg import Marker

WORLD = {'objects': [], 'actors': [
    {'name': 'car', 'type': 'box', 'size_m': [4, 2, 1.5], 'pose': {'xyz': [0, 0, 0.75]},
     'motion': {'pose': [8, -1, 0, 0, 0, 90], 'twist': [0, 0.5, 0, 0, 0, 0]}},
    {'name': 'robot2', 'type': 'box', 'size_m': [1, 1, 1], 'motion': {'frame': 'robot2'}}]}


def test_a_cube_per_actor_posed_at_the_stamp_and_a_frame_actor_from_its_tf_pose():
    world = World.from_dict(WORLD)
    at_tf = np.eye(4)
    at_tf[:3, 3] = [3, 4, 0]
    poses = {'car': world.actors[0].trajectory, 'robot2': lambda t: np.repeat(
        at_tf[None], len(t), axis=0)}
    items, boxes = sweep_boxes(world, poses, 0.2, np.eye(4))
    msg = box_markers(items, boxes, 'lidar', Time(sec=1), 0.2)
    cubes = [m for m in msg.markers if m.type == Marker.CUBE]
    assert [(m.ns, m.id) for m in cubes] == [('boxes', 1), ('boxes', 2)]
    car, robot = cubes
    # The car at 0.2 s: 0.1 m along +y from (8, -1), centre 0.75 m up, turned 90 deg about z.
    got = [car.pose.position.x, car.pose.position.y, car.pose.position.z]
    np.testing.assert_allclose(got, [8.0, -0.9, 0.75], atol=1e-9)  # bound: float64 products
    q = [car.pose.orientation.z, car.pose.orientation.w]
    np.testing.assert_allclose(q, [np.sqrt(0.5)] * 2, atol=1e-9)  # bound: float64 rounding
    assert (car.scale.x, car.scale.y, car.scale.z) == (4.0, 2.0, 1.5)
    assert (robot.pose.position.x, robot.pose.position.y) == (3.0, 4.0)
    assert [m.text for m in msg.markers if m.ns == 'labels'] == ['car', 'robot2']
