"""
The pace of simulated time when base_sim owns /clock (publish_clock true; docs/nav2.md).

real_time_factor > 0: step k is published no earlier than k dt / real_time_factor wall seconds
after the start, and, as at 'max', not before the watched sensors have caught up: a factor the
machine cannot compute slows simulated time instead of costing sweeps (the factor reached is
on /diagnostics). real_time_factor 0 ('max'): step k goes out as soon as every watched sensor
has caught up: the newest header stamp of each sync topic that has a publisher is within 2.5 of
its own stamp intervals of simulated time (sync_lag_s until two stamps are known), or
sync_timeout_s of wall time has passed (counted as a sync timeout; that topic is not waited
for again until it publishes). A sensor stamps a sweep at its first ray and computes it once
/tf covers its end, so a lag under 3 periods lets it publish every sweep (ros/sweep_clock.py
skips a sweep only when it is a period or more behind) and a lag of 2 periods or more lets it
compute the next one: 2.5 is between. A sensor that samples an instant (terrain_sensor, told by
its message type: INSTANT_TYPES) computes the sample stamped at simulated time t as soon as /tf
reaches t, and skips it once /tf is a period past it: so the next step waits until the sensor
has the last sample the clock allows, under a period behind (0.999: a lag of 1.5 let the clock
step on while that sample was still computing, and the sensor skipped it on a busy machine).

Simulated time does not start before every sync topic has a publisher, or for at most
sync_start_timeout_s (the sensors load their world and compile their kernels first), so the
first sweep is due at the first simulated period. A topic whose first message has not come is
waited for up to sync_start_timeout_s too, not sync_timeout_s: a sensor computes its first
sweep while its kernels compile, which takes seconds on a loaded machine, and giving up on it
would let simulated time run ahead of its first sweep.

The watch reads only the header stamp, from the serialized message (raw subscription: a
PointCloud2 is never deserialized): CDR's 4-byte encapsulation header, then the stamp's int32
sec and uint32 nanosec, for every message whose first field is std_msgs/Header. The sync
subscriptions sit in a PolledGroup (ros/rclpy_compat.py) that no executor waits on: the stepping
thread takes their queued messages itself every POLL_S while it waits, and asks the graph for
their publishers at most every PUBLISHERS_S, so a watched message costs no executor cycle
(~0.35 ms of CPU each in rclpy; 40 per simulated second here) and a wait little CPU.
"""

import importlib
import math
import struct
import time

from rclpy.qos import qos_profile_sensor_data

from ubot_lidar_sim.ros.rclpy_compat import PolledGroup, queued_messages

LAG_PERIODS = 2.5           # a sweep stamped at its first ray, computed once /tf covers its end
INSTANT_LAG_PERIODS = 0.999  # a sample of an instant (terrain_sensor): under 1 period
INSTANT_TYPES = frozenset({'ubot_lidar_sim_msgs/msg/TerrainSensor'})
POLL_S = 0.001              # a waiting step takes the sync topics' messages this often
PUBLISHERS_S = 0.05        # and looks for their publishers at most this often (wall s)
TAKE_LIMIT = 100           # messages taken per topic and poll (more wait for the next poll)
_LE, _BE = (0, 1), (0, 0)       # CDR encapsulation ids: little / big endian


def header_stamp_s(data):
    """Return the header stamp (s) of a serialized message whose first field is a Header."""
    fmt = '<iI' if tuple(data[:2]) in (_LE, (0, 3)) else '>iI'
    sec, nanosec = struct.unpack_from(fmt, data, 4)
    return sec + nanosec * 1e-9


def message_class(type_name):
    """Return the message class of 'pkg/msg/Name' (importlib: only a name found on the graph)."""
    pkg, _, name = type_name.split('/')
    return getattr(importlib.import_module(f'{pkg}.msg'), name)


class SensorWatch:
    """The newest stamp and stamp interval of each sync topic (see the module)."""

    def __init__(self, node, topics, default_lag_s):
        self._node = node
        self._topics = tuple(dict.fromkeys(node.resolve_topic_name(t) for t in topics))
        self._instant = set()       # topics of a message type in INSTANT_TYPES
        self._default_lag = default_lag_s
        self._subs = {}
        self._given_up = set()       # topics that timed out, waited for again once they publish
        self.stamps = {}             # topic: (newest stamp s, smallest interval s or None)
        self._group = PolledGroup()
        self._published = (-math.inf, frozenset())   # (monotonic s, topics with a publisher)

    def discover(self):
        """Subscribe to each sync topic once its type is on the graph; True: all of them."""
        names = dict(self._node.get_topic_names_and_types())
        for full in self._topics:
            if full in self._subs or not names.get(full):
                continue
            cls = message_class(names[full][0])
            if names[full][0] in INSTANT_TYPES:
                self._instant.add(full)
            self._subs[full] = self._node.create_subscription(
                cls, full, lambda data, t=full: self._seen(t, data), qos_profile_sensor_data,
                callback_group=self._group, raw=True)
        return len(self._subs) == len(self._topics)

    def take(self):
        """Take every queued message of the sync topics (the stepping thread; see the module)."""
        for topic, sub in list(self._subs.items()):
            for data in queued_messages(sub, TAKE_LIMIT):
                self._seen(topic, data)

    def _seen(self, topic, data):
        self._given_up.discard(topic)
        stamp = header_stamp_s(data)
        old, interval = self.stamps.get(topic, (None, None))
        if old is not None and stamp > old:
            gap = stamp - old
            interval = gap if interval is None else min(interval, gap)
        self.stamps[topic] = (stamp if old is None else max(old, stamp), interval)

    def _with_publishers(self):
        """Return the watched topics that have a publisher (the graph asked every PUBLISHERS_S)."""
        asked, topics = self._published
        if time.monotonic() - asked >= PUBLISHERS_S:
            topics = frozenset(t for t in list(self._subs) if self._node.count_publishers(t))
            self._published = (time.monotonic(), topics)
        return topics

    def all_published(self):
        """Return whether every sync topic has a publisher (asks the graph now)."""
        self._published = (-math.inf, frozenset())
        return len(self._with_publishers()) == len(self._topics)

    def behind(self, now_s):
        """Return the first watched topic whose sensor lags now_s too far, or None."""
        published = self._with_publishers()
        for topic in list(self._subs):
            if topic in self._given_up or topic not in published:
                continue
            newest, interval = self.stamps.get(topic, (0.0, None))
            periods = INSTANT_LAG_PERIODS if topic in self._instant else LAG_PERIODS
            lag = self._default_lag if interval is None else periods * interval
            if now_s - newest > lag:
                return topic
        return None

    def has_published(self, topic):
        """Return whether topic's first message has come."""
        return topic in self.stamps

    def give_up(self, topic):
        """Stop waiting for topic until its next message (its sensor timed out)."""
        self._given_up.add(topic)


class Pacer:
    """Waits between the steps of simulated time (see the module)."""

    def __init__(self, real_time_factor, timeout_s, watch, stop_event, start_timeout_s=30.0):
        self.rtf = real_time_factor
        self._timeout = timeout_s
        self._start_timeout = start_timeout_s
        self._watch = watch
        self._stop = stop_event
        self.sync_timeouts = 0
        self._wall0 = time.monotonic()
        self._sim0 = None

    def wait(self, sim_s):
        """Return once step sim_s may go out (False when the node stops)."""
        if self._sim0 is None:
            self._await_sensors()
            self._sim0, self._wall0 = sim_s, time.monotonic()
        if self.rtf > 0.0:
            due = self._wall0 + (sim_s - self._sim0) / self.rtf
            if self._stop.wait(max(0.0, due - time.monotonic())):
                return False
        start = time.monotonic()
        self._watch.take()
        while (topic := self._watch.behind(sim_s)) is not None:
            limit = self._timeout if self._watch.has_published(topic) else self._start_timeout
            if time.monotonic() - start > limit:
                self.sync_timeouts += 1
                self._watch.give_up(topic)
                break
            if self._stop.wait(POLL_S):
                return False
            self._watch.take()
        return not self._stop.is_set()

    def _await_sensors(self):
        """Before the first step: wait for every sync topic's publisher (bounded)."""
        limit = time.monotonic() + self._start_timeout
        # A topic is on the graph once anything subscribes to it: its publisher is waited for.
        while not (self._watch.discover() and self._watch.all_published()) and \
                time.monotonic() < limit:
            if self._stop.wait(0.05):
                return

    def reached(self, sim_s):
        """Return the real-time factor reached since the first step (simulated / wall s)."""
        if self._sim0 is None:
            return 0.0
        wall = time.monotonic() - self._wall0
        return (sim_s - self._sim0) / wall if wall > 0 else 0.0
