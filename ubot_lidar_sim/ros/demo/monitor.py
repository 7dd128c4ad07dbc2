"""
The demo's monitor node: subscribes to the sensor topics like any client and keeps what it saw.

Arrival times and sizes per sensor (``TopicRate``), the weather phase and its log, the weather
of the environment topic, and the samples the PNG snapshots need (``snapshots.Recorder``).
"""

import time

import numpy as np
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, qos_profile_sensor_data, QoSProfile
from sensor_msgs.msg import LaserScan, PointCloud2
from std_msgs.msg import String

from ubot_lidar_sim.core.errors import SimError
from ubot_lidar_sim.ros.conversions import environment_to_weather
from ubot_lidar_sim.ros.demo.scenario import phase_text
from ubot_lidar_sim.ros.demo.snapshots import Recorder
from ubot_lidar_sim_msgs.msg import Environment, TerrainSensor


class TopicRate:
    """Arrival statistics of one topic (monotonic clock): times, sizes, weather phases."""

    def __init__(self):
        self.times = []
        self.sizes = []
        self.phases = []

    def add(self, size, phase):
        """Record one message of size points (or rays) that arrived in phase."""
        self.times.append(time.monotonic())
        self.sizes.append(size)
        self.phases.append(phase)

    def mean_hz(self, skip_s=0.0):
        """Messages per second between the first arrival after skip_s and the last."""
        t = np.asarray(self.times)
        if len(t) < 2:
            return 0.0
        t = t[t >= t[0] + skip_s] if t[-1] - t[0] > 2.0 * skip_s else t
        return (len(t) - 1) / (t[-1] - t[0]) if len(t) > 1 and t[-1] > t[0] else 0.0

    def recent_hz(self, window_s=2.0):
        """Messages per second over the last window_s."""
        t = np.asarray(self.times[-400:])
        if len(t) < 2:
            return 0.0
        t = t[t >= time.monotonic() - window_s]
        return (len(t) - 1) / (t[-1] - t[0]) if len(t) > 1 and t[-1] > t[0] else 0.0

    def mean_size(self):
        """Mean size per message (0 before the first)."""
        return float(np.mean(self.sizes)) if self.sizes else 0.0


class Monitor(Node):
    """Subscribes to the sensor topics, the demo phase and environment; keeps rates, samples."""

    def __init__(self, context, snapshots, world_frame, lookup):
        # No parameter services: each service is one more entity in every wait set.
        super().__init__('demo_monitor', context=context, start_parameter_services=False)
        self.rates = {'lidar_3d': TopicRate(), 'laser_scan': TopicRate(),
                      'terrain_sensor': TopicRate()}
        self.phase = '-'
        self.phase_log = []
        self.weather = None     # core Weather of the last good environment message
        self._world_frame = world_frame
        self.extra = {'laser_scan': '', 'terrain_sensor': ''}
        self.recorder = Recorder(lookup, world_frame) if snapshots else None
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.create_subscription(PointCloud2, 'points', self._on_points, qos_profile_sensor_data)
        self.create_subscription(LaserScan, 'scan', self._on_scan, qos_profile_sensor_data)
        self.create_subscription(TerrainSensor, 'terrain', self._on_terrain,
                                 qos_profile_sensor_data)
        self.create_subscription(String, 'demo_driver/phase', self._on_phase, latched)
        self.create_subscription(Environment, 'environment', self._on_env, latched)

    def _on_points(self, msg):
        self.rates['lidar_3d'].add(msg.width * msg.height, self.phase)
        if self.recorder:
            self.recorder.on_points(msg, self.phase, self.weather)

    def _on_scan(self, msg):
        r = np.asarray(msg.ranges)
        hits = int(np.count_nonzero(np.isfinite(r)))
        self.rates['laser_scan'].add(len(r), self.phase)
        self.extra['laser_scan'] = f'{hits} hits'
        if self.recorder:
            self.recorder.on_scan(msg, self.phase)

    def _on_terrain(self, msg):
        self.rates['terrain_sensor'].add(int(np.sum(msg.enabled)), self.phase)
        tires = np.asarray(msg.tire_hit_dist)
        finite = tires[np.isfinite(tires)]
        hits = int(np.sum(msg.hit_flg))
        self.extra['terrain_sensor'] = (
            f'{hits} hits, tire {finite.mean():+.2f} m' if len(finite) else f'{hits} hits')
        if self.recorder:
            self.recorder.on_terrain(msg)

    def _on_phase(self, msg):
        self.phase = msg.data
        self.phase_log.append((time.monotonic(), msg.data))

    def _on_env(self, msg):
        try:
            self.weather = environment_to_weather(msg, self._world_frame)
        except SimError:
            pass            # the sensors refuse it too and keep their last good weather

    def weather_text(self):
        """Return the phase and the latest weather in a few words."""
        return phase_text(self.phase, self.weather)
