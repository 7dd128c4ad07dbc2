"""
Demo driver: drives base_link around a loop and plays a weather scenario.

Publishes ``/tf`` (world_frame -> odom -> base_link on a circle of ``loop_radius_m`` around
``loop_center_m`` at ``speed_m_s``), one ``/tf_static`` message with base_link -> the sensor
frames (depth 1, transient_local, as tf2 static broadcasters do), ``/environment`` (a scenario
clear -> rain ramping to ``rain_max_mm_h`` -> fog down to ``fog_min_visibility_m`` -> smoke
near the path -> snow ramping to ``snow_max_mm_h`` on ``snow_depth_m`` of cover, repeating) and
``~/phase`` (std_msgs/String, the current phase name). With ``weather_cycle`` false it
publishes neither, so a weather published by hand (``ros2 topic pub /environment ...``) stays
in force. The parameters are the fields of
``scenario.DemoDriverConfig``; the maths is in scenario.py.
"""

import functools
import math

import numpy as np
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.time import Time
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.output import messages
from ubot_lidar_sim.ros.conversions import to_rclpy
from ubot_lidar_sim.ros.demo.scenario import DemoDriverConfig, loop_pose, scenario_at
from ubot_lidar_sim.ros.frames import sensor_statics, transform
from ubot_lidar_sim.ros.intake import ENVIRONMENT_TOPIC
from ubot_lidar_sim.ros.params import ConfigParameters
from ubot_lidar_sim.ros.qos import latched_qos
from ubot_lidar_sim.ros.run import run_node, tolerate_destroyed
from ubot_lidar_sim_msgs.msg import Environment


def _on_clock(publish):
    """Wrap a timer callback publish(self, t_s, stamp): it waits for a started clock."""
    @tolerate_destroyed
    @functools.wraps(publish)
    def tick(self):
        now_ns = self.get_clock().now().nanoseconds
        if now_ns == 0:
            return
        if self._t0_ns is None:
            self._t0_ns = now_ns
        publish(self, (now_ns - self._t0_ns) * 1e-9, Time(nanoseconds=now_ns).to_msg())
    return tick


class DemoDriverNode(Node):
    """Moves the robot along a loop and publishes the weather scenario of the demo."""

    default_name = 'demo_driver'

    def __init__(self, **kwargs):
        super().__init__(self.default_name, **kwargs)
        # In a namespace the sensor frames default to the ones the sensors there use.
        self.params = ConfigParameters(self, DemoDriverConfig,
                                       namespaced=('lidar_frame', 'laser_frame'))
        cfg = self.config
        self._t0_ns = None
        self._phase = None
        self._tf_pub = self.create_publisher(TFMessage, '/tf', QoSProfile(depth=100))
        self._static_pub = self.create_publisher(TFMessage, '/tf_static', latched_qos(1))
        self._env_pub = self.create_publisher(Environment, ENVIRONMENT_TOPIC, latched_qos(1))
        self._phase_pub = self.create_publisher(String, '~/phase', latched_qos(1))
        self._static_sent = False
        self.create_timer(1.0 / cfg.tf_rate_hz, self._publish_tf)
        self.create_timer(1.0 / cfg.environment_rate_hz, self._publish_environment)

    @property
    def config(self):
        """Return the DemoDriverConfig in force (replaced when speed_m_s is set)."""
        return self.params.config

    def _send_static(self, stamp):
        cfg = self.config
        self._static_pub.publish(TFMessage(transforms=sensor_statics(
            stamp, cfg.base_frame,
            ((cfg.lidar_pose, cfg.lidar_frame), (cfg.laser_pose, cfg.laser_frame)))))
        self._static_sent = True

    @_on_clock
    def _publish_tf(self, t_s, stamp):
        cfg = self.config
        if not self._static_sent:
            self._send_static(stamp)
        x, y, yaw = loop_pose(t_s, cfg.loop_radius_m, cfg.speed_m_s, cfg.loop_center_m)
        self._tf_pub.publish(TFMessage(transforms=[
            transform(stamp, cfg.world_frame, cfg.odom_frame, (0, 0, 0), (1, 0, 0, 0)),
            transform(stamp, cfg.odom_frame, cfg.base_frame, (x, y, cfg.base_height_m),
                      (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)))]))

    @_on_clock
    def _publish_environment(self, t_s, stamp):
        cfg = self.config
        if not cfg.weather_cycle:
            return
        phase, rain, vis, frac, snow = scenario_at(
            t_s, cfg.phase_durations_s, cfg.rain_max_mm_h, cfg.fog_min_visibility_m,
            rain_haze_visibility_m=cfg.rain_haze_visibility_m, snow_max_mm_h=cfg.snow_max_mm_h)
        smoke = self._smoke_near_path(t_s - frac * cfg.phase_durations_s[3]) \
            if phase == 'smoke' else np.zeros((0, 4))
        weather = Weather(rain_mm_h=rain, visibility_m=vis, snowfall_rate_mm_h=snow,
                          snow_depth_m=cfg.snow_depth_m if phase == 'snow' else 0.0,
                          smoke=smoke, smoke_density=np.full(len(smoke), cfg.smoke_density))
        self._env_pub.publish(to_rclpy(messages.environment(
            weather, cfg.world_frame, stamp.sec * 1_000_000_000 + stamp.nanosec)))
        if phase != self._phase:
            self._phase = phase
            self._phase_pub.publish(String(data=phase))
            self.get_logger().info(f'weather phase: {phase}')

    def _smoke_near_path(self, start_s):
        """
        Puffs (3, 4) x, y, z, radius_m 1 m above ground along the loop ahead of the phase start.

        Fixed for the whole phase, so the robot drives up to and through them: (metres ahead
        along the loop, metres outward from it) = (6, 0), (10, 3), (14, -3).
        """
        cfg = self.config
        speed = max(cfg.speed_m_s, 0.1)
        cx, cy = cfg.loop_center_m
        puffs = []
        for ahead_m, out_m in ((6.0, 0.0), (10.0, 3.0), (14.0, -3.0)):
            x, y, _ = loop_pose(start_s + ahead_m / speed, cfg.loop_radius_m, speed, (cx, cy))
            scale = 1.0 + out_m / cfg.loop_radius_m
            puffs.append((cx + (x - cx) * scale, cy + (y - cy) * scale, 1.0, cfg.smoke_radius_m))
        return np.array(puffs)

    @property
    def phase(self):
        """Return the current weather phase name (None before the clock starts)."""
        return self._phase


def main(args=None):
    """Run the demo driver node until shut down; returns the exit code (see run_node)."""
    return run_node(DemoDriverNode, args)


if __name__ == '__main__':
    raise SystemExit(main())
