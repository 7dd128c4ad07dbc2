"""
The demo's monitor node: subscribes to the sensor topics like any client and keeps what it saw.

Arrival counts and rates per sensor (``TopicRate``), the weather phase and the time spent in
each, the weather of the environment topic, and the samples the PNG snapshots need
(``snapshots.Recorder``). Everything it keeps is bounded: running sums, and the last
RECENT_KEPT arrivals for the live rate, however long ``run`` runs.
"""

from collections import deque
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
from ubot_lidar_sim.ros.intake import ENVIRONMENT_TOPIC
from ubot_lidar_sim_msgs.msg import Environment, TerrainSensor


RECENT_KEPT = 400       # arrivals kept per topic for recent_hz (13 s at 30 Hz)


class TopicRate:
    """
    Arrival statistics of one topic (monotonic clock) in bounded memory.

    ``count``, ``last_size``, ``phase_counts`` ({phase: messages}), ``phase_empty`` ({phase:
    messages of size 0}, an empty sweep: a sensor inside smoke must still see it, issue 56);
    ``phase_seconds_at_first``
    ({phase: s} the monitor had seen of each phase at the first arrival: the time in which the
    sensor could not yet publish); ``recent`` holds the last RECENT_KEPT arrival times.
    ``skip_s``: mean_hz leaves out the first skip_s after the first arrival (start-up), when
    the record is longer than twice that.
    """

    def __init__(self, skip_s=1.0):
        self.skip_s = skip_s
        self.recent = deque(maxlen=RECENT_KEPT)
        self.count = 0
        self.last_size = 0
        self.phase_counts = {}
        self.phase_empty = {}
        self.phase_seconds_at_first = None
        self._size_sum = 0.0
        self._first = self._last = None
        self._after = None      # (first arrival after skip_s, arrivals since then)

    def add(self, size, phase, now_s=None, phase_seconds=None):
        """
        Record one message of size points (or rays) that arrived in phase (at now_s).

        phase_seconds: {phase: s} spent in each phase so far, kept from the first arrival.
        """
        t = time.monotonic() if now_s is None else now_s
        if self.phase_seconds_at_first is None:
            self.phase_seconds_at_first = dict(phase_seconds or {})
        self.recent.append(t)
        self.count += 1
        self.last_size = size
        self._size_sum += size
        self.phase_counts[phase] = self.phase_counts.get(phase, 0) + 1
        if size == 0:
            self.phase_empty[phase] = self.phase_empty.get(phase, 0) + 1
        if self._first is None:
            self._first = t
        self._last = t
        if self._after is None and t >= self._first + self.skip_s:
            self._after = (t, 0)
        if self._after is not None:
            self._after = (self._after[0], self._after[1] + 1)

    def mean_hz(self):
        """Messages per second between the first arrival after skip_s and the last."""
        if self.count < 2:
            return 0.0
        first, n = self._first, self.count
        if self._last - self._first > 2.0 * self.skip_s and self._after is not None:
            first, n = self._after
        return (n - 1) / (self._last - first) if n > 1 and self._last > first else 0.0

    def recent_hz(self, window_s=2.0, now_s=None):
        """Messages per second over the last window_s."""
        now = time.monotonic() if now_s is None else now_s
        t = [x for x in list(self.recent) if x >= now - window_s]
        return (len(t) - 1) / (t[-1] - t[0]) if len(t) > 1 and t[-1] > t[0] else 0.0

    def mean_size(self):
        """Mean size per message (0 before the first)."""
        return self._size_sum / self.count if self.count else 0.0


class Monitor(Node):
    """Subscribes to the sensor topics, the demo phase and environment; keeps rates, samples."""

    def __init__(self, context, snapshots, world_frame, lookup, namespace=None):
        # No parameter services: each service is one more entity in every wait set.
        super().__init__('demo_monitor', context=context, start_parameter_services=False,
                         **({'namespace': namespace} if namespace else {}))
        self.rates = {'lidar_3d': TopicRate(), 'laser_scan': TopicRate(),
                      'terrain_sensor': TopicRate()}
        self.phase = '-'
        self._phase_start = time.monotonic()
        self._phase_spans = {}      # phase -> seconds spent in it before the current stretch
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
        # The one weather of the graph, also when the monitor sits in robot1's namespace.
        self.create_subscription(Environment, ENVIRONMENT_TOPIC, self._on_env, latched)

    def _count(self, name, size):
        now = time.monotonic()
        rate = self.rates[name]
        rate.add(size, self.phase, now, self.phase_seconds(now) if rate.count == 0 else None)

    def _on_points(self, msg):
        self._count('lidar_3d', msg.width * msg.height)
        if self.recorder:
            self.recorder.on_points(msg, self.phase, self.weather)

    def _on_scan(self, msg):
        r = np.asarray(msg.ranges)
        hits = int(np.count_nonzero(np.isfinite(r)))
        self._count('laser_scan', len(r))
        self.extra['laser_scan'] = f'{hits} hits'
        if self.recorder:
            self.recorder.on_scan(msg, self.phase)

    def _on_terrain(self, msg):
        self._count('terrain_sensor', int(np.sum(msg.enabled)))
        tires = np.asarray(msg.tire_hit_dist)
        finite = tires[np.isfinite(tires)]
        hits = int(np.sum(msg.hit_flg))
        self.extra['terrain_sensor'] = (
            f'{hits} hits, tire {finite.mean():+.2f} m' if len(finite) else f'{hits} hits')
        if self.recorder:
            self.recorder.on_terrain(msg)

    def _on_phase(self, msg, now_s=None):
        now = time.monotonic() if now_s is None else now_s
        if self.phase != '-':
            self._phase_spans[self.phase] = (self._phase_spans.get(self.phase, 0.0)
                                             + now - self._phase_start)
        self.phase, self._phase_start = msg.data, now

    def phase_seconds(self, now_s=None):
        """Return {phase: seconds spent in it} up to now_s (monotonic)."""
        now = time.monotonic() if now_s is None else now_s
        spans = dict(self._phase_spans)
        if self.phase != '-':
            spans[self.phase] = spans.get(self.phase, 0.0) + max(now - self._phase_start, 0.0)
        return spans

    def _on_env(self, msg):
        try:
            self.weather = environment_to_weather(msg, self._world_frame)
        except SimError:
            pass            # the sensors refuse it too and keep their last good weather

    def weather_text(self):
        """Return the phase and the latest weather in a few words."""
        return phase_text(self.phase, self.weather)
