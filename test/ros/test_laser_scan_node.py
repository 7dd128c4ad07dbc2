"""laser_scan node over real rclpy + DDS: REP 117 ranges, array length rule, rays, weather."""

import math
import time

from geometry_msgs.msg import TransformStamped
import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, qos_profile_sensor_data, QoSProfile
from ros_helpers import stamp_ns as _ns, subscribed, trigger_scan
from sensor_msgs.msg import LaserScan
from tf2_msgs.msg import TFMessage
import transforms3d

from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World
from ubot_lidar_sim.ros.laser_scan_node import LaserScanNode
from ubot_lidar_sim_msgs.msg import Environment
from visualization_msgs.msg import MarkerArray

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
IDEAL = {'noise_enabled': False, 'weather': False}
MATERIALS = MaterialTable.load()


def _wall(name, center, size, material='concrete'):
    return {'name': name, 'type': 'box', 'size_m': list(size), 'pose': {'xyz': list(center)},
            'material': material}


@pytest.fixture(scope='module')
def room():
    """Inner faces at x = -3 and 5, y = -2 and 4 (0.2 m thick walls, 3 m high)."""
    return World.from_dict({'frame': 'map', 'objects': [
        {'name': 'floor', 'type': 'plane', 'size_m': [40, 40], 'material': 'concrete'},
        _wall('east', (5.1, 1.0, 1.5), (0.2, 6.4, 3.0)),
        _wall('west', (-3.1, 1.0, 1.5), (0.2, 6.4, 3.0)),
        _wall('north', (1.0, 4.1, 1.5), (8.4, 0.2, 3.0)),
        _wall('south', (1.0, -2.1, 1.5), (8.4, 0.2, 3.0))]})


def _transform(parent, child, xyz, yaw_deg=0.0):
    t = TransformStamped()
    t.header.frame_id, t.child_frame_id = parent, child
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = xyz
    w, x, y, z = transforms3d.euler.euler2quat(0.0, 0.0, math.radians(yaw_deg), 'sxyz')
    t.transform.rotation.x, t.transform.rotation.y = x, y
    t.transform.rotation.z, t.transform.rotation.w = z, w
    return t


class Rig:
    """A laser_scan node, a probe publishing TF (and weather) and subscribing, one executor."""

    def __init__(self, context, world, params, laser_xyz=(0.0, 0.0, 1.0), yaw_deg=0.0,
                 environment=None, rays=False, speed_m_s=None):
        params = {'world_file': 'flat', 'rate_hz': 5.0, **params}
        self.node = LaserScanNode(
            context=context, world=world, materials=MATERIALS,
            parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
        self.probe = rclpy.create_node('probe', context=context)
        static = [_transform('base_link', 'laser', (0.0, 0.0, 0.0))]
        if speed_m_s is None:
            static.append(_transform('map', 'base_link', laser_xyz, yaw_deg))
        else:
            # base_link moves along +x at speed_m_s: x = speed (t - t_ref), sent at 200 Hz.
            self.t_ref_s = self.probe.get_clock().now().nanoseconds * 1e-9
            tf_pub = self.probe.create_publisher(TFMessage, '/tf', 100)

            def send():
                now = self.probe.get_clock().now()
                x = speed_m_s * (now.nanoseconds * 1e-9 - self.t_ref_s)
                t = _transform('map', 'base_link', (x, laser_xyz[1], laser_xyz[2]), yaw_deg)
                t.header.stamp = now.to_msg()
                tf_pub.publish(TFMessage(transforms=[t]))

            self.probe.create_timer(0.005, send)
        self.probe.create_publisher(TFMessage, '/tf_static', LATCHED).publish(
            TFMessage(transforms=static))
        self.env_pub = self.probe.create_publisher(Environment, 'environment', LATCHED)
        if environment is not None:
            self.env_pub.publish(environment)
        self.scans, self.rays, self.want_rays = [], [], rays
        self.probe.create_subscription(LaserScan, 'scan', self.scans.append,
                                       qos_profile_sensor_data)
        if rays:
            self.probe.create_subscription(MarkerArray, 'laser_scan/rays', self.rays.append, 10)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.executor.add_node(self.probe)
        self.spin_until(lambda: self.node.has_subscribers()
                        and (not rays or subscribed(self.node, '/laser_scan/rays'))
                        and self.node.tf_buffer.frames() >= {'map', 'laser'})
        if speed_m_s is not None:  # a history longer than one sweep
            end = time.monotonic() + 0.4
            self.spin_until(lambda: time.monotonic() > end)
        if environment is not None:
            self.spin_until(lambda: self.node.weather.rain_mm_h == environment.rain_rate_mm_h)

    def spin_until(self, done, timeout_s=5.0):
        end = time.monotonic() + timeout_s
        while not done():
            assert time.monotonic() < end, 'timed out'
            self.executor.spin_once(timeout_sec=0.02)

    def scan(self):
        """Trigger one scan now and return the LaserScan that carries it."""
        t0 = self.node.get_clock().now().nanoseconds - 1_000_000_000
        ok, why = trigger_scan(self.node, self.spin_until)
        assert ok, why
        self.spin_until(lambda: self.scans and _ns(self.scans[-1]) >= t0)
        msg = self.scans[-1]
        if self.want_rays:  # the markers of that very sweep (an earlier sweep's may be queued)
            self.spin_until(lambda: any(_ns(r.markers[0]) == _ns(msg) for r in self.rays))
        return msg

    def rays_of(self, msg):
        """Return the ~/rays MarkerArray published with the LaserScan msg."""
        return [r for r in self.rays if _ns(r.markers[0]) == _ns(msg)][-1]

    def close(self):
        self.executor.shutdown()
        self.probe.destroy_node()
        self.node.destroy_node()


def _angles(msg):
    return msg.angle_min + msg.angle_increment * np.arange(len(msg.ranges))


def _room_range(angle_rad, x=(-3.0, 5.0), y=(-2.0, 4.0)):
    """Distance from the origin to the inner walls of the room along angle_rad."""
    c, s = np.cos(angle_rad), np.sin(angle_rad)
    with np.errstate(divide='ignore'):
        tx = np.where(c > 1e-12, x[1] / c, np.where(c < -1e-12, x[0] / c, np.inf))
        ty = np.where(s > 1e-12, y[1] / s, np.where(s < -1e-12, y[0] / s, np.inf))
    return np.minimum(tx, ty)


def test_box_room_gives_the_known_ranges_at_the_known_angles(context, room):
    rig = Rig(context, room, IDEAL, rays=True)
    msg = rig.scan()
    rays = rig.rays_of(msg)
    rig.close()
    assert msg.header.frame_id == 'laser' and len(msg.ranges) == 360
    assert msg.angle_min == 0.0    # rays from 0 deg: 0, 1, ... 359 deg
    # bound: float32 message fields of float64 values: F32_EPS / 2 = 6e-8 rel; default rtol 1e-7
    np.testing.assert_allclose(msg.angle_increment, math.radians(1.0))
    np.testing.assert_allclose(msg.scan_time, 0.2)
    # bound: float32 message field: F32_EPS / 2 = 6e-8 rel < 1e-6
    np.testing.assert_allclose(msg.time_increment, 0.2 / 360, rtol=1e-6)
    ranges = np.asarray(msg.ranges)
    by_deg = dict(zip(np.rint(np.degrees(_angles(msg))).astype(int), ranges))
    # bound: float32 message fields of float64 values: F32_EPS / 2 = 6e-8 rel; default rtol 1e-7
    np.testing.assert_allclose([by_deg[0], by_deg[90], by_deg[180], by_deg[270]],
                               [5.0, 4.0, 3.0, 2.0], atol=1e-3)
    # bound: mm at <= 6 m (noise off), >= 30x the f32 hit bound; the rest TF timing
    np.testing.assert_allclose(by_deg[45], 4.0 * math.sqrt(2.0), atol=1e-3)
    np.testing.assert_allclose(ranges, _room_range(_angles(msg)), atol=2e-3)
    assert len(msg.intensities) == 0     # model geometric: a line trace has no intensity
    hits = {m.ns: len(m.points) // 2 for m in rays.markers}
    assert hits == {'hits': 360, 'misses': 0}
    assert rays.markers[0].header.frame_id == 'map'
    # bound: float32 message fields of float64 values: F32_EPS / 2 = 6e-8 rel; default rtol 1e-7
    np.testing.assert_allclose(rays.markers[0].lifetime.sec, 1)


def test_laser_frame_from_tf_rotates_the_scan(context, room):
    rig = Rig(context, room, IDEAL, yaw_deg=90.0)
    msg = rig.scan()
    rig.close()
    ranges = np.asarray(msg.ranges)
    # Yawed 90 deg, the laser's +x looks along world +y.
    # bound: mm at <= 6 m (noise off), >= 30x the f32 hit bound; the rest TF timing
    np.testing.assert_allclose(ranges, _room_range(_angles(msg) + math.pi / 2), atol=2e-3)


def test_moving_laser_traces_each_ray_from_its_own_interpolated_pose(context, room):
    speed = 2.0
    rig = Rig(context, room, IDEAL, laser_xyz=(-1.0, 0.0, 1.0), speed_m_s=speed, rays=True)
    msg = rig.scan()
    rays = rig.rays_of(msg)
    rig.close()
    ranges = np.asarray(msg.ranges)
    k = np.arange(len(ranges))
    # Ray k fires at stamp + k time_increment from x = speed (t - t_ref) (0.4 m over the sweep).
    t_k = _ns(msg) * 1e-9 + k * msg.time_increment
    x_k = speed * (t_k - rig.t_ref_s)
    expected = _room_range(_angles(msg), x=(-3.0 - x_k, 5.0 - x_k))
    # bound: mm at <= 6 m (noise off), >= 30x the f32 hit bound; the rest TF timing
    np.testing.assert_allclose(ranges, expected, atol=3e-3)
    starts = np.array([[p.x, p.y] for p in rays.markers[0].points[0::2]])
    np.testing.assert_allclose(starts[:, 0], x_k, atol=3e-3)
    assert starts[-1, 0] - starts[0, 0] > 0.35


@pytest.mark.parametrize('fov_deg, res_deg, n', [
    (360.0, 1.0, 360), (270.0, 0.25, 1080), (180.0, 0.5, 360), (90.0, 0.7, 129),
    (360.0, 0.33, 1091), (0.01, 1.0, 1)])
def test_array_length_rule_holds(context, room, fov_deg, res_deg, n):
    # ceil(fov / resolution) rays, angle_increment = resolution (docs/presets.md).
    rig = Rig(context, room, {**IDEAL, 'fov_deg': fov_deg, 'resolution_deg': res_deg})
    msg = rig.scan()
    rig.close()
    assert len(msg.ranges) == n and len(msg.intensities) == 0
    if n > 1:
        assert round((msg.angle_max - msg.angle_min) / msg.angle_increment) + 1 == n
    if fov_deg >= 360.0:
        assert msg.angle_min == 0.0 and (n - 1) * msg.angle_increment < 2.0 * math.pi  # no repeat
        # bound: float32 fields of float64 values: F32_EPS / 2 = 6e-8 rel < default rtol 1e-7
        np.testing.assert_allclose(msg.angle_increment, math.radians(res_deg))
    elif n > 1:
        # bound: float32 angles symmetric by construction: exact negation
        np.testing.assert_allclose(msg.angle_min, -msg.angle_max, atol=1e-12)  # centred on +x
        # bound: float32 fields of float64 values: F32_EPS / 2 = 6e-8 rel < default rtol 1e-7
        np.testing.assert_allclose(msg.angle_increment, math.radians(res_deg))
    else:
        assert msg.angle_min == msg.angle_max
        # bound: float32 angle_min of one ray: F32_EPS / 2 x pi << 1e-4
        np.testing.assert_allclose(msg.angle_min, 0.0, atol=1e-4)  # the one ray looks along +x


def test_open_space_gives_plus_inf_and_too_near_gives_minus_inf(context):
    world = World.from_dict({'frame': 'map', 'objects': [
        _wall('post', (0.06, 0.0, 1.0), (0.04, 0.04, 2.0)),       # faces at 0.04 m
        _wall('wall', (-6.1, 0.0, 1.0), (0.2, 1.0, 2.0))]})       # behind, 6 m away
    rig = Rig(context, world, {**IDEAL, 'min_range_m': 0.1, 'max_range_m': 30.0}, rays=True)
    msg = rig.scan()
    rays = rig.rays_of(msg)
    rig.close()
    ranges = np.asarray(msg.ranges)
    by_deg = dict(zip(np.rint(np.degrees(_angles(msg))).astype(int), ranges))
    assert by_deg[0] == -math.inf
    # bound: mm at <= 6 m (noise off), >= 30x the f32 hit bound; the rest TF timing
    np.testing.assert_allclose(by_deg[180], 6.0, atol=1e-3)
    assert by_deg[90] == math.inf and by_deg[270] == math.inf
    finite = np.isfinite(ranges)
    assert np.all((ranges[finite] >= msg.range_min) & (ranges[finite] <= msg.range_max))
    n_minus = int(np.count_nonzero(ranges == -math.inf))
    counts = {m.ns: len(m.points) // 2 for m in rays.markers}
    assert counts == {'hits': int(finite.sum()), 'misses': 360 - int(finite.sum()) - n_minus}
    red = rays.markers[1]
    ends = np.array([[p.x, p.y] for p in red.points[1::2]])
    # bound: float32 ray ends at 30 m: half a spacing 9.5e-7 < 1e-6
    np.testing.assert_allclose(np.hypot(ends[:, 0], ends[:, 1]), 30.0, atol=1e-6)


def test_rain_reduces_returns_from_a_dark_far_wall(context):
    d = 58.0
    world = World.from_dict({'frame': 'map', 'objects': [
        _wall('dark_wall', (d + 0.1, 0.0, 1.0), (0.2, 80.0, 4.0), material='asphalt')]})
    # R10 60 m (lidar_3d's, not the laser's 18 m): a far wall whose rain loss is measurable.
    params = {'fov_deg': 20.0, 'resolution_deg': 0.25, 'max_range_m': 150.0, 'seed': 3,
              'model': 'physical', 'range_at_10pct_m': 60.0}
    counts = {}
    for rain in (0.0, 25.0):
        env = Environment(rain_rate_mm_h=rain, visibility_m=math.inf, surface_wetness=0.0)
        env.header.frame_id = 'map'
        rig = Rig(context, world, params, environment=env)
        msgs = [rig.scan() for _ in range(3)]
        rig.close()
        # Returns from the wall only: rain also adds clutter echoes from drops near the sensor.
        counts[rain] = sum(int(np.count_nonzero(np.asarray(m.ranges) > d - 1.0)
                               - np.count_nonzero(np.asarray(m.ranges) == math.inf))
                           for m in msgs)
    # Hand value for the centre ray (asphalt rho 0.12, k 0, R10 60 m, S10 100, ambient 20,
    # threshold 85.96): clear S = 100 (0.12 / 0.1) (60 / 58)^2 = 128.4 counts, p = 0.9998;
    # rain 25 mm/h (9.30 dB/km, two-way over 58 m: 0.780) S = 100.2, p = 0.903. Off-centre rays
    # (up to 58.9 m) lose a little more; no drop clutter steals a return (docs/physics-weather.md).
    assert counts[0.0] >= 0.95 * 3 * 81
    assert 0.80 * counts[0.0] <= counts[25.0] <= 0.95 * counts[0.0]


def test_disabled_scanner_publishes_nothing_and_says_why(context, room):
    rig = Rig(context, room, {**IDEAL, 'enabled': False})
    ok, why = trigger_scan(rig.node, rig.spin_until)
    rig.executor.spin_once(timeout_sec=0.1)
    rig.close()
    assert not ok and why.startswith('disabled')
    assert rig.scans == []
