"""
The lidar_3d node's ~/boxes markers: one CUBE per actor at its pose at the stamp (issue 43).

visualization_msgs/MarkerArray: vision_msgs (Detection3DArray) is not in this environment.
"""

import numpy as np
import pytest
from rclpy.clock import Clock as RosClock, ClockType
from ros_helpers import SensorRig, stamp_ns, static_transform
from sensor_msgs.msg import PointCloud2
from tf2_msgs.msg import TFMessage
from ubot_lidar_sim.core.world.world import World
from ubot_lidar_sim.output.boxes import actor_boxes
from ubot_lidar_sim.ros.box_markers import box_markers
from ubot_lidar_sim.ros.conversions import stamp_to_s
from ubot_lidar_sim.ros.lidar_3d_node import Lidar3DNode
from visualization_msgs.msg import Marker, MarkerArray

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
    items, boxes = actor_boxes(world, poses, 0.2, np.eye(4))
    msg = box_markers(items, boxes, 'lidar', 1_000_000_000, 0.2)
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


# --- over DDS: a lidar_3d node and a probe -------------------------------------------------

SENSOR_Z = 1.0                  # the rig latches map -> lidar_3d 1 m up, unrotated
CART_X0, CART_V = 6.0, 0.5      # the cart's /tf frame: x = 6 + 0.5 (t - t0) m, y = 0, z = 1
NODE_WORLD = {'frame': 'map', 'objects': [
    {'name': 'ground', 'type': 'plane', 'size_m': [80, 80], 'material': 'grass'}],
    'actors': [
        {'name': 'cart', 'type': 'box', 'size_m': [0.5, 4.0, 2.0], 'material': 'vehicle',
         'motion': {'frame': 'cart'}},
        {'name': 'post', 'type': 'box', 'size_m': [1.0, 1.0, 2.0],
         'motion': {'pose': [-5, 3, 1, 0, 0, 30], 'twist': [0, 0, 0, 0, 0, 0]}}]}
NODE_PARAMS = {'channels': 8, 'horizontal_samples': 360, 'sub_rays': 1, 'max_range_m': 30.0,
               'noise_enabled': False, 'rate_hz': 10.0, 'world_file': 'flat'}


class BoxRig(SensorRig):
    """A lidar_3d node at (0, 0, 1) in map and a probe driving the cart's frame at 100 Hz."""

    def __init__(self):
        """Start the node, the cart's /tf and the subscriptions to ~/boxes and points."""
        super().__init__(Lidar3DNode, World.from_dict(NODE_WORLD), NODE_PARAMS,
                         frame='lidar_3d', domain_id=60)
        self.t0_s = self.probe.get_clock().now().nanoseconds * 1e-9
        self.tf_pub = self.probe.create_publisher(TFMessage, '/tf', 100)
        self.probe.create_timer(0.01, self._publish_tf,
                                clock=RosClock(clock_type=ClockType.STEADY_TIME))
        self._publish_tf()
        self.boxes = self.subscribe(MarkerArray, '/lidar_3d/boxes')
        self.clouds = self.subscribe(PointCloud2, 'points')

    def cart_x(self, t_s):
        """Return the cart's x (m) at ROS time t_s."""
        return CART_X0 + CART_V * (t_s - self.t0_s)

    def _publish_tf(self):
        now = self.probe.get_clock().now()
        self.tf_pub.publish(TFMessage(transforms=[static_transform(
            'map', 'cart', (self.cart_x(now.nanoseconds * 1e-9), 0.0, 1.0), now.to_msg())]))


@pytest.fixture
def box_rig():
    r = BoxRig()
    yield r
    r.close()


def test_the_node_publishes_a_box_per_actor_at_its_pose_at_each_sweeps_stamp(box_rig):
    # The cube of each actor, in the sensor frame, where the actor is at the cloud's stamp:
    # the cart where /tf has it then, the post at its fixed pose (30 deg about z).
    assert box_rig.spin_until(lambda: len(box_rig.boxes) >= 4, 30.0), 'no ~/boxes'
    wanted = {stamp_ns(m.markers[0]) for m in box_rig.boxes[1:4]}
    # Each sweep's cloud and boxes leave together; the probe may take either first.
    assert box_rig.spin_until(lambda: wanted <= {stamp_ns(c) for c in box_rig.clouds}, 5.0), \
        "a ~/boxes stamp that is no cloud's"
    for msg in box_rig.boxes[1:4]:          # the first sweep's /tf may still be arriving
        cubes = [m for m in msg.markers if m.type == Marker.CUBE]
        assert sorted((m.ns, m.id) for m in cubes) == [('boxes', 1), ('boxes', 2)]
        stamp = cubes[0].header.stamp
        assert all(m.header.stamp == stamp and m.header.frame_id == 'lidar_3d' for m in cubes)
        cart, post = sorted(cubes, key=lambda m: m.id)
        t = stamp_to_s(stamp)
        got = [cart.pose.position.x, cart.pose.position.y, cart.pose.position.z]
        # bound: 1e-6 m: /tf interpolates an exactly linear motion between messages 10 ms
        # apart; float64 ROS times near 1.8e9 s are 2.4e-7 s apart (x 0.5 m/s)
        np.testing.assert_allclose(got, [box_rig.cart_x(t), 0.0, 1.0 - SENSOR_Z], atol=1e-6)
        assert (cart.scale.x, cart.scale.y, cart.scale.z) == (0.5, 4.0, 2.0)
        got = [post.pose.position.x, post.pose.position.y, post.pose.position.z,
               post.pose.orientation.z, post.pose.orientation.w]
        want = [-5.0, 3.0, 1.0 - SENSOR_Z, np.sin(np.radians(15)), np.cos(np.radians(15))]
        # bound: 1e-9: float64 products of exact inputs (the post does not move)
        np.testing.assert_allclose(got, want, atol=1e-9)
