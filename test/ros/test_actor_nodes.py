"""Actors driven by /tf (issue 28): a lidar_3d node draws them where /tf puts them, per column."""

import math
import os
import time

import numpy as np
import pytest
import rclpy
from rclpy.clock import Clock as RosClock, ClockType
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from ros_helpers import SensorRig, static_transform
from sensor_msgs.msg import PointCloud2
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.core.world.world import World
from ubot_lidar_sim.ros.conversions import pointcloud2_to_array, stamp_to_s
from ubot_lidar_sim.ros.lidar_3d_node import Lidar3DNode

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
SENSOR_Z = 1.0
CART_X, CART_V = 6.0, 20.0          # the cart's centre line x = 6 m, driving +y at 20 m/s
# A 0.5 x 4 x 2 m cart (its face towards the sensor at x = 5.75) and a ghost whose frame
# nobody publishes.
WORLD = {'frame': 'map', 'objects': [
    {'name': 'ground', 'type': 'plane', 'size_m': [80, 80], 'material': 'grass'}],
    'actors': [
        {'name': 'cart', 'type': 'box', 'size_m': [0.5, 4.0, 2.0], 'material': 'vehicle',
         'class_id': 40, 'motion': {'frame': 'cart'}},
        {'name': 'ghost', 'type': 'sphere', 'radius_m': 1.0, 'motion': {'frame': 'ghost'}}]}
PARAMS = {'channels': 8, 'horizontal_samples': 720, 'sub_rays': 1, 'max_range_m': 30.0,
          'noise_enabled': False, 'rate_hz': 10.0, 'world_file': 'flat',
          'vertical_fov_down_deg': 10.0, 'vertical_fov_up_deg': 10.0}


class Rig(SensorRig):
    """A lidar_3d node at (0, 0, 1) and a probe driving the cart's frame on /tf at 100 Hz."""

    def __init__(self, cart_xyz=None):
        """Drive the cart by cart_xyz(t) -> (x, y, z) or None (no /tf of it); default cart_y."""
        self.cart_xyz = cart_xyz or (lambda t: (CART_X, self.cart_y(t), 1.0))
        self.sent = []                  # (ROS time s, x, y, z) of each cart transform sent
        super().__init__(Lidar3DNode, World.from_dict(WORLD), PARAMS, domain_id=140)
        self.t0_s = self.probe.get_clock().now().nanoseconds * 1e-9
        self.probe.create_publisher(TFMessage, '/tf_static', LATCHED).publish(TFMessage(
            transforms=[static_transform('base_link', 'lidar_3d', (0.0, 0.0, SENSOR_Z),
                                         self.probe.get_clock().now().to_msg())]))
        self.tf_pub = self.probe.create_publisher(TFMessage, '/tf', 100)
        self.probe.create_timer(0.01, self._publish_tf,
                                clock=RosClock(clock_type=ClockType.STEADY_TIME))
        self._publish_tf()
        self.clouds = self.subscribe(PointCloud2, 'points')

    def cart_y(self, t_s):
        """Return the cart's y (m) at ROS time t_s: it crosses y = 0 every 0.5 s."""
        return CART_V * ((t_s - self.t0_s) % 0.5) - 5.0

    def _publish_tf(self):
        now = self.probe.get_clock().now()
        t = now.nanoseconds * 1e-9
        transforms = [static_transform('map', 'base_link', (0.0, 0.0, 0.0), now.to_msg())]
        cart = self.cart_xyz(t)
        if cart is not None:
            transforms.append(static_transform('map', 'cart', cart, now.to_msg()))
            self.sent.append((t, *cart))
        self.tf_pub.publish(TFMessage(transforms=transforms))

    def clouds_after(self, n, timeout_s=10.0):
        start = len(self.clouds)
        assert self.spin_until(lambda: len(self.clouds) >= start + n, timeout_s), (
            f'no cloud: {self.node.stats.counts}')
        return self.clouds[start:start + n]


@pytest.fixture
def rig():
    r = Rig()
    yield r
    r.close()


def _cart_points(msg):
    """Return the cart's points of a cloud and their times (ROS s)."""
    pts = pointcloud2_to_array(msg)
    cart = pts[pts['instance_id'] == 1]
    return cart, stamp_to_s(msg.header.stamp) + cart['time'].astype(np.float64)


def test_an_actor_driven_by_tf_is_drawn_where_tf_puts_it_at_each_points_time(rig):
    seen = 0
    for msg in rig.clouds_after(16):
        pts = pointcloud2_to_array(msg)
        cart = pts[pts['instance_id'] == 1]
        assert not np.any(pts['instance_id'] == 2)             # the ghost is not drawn
        if len(cart) == 0:
            continue                                            # the cart was out of view
        assert np.all(cart['class_id'] == 40)
        t = stamp_to_s(msg.header.stamp) + cart['time'].astype(np.float64)
        # Away from the jump back to y = -5 (/tf interpolates across it, as for any frame).
        keep = np.abs((t - rig.t0_s) % 0.5 - 0.25) < 0.23
        cart, t = cart[keep], t[keep]
        if len(cart) < 20:
            continue                                            # seen across the jump only
        # Relative to the cart where /tf had it when that point's column fired. The sweep
        # sees the cart for about 15 ms, in which it moves 0.3 m: one pose for the sweep
        # (or for a column block) would put the points off it.
        # bound: 1 cm: float32 points at 6 m (1 um) and the /tf poses interpolated between
        # messages 10 ms apart of an exactly linear motion (exact but for the float stamps)
        y_rel = cart['y'].astype(np.float64) - rig.cart_y(t)
        assert np.all(np.abs(cart['x'] - CART_X) <= 0.25 + 0.01)
        assert np.all(np.abs(y_rel) <= 2.0 + 0.01)
        face = np.abs(y_rel) < 2.0 - 0.01                      # off the side faces
        assert np.all(np.abs(cart['x'][face] - (CART_X - 0.25)) < 0.01)
        # Along the cart, not a spot; a sweep that met the cart near its jump sees a part of it.
        seen += face.sum() > 10 and np.ptp(y_rel) > 1.0
    assert seen >= 3
    warnings = rig.node.actor_frames.warnings()
    assert len(warnings) == 1 and "actor 'ghost' not drawn: frame ghost" in warnings[0]


def test_two_robots_in_one_graph_each_see_the_other_where_tf_puts_it():
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=140 + (os.getpid() + 45) % 90)
    probe = rclpy.create_node('probe', context=ctx)
    now = probe.get_clock().now().to_msg()
    probe.create_publisher(TFMessage, '/tf_static', LATCHED).publish(TFMessage(transforms=[
        static_transform(f'robot{k}/base_link', f'robot{k}/lidar_3d', (0.0, 0.0, SENSOR_Z), now)
        for k in (1, 2)]))
    tf_pub = probe.create_publisher(TFMessage, '/tf', 100)
    # robot1 stands at the origin, robot2 6 m ahead of it on +x.
    where = {1: (0.0, 0.0, 0.0), 2: (6.0, 0.0, 0.0)}
    probe.create_timer(0.01, lambda: tf_pub.publish(TFMessage(transforms=[
        static_transform('map', f'robot{k}/base_link', where[k], probe.get_clock().now().to_msg())
        for k in (1, 2)])), clock=RosClock(clock_type=ClockType.STEADY_TIME))
    world = World.from_dict({'frame': 'map', 'objects': [
        {'name': 'ground', 'type': 'plane', 'size_m': [80, 80], 'material': 'grass'}]})
    clouds = {1: [], 2: []}
    nodes = []
    for k, other in ((1, 2), (2, 1)):
        probe.create_subscription(PointCloud2, f'/robot{k}/points', clouds[k].append, 10)
        nodes.append(Lidar3DNode(context=ctx, world=world, namespace=f'robot{k}',
                                 parameter_overrides=[Parameter(n, value=v) for n, v in {
                                     **PARAMS, 'frame_id': f'robot{k}/lidar_3d',
                                     'fleet_frames': [f'robot{other}/base_link']}.items()]))
    executor = SingleThreadedExecutor(context=ctx)
    for n in [probe] + nodes:
        executor.add_node(n)
    try:
        end = time.monotonic() + 10.0
        while min(len(c) for c in clouds.values()) < 2 and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.02)
        for k, sign in ((1, 1.0), (2, -1.0)):
            assert len(clouds[k]) >= 2, f'robot{k}: no cloud'
            pts = pointcloud2_to_array(clouds[k][-1])
            body = pts[pts['instance_id'] == 1]
            assert len(body) > 10 and np.all(body['class_id'] == 10)      # vehicle: car
            # The other's 0.8 x 0.6 x 0.5 m body stands on its frame 6 m away: its near face
            # at x = +-5.6 m in this robot's sensor frame, 0.5 to 1 m below the sensor.
            # bound: 1 cm, float32 points at 6 m (1 um); both robots stand still
            face = np.abs(body['y']) < 0.3 - 0.01
            assert np.all(np.abs(sign * body['x'][face] - 5.6) < 0.01)
            assert np.all((body['z'] > -SENSOR_Z - 0.01) & (body['z'] < 0.5 - SENSOR_Z + 0.01))
    finally:
        executor.shutdown()
        for n in nodes + [probe]:
            n.destroy_node()
        rclpy.shutdown(context=ctx)


def test_an_actor_that_jumps_1_km_between_two_tf_messages_is_drawn_where_tf_puts_it():
    # The cart stands still 6 m ahead for 0.5 s, then 1 km further for 0.5 s, and so on: each
    # switch is a 1 km jump between two /tf messages 10 ms apart.
    start_s = time.time()           # the nodes' ROS clock is the system clock
    rig = Rig(lambda t: (CART_X + 1000.0 * ((t - start_s) % 1.0 >= 0.5), 0.0, 1.0))
    try:
        near = far = 0
        for msg in rig.clouds_after(20, timeout_s=15.0):
            cart, t = _cart_points(msg)
            if len(cart) == 0:
                far += 1                # 1 km away, beyond max_range_m: nothing to draw
                continue
            sent = np.array(rig.sent)
            # Where /tf puts the cart: the transforms interpolated, across a jump as anywhere
            # (no gap: the messages are 10 ms apart). The node looks the cart up at each
            # column's time and interpolates between columns for the lasers' firing offsets,
            # so a point's cart lies between /tf's poses one column period either side.
            dt = 1.0 / (PARAMS['rate_hz'] * PARAMS['horizontal_samples'])
            x_tf = np.stack([np.interp(t + k * dt, sent[:, 0], sent[:, 1]) for k in (-1, 0, 1)])
            # bound: 1 cm, float32 points at 6 m (1 um) and /tf poses interpolated between
            # messages of a cart that stands still but for the jumps (exact there)
            face = np.abs(cart['y']) < 2.0 - 0.01
            x = cart['x'][face] + 0.25
            assert np.all((x > x_tf.min(0)[face] - 0.01) & (x < x_tf.max(0)[face] + 0.01))
            # Away from the jumps (most points), exactly where /tf puts it at its time.
            still = np.ptp(x_tf, axis=0)[face] == 0.0
            assert np.all(np.abs(x[still] - x_tf[1][face][still]) < 0.01)
            near += still.sum() > 10
        assert near >= 3 and far >= 3
        # A jump is not a gap: only the ghost (whose frame nobody publishes) is not drawn.
        assert [w.split(':')[0] for w in rig.node.actor_frames.warnings()] == [
            "actor 'ghost' not drawn"]
    finally:
        rig.close()


def test_an_actor_whose_tf_stops_past_the_stale_limit_is_not_drawn_and_is_back_with_its_tf():
    # Once the node publishes, the cart's /tf stops for 1.5 s; the sensor's own /tf goes on.
    pause = [math.inf, math.inf]        # ROS times s (the system clock)
    rig = Rig(lambda t: None if pause[0] <= t < pause[1] else (CART_X, 0.0, 1.0))
    try:
        rig.clouds_after(1, timeout_s=30.0)         # a cold kernel cache may compile first
        pause[:] = [time.time() + 0.5, time.time() + 2.0]
        stamps, drawn, warned = [], [], False
        while not stamps or stamps[-1] < pause[1] + 1.0:
            msg = rig.clouds_after(1, timeout_s=5.0)[0]
            stamps.append(stamp_to_s(msg.header.stamp))
            drawn.append(len(_cart_points(msg)[0]) > 10)
            warned |= any("actor 'cart' not drawn" in w for w in rig.node.actor_frames.warnings())
        stamps, drawn = np.array(stamps), np.array(drawn)
        # A sweep ending more than TF_MAX_AGE_S (0.5 s) after the cart's newest transform
        # does not draw it; one starting 0.2 s after its /tf is back draws it again.
        stale = (stamps > pause[0] + 0.5 + 0.1) & (stamps < pause[1])
        back = stamps > pause[1] + 0.2
        assert stale.sum() >= 3 and not drawn[stale].any()
        assert back.sum() >= 3 and drawn[back].all()
        assert warned and not any(w.startswith("actor 'cart'")
                                  for w in rig.node.actor_frames.warnings())
    finally:
        rig.close()
