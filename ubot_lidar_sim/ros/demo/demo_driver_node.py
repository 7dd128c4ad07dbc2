"""
Demo driver: drives base_link around a loop and plays a weather scenario.

Publishes ``/tf`` (world_frame -> odom -> base_link on a circle of ``loop_radius_m`` around
``loop_center_m`` at ``speed_m_s``), one ``/tf_static`` message with base_link -> the sensor
frames (depth 1, transient_local, as tf2 static broadcasters do), ``environment`` (a scenario
clear -> rain ramping to ``rain_max_mm_h`` -> fog down to ``fog_min_visibility_m`` -> smoke
near the path, repeating) and ``~/phase`` (std_msgs/String, the current phase name).
"""

import math

from geometry_msgs.msg import Point, TransformStamped
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor
import rclpy
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
import transforms3d

from ubot_lidar_sim.ros.run import run_node, tolerate_destroyed
from ubot_lidar_sim_msgs.msg import Environment, SmokeVolume

PHASES = ('clear', 'rain', 'fog', 'smoke')
# Carbonneau rain law (physics-notes): the 550 nm extinction of rain alone, so the visibility
# sent with rain contains exactly the rain part and the sensors see no extra fog.
_RAIN_DB_PER_KM = 1.076
_RAIN_EXPONENT = 0.67


def loop_pose(t_s, radius_m, speed_m_s, center_xy=(0.0, 0.0)):
    """Return (x_m, y_m, yaw_rad) on the counter-clockwise loop at time t_s, heading tangent."""
    phi = speed_m_s * t_s / radius_m - math.pi / 2.0
    x = center_xy[0] + radius_m * math.cos(phi)
    y = center_xy[1] + radius_m * math.sin(phi)
    return x, y, phi + math.pi / 2.0


def rain_visibility_m(rain_mm_h, haze_visibility_m=math.inf):
    """
    Return the 2 % contrast visibility (m) of rain_mm_h plus a haze (inf when dry and clear).

    The extinctions add: 3.912 / V = alpha_rain + 3.912 / haze_visibility_m. A little haze
    keeps the fog part the sensors derive (visibility minus rain) from rounding below zero.
    """
    alpha_per_m = 3.912 / haze_visibility_m
    if rain_mm_h > 0.0:
        alpha_per_m += _RAIN_DB_PER_KM * rain_mm_h ** _RAIN_EXPONENT / 4.343 / 1000.0
    return 3.912 / alpha_per_m if alpha_per_m > 0.0 else math.inf


def scenario_at(t_s, durations_s, rain_max_mm_h, fog_min_visibility_m, fog_start_m=2000.0,
                rain_haze_visibility_m=20000.0):
    """
    Return (phase, rain_mm_h, visibility_m, fraction) of the repeating scenario at t_s.

    durations_s: 4 phase lengths, s (clear, rain, fog, smoke); fraction is 0-1 within the phase.
    Rain ramps linearly 0 -> rain_max_mm_h; fog visibility falls geometrically from fog_start_m
    to fog_min_visibility_m, reaching the minimum half way and holding it; the rain comes
    with a light haze of rain_haze_visibility_m.
    """
    cycle = sum(durations_s)
    t = t_s % cycle
    for phase, length in zip(PHASES, durations_s):
        if t < length or phase == PHASES[-1]:
            break
        t -= length
    frac = min(max(t / length, 0.0), 1.0) if length > 0 else 1.0
    rain = 0.0
    vis = math.inf
    if phase == 'rain':
        rain = rain_max_mm_h * min(1.0, frac / 0.75)
        vis = rain_visibility_m(rain, rain_haze_visibility_m)
    elif phase == 'fog':
        k = min(1.0, frac / 0.5)
        vis = fog_start_m * (fog_min_visibility_m / fog_start_m) ** k
    return phase, rain, vis, frac


def _descriptor(text, lo=None, hi=None, read_only=False):
    desc = ParameterDescriptor(description=text, read_only=read_only)
    if lo is not None:
        desc.floating_point_range = [FloatingPointRange(from_value=lo, to_value=hi, step=0.0)]
    return desc


class DemoDriverNode(Node):
    """Moves the robot along a loop and publishes the weather scenario of the demo."""

    def __init__(self, **kwargs):
        super().__init__('demo_driver', **kwargs)
        p = self._declare_parameters()
        self._p = p
        self._t0_ns = None
        self._phase = None
        self._tf_pub = self.create_publisher(TFMessage, '/tf', QoSProfile(depth=100))
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self._static_pub = self.create_publisher(TFMessage, '/tf_static', latched)
        self._env_pub = self.create_publisher(Environment, 'environment', latched)
        self._phase_pub = self.create_publisher(String, '~/phase', latched)
        self._static_sent = False
        self.create_timer(1.0 / p['tf_rate_hz'], self._on_tf_timer)
        self.create_timer(1.0 / p['environment_rate_hz'], self._on_env_timer)

    def _declare_parameters(self):
        specs = {
            'world_frame': ('map', 'World (ground-truth) frame, parent of odom.', None),
            'odom_frame': ('odom', 'Odometry frame.', None),
            'base_frame': ('base_link', 'Vehicle base frame.', None),
            'lidar_frame': ('lidar_3d', 'Frame of the 3D LiDAR.', None),
            'laser_frame': ('laser', 'Frame of the 2D laser scanner.', None),
            'speed_m_s': (2.0, 'Speed along the loop, m/s.', (0.0, 20.0)),
            'loop_radius_m': (12.0, 'Radius of the loop, m.', (0.5, 1000.0)),
            'loop_center_m': ([0.0, 0.0], 'Centre of the loop in world_frame, m (x, y).', None),
            'base_height_m': (0.4, 'Height of base_link above z = 0 of the world, m.',
                              (-100.0, 100.0)),
            'lidar_pose': ([0.0, 0.0, 1.2, 0.0, 0.0, 0.0],
                           'base_link -> lidar_frame: x y z (m) roll pitch yaw (deg).', None),
            'laser_pose': ([0.3, 0.0, 0.3, 0.0, 0.0, 0.0],
                           'base_link -> laser_frame: x y z (m) roll pitch yaw (deg).', None),
            'tf_rate_hz': (50.0, 'Rate of /tf, Hz.', (1.0, 1000.0)),
            'environment_rate_hz': (5.0, 'Rate of environment updates, Hz.', (0.1, 100.0)),
            'rain_haze_visibility_m': (20000.0, 'Visibility of the haze that comes with the '
                                       'rain, m (the rain adds its own extinction).',
                                       (1.0, 1.0e9)),
            'phase_durations_s': ([5.0, 5.0, 5.0, 5.0],
                                  'Durations of the clear, rain, fog, smoke phases, s.', None),
            'rain_max_mm_h': (25.0, 'Rain rate reached in the rain phase, mm/h.', (0.0, 500.0)),
            'fog_min_visibility_m': (50.0, 'Visibility reached in the fog phase, m.',
                                     (1.0, 1.0e6)),
            'smoke_radius_m': (2.0, 'Radius of each smoke puff, m.', (0.01, 100.0)),
            'smoke_density': (0.6, 'Density of the smoke puffs, 0-1.', (0.0, 1.0)),
        }
        values = {}
        for name, (default, text, rng) in specs.items():
            lo, hi = rng if rng else (None, None)
            read_only = name not in ('speed_m_s',)
            self.declare_parameter(name, default, _descriptor(text, lo, hi, read_only))
            values[name] = self.get_parameter(name).value
        if len(values['phase_durations_s']) != 4 or min(values['phase_durations_s']) < 0.0:
            raise ValueError('phase_durations_s: got %r, allowed 4 values >= 0'
                             % (list(values['phase_durations_s']),))
        for key in ('lidar_pose', 'laser_pose'):
            if len(values[key]) != 6:
                raise ValueError(f'{key}: got {list(values[key])!r}, allowed 6 values')
        return values

    def _elapsed_s(self):
        """Seconds since the first tick of a started clock, None while the clock is at zero."""
        now = self.get_clock().now().nanoseconds
        if now == 0:
            return None, now
        if self._t0_ns is None:
            self._t0_ns = now
        return (now - self._t0_ns) * 1e-9, now

    def _transform(self, stamp, parent, child, xyz, quat_wxyz):
        t = TransformStamped()
        t.header.stamp = stamp
        t.header.frame_id = parent
        t.child_frame_id = child
        t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = (
            float(v) for v in xyz)
        q = t.transform.rotation
        q.w, q.x, q.y, q.z = (float(v) for v in quat_wxyz)
        return t

    def _send_static(self, stamp):
        p = self._p
        transforms = []
        for key, frame in (('lidar_pose', p['lidar_frame']), ('laser_pose', p['laser_frame'])):
            x, y, z, r, pi, ya = p[key]
            quat = transforms3d.euler.euler2quat(*(math.radians(a) for a in (r, pi, ya)), 'sxyz')
            transforms.append(self._transform(stamp, p['base_frame'], frame, (x, y, z), quat))
        self._static_pub.publish(TFMessage(transforms=transforms))
        self._static_sent = True

    @tolerate_destroyed
    def _on_tf_timer(self):
        t_s, now_ns = self._elapsed_s()
        if t_s is None:
            return
        p = self._p
        stamp = rclpy.time.Time(nanoseconds=now_ns).to_msg()
        if not self._static_sent:
            self._send_static(stamp)
        speed = self.get_parameter('speed_m_s').value
        x, y, yaw = loop_pose(t_s, p['loop_radius_m'], speed, p['loop_center_m'])
        msg = TFMessage(transforms=[
            self._transform(stamp, p['world_frame'], p['odom_frame'], (0, 0, 0), (1, 0, 0, 0)),
            self._transform(stamp, p['odom_frame'], p['base_frame'], (x, y, p['base_height_m']),
                            (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))),
        ])
        self._tf_pub.publish(msg)

    @tolerate_destroyed
    def _on_env_timer(self):
        t_s, now_ns = self._elapsed_s()
        if t_s is None:
            return
        p = self._p
        phase, rain, vis, frac = scenario_at(
            t_s, p['phase_durations_s'], p['rain_max_mm_h'], p['fog_min_visibility_m'],
            rain_haze_visibility_m=p['rain_haze_visibility_m'])
        env = Environment()
        env.header.stamp = rclpy.time.Time(nanoseconds=now_ns).to_msg()
        env.header.frame_id = p['world_frame']
        env.rain_rate_mm_h = float(rain)
        env.visibility_m = float(vis)
        env.surface_wetness = -1.0
        env.puddle_depth_m = 0.0
        if phase == 'smoke':
            env.smoke = self._smoke_near_path(t_s - frac * p['phase_durations_s'][3])
        self._env_pub.publish(env)
        if phase != self._phase:
            self._phase = phase
            self._phase_pub.publish(String(data=phase))
            self.get_logger().info(f'weather phase: {phase}')

    def _smoke_near_path(self, start_s):
        """
        Puffs 1 m above ground placed along the loop ahead of where the smoke phase began.

        Fixed for the whole phase, so the robot drives up to and through them: (metres ahead
        along the loop, metres outward from it) = (6, 0), (10, 3), (14, -3).
        """
        p = self._p
        speed = max(self.get_parameter('speed_m_s').value, 0.1)
        cx, cy = p['loop_center_m']
        puffs = []
        for ahead_m, out_m in ((6.0, 0.0), (10.0, 3.0), (14.0, -3.0)):
            x, y, _ = loop_pose(start_s + ahead_m / speed, p['loop_radius_m'], speed, (cx, cy))
            scale = 1.0 + out_m / p['loop_radius_m']
            puffs.append(SmokeVolume(
                center=Point(x=cx + (x - cx) * scale, y=cy + (y - cy) * scale, z=1.0),
                radius_m=p['smoke_radius_m'], density=p['smoke_density']))
        return puffs

    @property
    def phase(self):
        """Return the current weather phase name (None before the clock starts)."""
        return self._phase


def main(args=None):
    """Run the demo driver node until shut down; returns the exit code (see run_node)."""
    return run_node(DemoDriverNode, args)


if __name__ == '__main__':
    main()
