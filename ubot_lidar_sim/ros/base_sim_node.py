"""
base_sim: a kinematic base driven by cmd_vel, for Nav2 in the loop without Gazebo (docs/nav2.md).

Subscribes ``cmd_vel`` (geometry_msgs/TwistStamped with ``cmd_vel_stamped``, else Twist;
with ``cmd_vel_follow_type`` the type its publishers use: ros/cmd_vel.py), steps the core's
BaseSim (core/motion: limits, collision, ground, drift) at ``rate_hz`` and publishes ``odom``
(nav_msgs/Odometry of base_frame), /tf ``world_frame -> odom_frame`` (the truth that absorbs
the drift), ``odom_frame -> footprint_frame`` (x, y, yaw, ground z) and ``footprint_frame ->
base_frame`` (base_height_m, roll, pitch), REP 105 and 120; with ``localization_frame``
(AMCL's or SLAM's map, which then owns map -> odom) ``world_frame -> localization_frame``
instead, computed from the localiser's newest map -> odom so that world -> map -> odom -> base
is the truth; /tf_static base -> the sensor frames, ``~/collision`` (std_msgs/Bool, latched:
true at contact, false once a move goes free again) and /diagnostics.

Time: with ``publish_clock`` the node owns simulated time: a thread advances it by 1 / rate_hz
per step, publishes /tf and odom, then /clock, paced by ros/sim_pacing.py (real_time_factor, 0 =
as fast as the sync_topics' sensors publish). Another /clock publisher is reported, not
followed. Without it, a timer on the node's clock (wall, or /clock with use_sim_time) steps by
the time elapsed; a jump (ros/schedule.py: a step of the clock beyond the steady clock's, by
more than 1 s or 10 periods, or backwards) is reported and not integrated; a stall of the
executor is integrated as one long step (its collision rays cover all of it).
"""

import math
import threading
import time

from builtin_interfaces.msg import Time as TimeMsg
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry
from rclpy.clock import Clock as RosClock, ClockType
from rclpy.exceptions import InvalidHandle
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data, QoSProfile
from rclpy.time import Time
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu as ImuMsg
from std_msgs.msg import Bool
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.motion.base import BaseSim
from ubot_lidar_sim.core.motion.config import BaseSimConfig
from ubot_lidar_sim.core.motion.imu import config_sigmas, Imu as ImuModel, RateGate
from ubot_lidar_sim.core.motion.odometry import world_to_parent
from ubot_lidar_sim.core.world.world import load_for_config
from ubot_lidar_sim.ros.base_messages import StepMessages
from ubot_lidar_sim.ros.cmd_vel import CHECK_PERIOD_S, CmdVelInput, twist_of
from ubot_lidar_sim.ros.frames import rpy_quaternion, sensor_statics
from ubot_lidar_sim.ros.params import ConfigParameters
from ubot_lidar_sim.ros.qos import latched_qos
from ubot_lidar_sim.ros.rclpy_compat import RCLError
from ubot_lidar_sim.ros.robot_state import RobotStateOutput
from ubot_lidar_sim.ros.run import run_node, tolerate_destroyed
from ubot_lidar_sim.ros.schedule import TimerSchedule
from ubot_lidar_sim.ros.sim_pacing import Pacer, SensorWatch
from ubot_lidar_sim.ros.world_wait import loading_world
from ubot_lidar_sim_msgs.srv import SetPose


class BaseSimNode(Node):
    """The kinematic base (see the module)."""

    default_name = 'base_sim'

    def __init__(self, *, world=None, **kwargs):
        super().__init__(self.default_name, **kwargs)
        self.params = ConfigParameters(self, BaseSimConfig)
        cfg = self.params.config
        if world is None:
            with loading_world(self, cfg.world_file):
                world = load_for_config(cfg)[0]
        if world.frame != cfg.world_frame:
            raise ConfigError('world_frame', cfg.world_frame,
                              f'the frame of world {cfg.world_file!r} ({world.frame!r})')
        self.base = BaseSim(cfg, world)     # ConfigError: a start inside an object
        self._lock = threading.Lock()
        self.counts = {'clock_jumps': 0, 'foreign_clock': 0}
        self._period_ns = int(round(1e9 / cfg.rate_hz))
        self._sim_ns = 0
        self._last_ns = None
        self._schedule = TimerSchedule(1.0 / cfg.rate_hz)   # a jump, told from a stall
        self._contact = None
        self._msgs = StepMessages()
        self._odom_pub = self.create_publisher(Odometry, 'odom', 10)
        self._imu_pub, self.imu_sigmas = None, config_sigmas(cfg)
        self._imu_gate = RateGate(cfg.imu_rate_hz)      # a robot's IMU <update_rate>
        if cfg.imu_enabled:
            self._imu_pub = self.create_publisher(ImuMsg, cfg.imu_topic, qos_profile_sensor_data)
            self.imu = ImuModel(cfg.seed, *self.imu_sigmas)
        self._tf_pub = self.create_publisher(TFMessage, '/tf', QoSProfile(depth=100))
        self._static_pub = self.create_publisher(TFMessage, '/tf_static', latched_qos(1))
        self.robot_state = RobotStateOutput.of(self, cfg, self._tf_pub)    # robot_description
        self._collision_pub = self.create_publisher(Bool, '~/collision', latched_qos(1))
        self._diag_pub = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self._localized = None          # (x, y, yaw) localization_frame -> odom_frame
        if cfg.localization_frame:
            self.create_subscription(TFMessage, '/tf', self._on_tf, QoSProfile(depth=100))
        self.cmd_vel = CmdVelInput(self, 'cmd_vel', cfg.cmd_vel_stamped,
                                   cfg.cmd_vel_follow_type, self._on_cmd)
        self.create_timer(CHECK_PERIOD_S, self._check_cmd_vel, clock=_wall_clock())
        self.teleports = []         # (source, pose, reset_odometry, '' or why refused)
        self.create_subscription(PoseWithCovarianceStamped, '/initialpose', self._on_initialpose,
                                 10)
        self.create_service(SetPose, '~/set_pose', self._on_set_pose)
        self._stop = threading.Event()
        self._watch = SensorWatch(self, cfg.sync_topics, cfg.sync_lag_s)
        self._pacer = Pacer(cfg.real_time_factor, cfg.sync_timeout_s, self._watch, self._stop,
                            cfg.sync_start_timeout_s)
        self.create_timer(1.0, self._housekeeping, clock=_wall_clock())
        self._thread = None
        if cfg.publish_clock:
            self._clock_pub = self.create_publisher(Clock, '/clock', 10)
            self._thread = threading.Thread(target=self._run, name='base_sim', daemon=True)
            self._thread.start()
        else:
            self.create_timer(1.0 / cfg.rate_hz, self._tick)

    @property
    def config(self):
        """Return the BaseSimConfig in force."""
        return self.params.config

    def _now_ns(self):
        return self._sim_ns if self.config.publish_clock else self.get_clock().now().nanoseconds

    @tolerate_destroyed
    def _check_cmd_vel(self):
        self.cmd_vel.check()

    def _on_cmd(self, msg):
        cmd = twist_of(msg)
        with self._lock:
            ok = self.base.command(cmd, self._now_ns() * 1e-9)
        if not ok:
            self.get_logger().warning(f'cmd_vel refused (NaN, inf or |v| > 1e3): {cmd}',
                                      throttle_duration_sec=1.0)

    def teleport(self, source, pose, reset_odometry):
        """Teleport the base (core BaseSim.teleport); return '' or why it was refused."""
        q, p = pose.orientation, pose.position
        yaw = math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))
        with self._lock:
            why = self.base.teleport((p.x, p.y, yaw), reset_odometry)
            if not why and self._imu_pub is not None:
                self.imu.reset()
            if not why and self.robot_state is not None:
                self.robot_state.forget()
        self.teleports.append((source, (p.x, p.y, yaw), reset_odometry, why))
        if why:
            self.get_logger().warning(f'{source} refused: {why}')
        return why

    def _on_initialpose(self, msg):
        """Teleport to /initialpose (world_frame), odometry kept (docs/nav2.md, Teleport)."""
        frame = msg.header.frame_id.lstrip('/')
        if frame not in ('', self.config.world_frame):
            self.get_logger().warning(f'/initialpose in {frame!r} ignored: base_sim takes it in '
                                      f'world_frame {self.config.world_frame!r}')
            return
        self.teleport('/initialpose', msg.pose.pose, False)

    def _on_set_pose(self, request, response):
        why = self.teleport('~/set_pose', request.pose, request.reset_odometry)
        response.success = not why
        response.message = why or 'teleported'
        return response

    def _on_tf(self, msg):
        """Keep the newest localization_frame -> odom_frame (planar) a localiser published."""
        cfg = self.config
        for t in msg.transforms:
            if t.header.frame_id == cfg.localization_frame and \
                    t.child_frame_id == cfg.odom_frame:
                q, p = t.transform.rotation, t.transform.translation
                self._localized = (p.x, p.y, math.atan2(2.0 * (q.w * q.z + q.x * q.y),
                                                        1.0 - 2.0 * (q.y * q.y + q.z * q.z)))

    def _run(self):
        """Own simulated time: step, publish /tf and odom, then /clock, paced (module doc)."""
        dt_s = self._period_ns * 1e-9
        clock = Clock()
        try:
            self._publish(self.base.state(), 0)
            while not self._stop.is_set():
                now_ns = self._sim_ns + self._period_ns
                clock.clock = self._publish(self._step(now_ns, dt_s), now_ns, dt_s)
                self._clock_pub.publish(clock)
                self._sim_ns = now_ns
                if not self._pacer.wait(now_ns * 1e-9):
                    return
        except (InvalidHandle, RCLError):
            return      # the node or its context went away under the thread (shutdown)

    @tolerate_destroyed
    def _tick(self):
        """Step by the time elapsed on the node's clock (no publish_clock)."""
        now_ns = self.get_clock().now().nanoseconds
        if now_ns == 0:
            return
        last, self._last_ns = self._last_ns, now_ns
        if last is None:
            self._publish(self.base.state(), now_ns)
            return
        dt_ns = now_ns - last
        jump_s = self._schedule.tick(now_ns, time.monotonic_ns())
        if jump_s:
            self.counts['clock_jumps'] += 1
            self.get_logger().warning(f'clock jumped by {jump_s:+.3f} s: not integrated, '
                                      'the base goes on from here')
            return
        if dt_ns <= 0:
            return          # a paused /clock
        self._publish(self._step(now_ns, dt_ns * 1e-9), now_ns, dt_ns * 1e-9)

    def _step(self, now_ns, dt_s):
        """Step the base to now_ns under the limits in force (a parameter set may change them)."""
        with self._lock:
            self.base.cfg = self.params.config
            return self.base.step(now_ns * 1e-9, dt_s)

    def _publish(self, step, now_ns, dt_s=0.0):
        """Publish odom, imu, /tf (and /tf_static once) and a change of contact; the stamp."""
        cfg = self.config
        stamp = TimeMsg(sec=now_ns // 1_000_000_000, nanosec=now_ns % 1_000_000_000)
        if self._contact is None:
            statics = self.robot_state.statics(stamp) if self.robot_state else []
            self._static_pub.publish(TFMessage(transforms=statics or sensor_statics(
                stamp, cfg.base_frame,
                ((cfg.lidar_pose, cfg.lidar_frame), (cfg.laser_pose, cfg.laser_frame)))))
        _, _, z, roll, pitch, _ = step.pose
        ox, oy, oyaw = step.odom
        parent, (wx, wy, wyaw) = cfg.odom_frame, step.world_to_odom
        if cfg.localization_frame:      # world -> map under the localiser's map -> odom
            parent = cfg.localization_frame
            wx, wy, wyaw = world_to_parent((wx, wy, wyaw), self._localized or (0.0, 0.0, 0.0))
        base_q = rpy_quaternion(roll, pitch, oyaw)
        chain = [(cfg.odom_frame, cfg.base_frame, (ox, oy, z), base_q)]
        if cfg.footprint_frame:     # REP 120: the ground projection, then the body above it
            chain = [(cfg.odom_frame, cfg.footprint_frame, (ox, oy, z - cfg.base_height_m),
                      rpy_quaternion(0.0, 0.0, oyaw)),
                     (cfg.footprint_frame, cfg.base_frame, (0.0, 0.0, cfg.base_height_m),
                      rpy_quaternion(roll, pitch, 0.0))]
        self._tf_pub.publish(self._msgs.tf(stamp, [
            (cfg.world_frame, parent, (wx, wy, 0.0), rpy_quaternion(0.0, 0.0, wyaw))] + chain))
        self._odom_pub.publish(self._msgs.odometry(stamp, cfg.odom_frame, cfg.base_frame, step,
                                                   base_q))
        if self.robot_state is not None:
            self.robot_state.publish(stamp, step.pose, dt_s)
        if self._imu_pub is not None:
            sample = self.imu.sample(step.pose, dt_s)
            if self._imu_gate.due(now_ns * 1e-9):
                self._imu_pub.publish(self._msgs.imu(stamp, cfg.imu_frame or cfg.base_frame,
                                                     sample, *self.imu_sigmas))
        if step.contact != self._contact:
            self._contact = step.contact
            self._collision_pub.publish(Bool(data=step.contact))
            if step.contact:
                x, y = step.pose[:2]
                self.get_logger().warning(f'contact: the footprint stopped at an object, '
                                          f'x {x:.3f} m, y {y:.3f} m in {cfg.world_frame}')
        return stamp

    @tolerate_destroyed
    def _housekeeping(self):
        """Subscribe to new sync topics, look for a foreign /clock, publish /diagnostics."""
        cfg = self.config
        if cfg.publish_clock:
            self._watch.discover()
        if cfg.publish_clock and self.count_publishers('/clock') > 1:
            if not self.counts['foreign_clock']:
                self.get_logger().warning('another node publishes /clock: base_sim owns '
                                          'simulated time (publish_clock) and ignores it')
            self.counts['foreign_clock'] += 1
        self._diag_pub.publish(self.diagnostics())

    def diagnostics(self):
        """Return the DiagnosticArray of the base: counts, contact, the factor reached."""
        cfg = self.config
        counts = dict(self.base.counts, **self.counts,
                      sync_timeouts=self._pacer.sync_timeouts)
        warn = [t for t, bad in (('in contact', self.base.contact),
                                 ('cmd_vel refused', counts['refused']),
                                 ('clock jumped', counts['clock_jumps']),
                                 ('foreign /clock', counts['foreign_clock']),
                                 ('cmd_vel type mismatch', self.cmd_vel.mismatch)) if bad]
        values = [KeyValue(key=k, value=str(v)) for k, v in counts.items()]
        values.append(KeyValue(key='contact', value=str(self.base.contact).lower()))
        if cfg.publish_clock:
            values.append(KeyValue(key='real_time_factor_reached',
                                   value=f'{self._pacer.reached(self._sim_ns * 1e-9):.2f}'))
        status = DiagnosticStatus(
            level=DiagnosticStatus.WARN if warn else DiagnosticStatus.OK,
            name=f'{self.get_name()}: base', hardware_id=self.get_fully_qualified_name(),
            message=', '.join(warn) or 'ok', values=values)
        msg = DiagnosticArray(status=[status])
        msg.header.stamp = Time(nanoseconds=self._now_ns()).to_msg()
        return msg

    def destroy_node(self):
        """Stop the time thread, then destroy the node."""
        stop, thread = getattr(self, '_stop', None), getattr(self, '_thread', None)
        if stop is not None:        # None: the constructor refused a parameter
            stop.set()
        if thread is not None:
            thread.join(timeout=5.0)
        return super().destroy_node()


def _wall_clock():
    """Return a steady clock for the housekeeping timer (it runs whatever /clock does)."""
    return RosClock(clock_type=ClockType.STEADY_TIME)


def main(args=None):
    """Run base_sim until shut down; returns the exit code (see run_node)."""
    return run_node(BaseSimNode, args)


if __name__ == '__main__':
    raise SystemExit(main())
