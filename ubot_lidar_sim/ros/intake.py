"""
Inputs of a sensor node: /tf, /tf_static and /environment into a transform buffer and a Weather.

/tf (subscribed raw, decoded from CDR) and /environment sit in a PolledGroup that no executor
waits on: a poll thread takes what is queued every POLL_S, and the node takes it once more
right before each scan, so that the sweep sees the newest transform and weather. /tf_static is
rare and runs on the executor. A /tf transform stamped ahead of the node's clock is held back
until the clock reaches its stamp (beyond TF_MAX_FUTURE_S it is refused): the buffer never
describes a future, so a sweep never ends past the clock on a path no transform gave yet.

The sensor nodes of one process (``python -m ubot_lidar_sim run``, a fleet) share one Intake
(``share``): one /tf subscription, one decode of each message, one buffer and one poll thread,
not one per node. A sweep waiting for its poses sleeps until the intake applies a transform
(``wait_applied``) instead of polling.
"""

from collections import OrderedDict
import heapq
import itertools
import math
import struct
import threading
import time

from rclpy.exceptions import InvalidHandle
from rclpy.qos import DurabilityPolicy, QoSProfile
from rclpy.serialization import deserialize_message
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.ros.conversions import (apply_transforms, environment_to_weather, tf_items,
                                            tf_items_from_cdr)
from ubot_lidar_sim.ros.diagnostics import WARN_THROTTLE_S
from ubot_lidar_sim.ros.qos import latched_qos
from ubot_lidar_sim.ros.rclpy_compat import PolledGroup, queued_messages
from ubot_lidar_sim.ros.tf_buffer import TransformBuffer
from ubot_lidar_sim_msgs.msg import Environment

TF_CACHE_S = 10.0          # history kept per dynamic edge, at least (nodes: two sweeps)
TF_TOLERANCE_S = 0.05      # a lookup may hold an edge's end value this far outside its history
TF_MAX_FUTURE_S = 5.0      # dynamic transforms stamped further ahead of the clock are refused
TF_HELD_MAX = 10000        # transforms stamped ahead of the clock held at once (5 s at 2 kHz)
POLL_S = 0.005             # the input poll thread takes the queued messages this often
TF_QUEUE_DEPTH = 1000      # /tf messages DDS keeps between two takes (1 s at 1 kHz)
# Absolute, so one weather publisher serves sensors in any namespace; remap to change it,
# e.g. --ros-args -r /environment:=/robot1/environment.
ENVIRONMENT_TOPIC = '/environment'
ENV_QUEUE_DEPTH = 10       # one latched message from each of several weather publishers
ENV_PUBLISHERS_KEPT = 64   # publishers whose last sequence number _first_delivery remembers


class Intake:
    """
    The transform buffer and the latest good weather of one node or more, and what feeds them.

    ``tf_buffer`` (TransformBuffer, guarded by ``lock``; ``history_s`` of dynamic transforms
    per edge), ``weather`` (core Weather, clear air until the first good message). Refused
    inputs are counted in ``stats['tf_rejected']`` and ``stats['env_rejected']`` of every node
    served and warned about (throttled) by ``host``, the node whose subscriptions, clock and
    logger it uses. ``applied`` counts the /tf batches applied.
    """

    def __init__(self, node, world_frame, stats, callback_group, history_s=TF_CACHE_S):
        self._node = self.host = node
        self._world_frame = world_frame
        self._stats = [stats]
        self.applied = 0
        self._applied_cv = threading.Condition(threading.Lock())
        self._cleared_at = -math.inf        # monotonic s of the last clear
        self.tf_buffer = TransformBuffer(cache_time_s=history_s, tolerance_s=TF_TOLERANCE_S)
        self.lock = threading.Lock()
        self.weather = Weather()
        polled = PolledGroup()
        self._polled = [
            node.create_subscription(
                TFMessage, '/tf', self._on_tf_cdr,
                QoSProfile(depth=TF_QUEUE_DEPTH, durability=DurabilityPolicy.VOLATILE),
                callback_group=polled, raw=True),
            # Both: a volatile subscription matches every publisher (ros2 topic pub's default
            # QoS too), a transient-local one also receives a latched publisher's last
            # message when this node starts late. A message from a latched publisher then
            # arrives twice; _first_delivery keeps one.
            node.create_subscription(Environment, ENVIRONMENT_TOPIC, self._on_environment,
                                     latched_qos(ENV_QUEUE_DEPTH), callback_group=polled),
            node.create_subscription(Environment, ENVIRONMENT_TOPIC, self._on_environment,
                                     QoSProfile(depth=ENV_QUEUE_DEPTH), callback_group=polled)]
        self._env_marks = OrderedDict()     # publisher gid -> last sequence number taken
        self._take_lock = threading.Lock()
        self._held = []     # heap of (stamp s, seq, item): /tf stamped ahead of the clock
        self._held_seq = itertools.count()
        self._stop = threading.Event()
        self._poller = threading.Thread(target=self._poll, daemon=True,
                                        name=f'{node.get_name()}_inputs')
        self._poller.start()
        node.create_subscription(
            TFMessage, '/tf_static', lambda m: self._on_transforms(tf_items(m), True),
            latched_qos(100), callback_group=callback_group)

    def share(self, stats, history_s):
        """Serve one more node of the host's clock and world frame (its counts, history)."""
        with self.lock:
            buffer = self.tf_buffer
            buffer.cache_time_s = max(buffer.cache_time_s, float(history_s))
        self._stats.append(stats)
        return self

    def _count(self, key, n):
        for stats in self._stats:
            stats[key] += n

    def wait_applied(self, seen, timeout_s):
        """Wait up to timeout_s for ``applied`` to differ from seen (a /tf batch applied)."""
        with self._applied_cv:
            self._applied_cv.wait_for(lambda: self.applied != seen, timeout_s)

    def stop(self):
        """Stop the poll thread (waits up to 1 s)."""
        self._stop.set()
        self._poller.join(timeout=1.0)

    def clear(self, since=None):
        """
        Forget every transform, held ones too (the clock jumped backwards).

        since (monotonic s): a node's last scan before the jump; when a node that shares the
        intake cleared it after that, it was this jump: nothing is cleared again.
        """
        with self._take_lock:
            if since is not None and self._cleared_at > since:
                return
            self._cleared_at = time.monotonic()
            self._held.clear()
            with self.lock:
                self.tf_buffer.clear()

    def _poll(self):
        while not self._stop.wait(POLL_S):
            try:
                self.take()
            except Exception as exc:  # keep the poller alive whatever a message did
                self._node.get_logger().error(f'input intake: {type(exc).__name__}: {exc}',
                                              throttle_duration_sec=WARN_THROTTLE_S)

    def take(self, limit=TF_QUEUE_DEPTH):
        """Take and handle every queued /tf and environment message, in order; return how many."""
        n = 0
        with self._take_lock:
            self._release_held()
            for sub in self._polled:
                try:
                    for msg, info in queued_messages(sub, limit, with_info=True):
                        n += 1
                        sub.callback(msg, info)
                except InvalidHandle:
                    pass        # the node is being destroyed
        return n

    def _on_tf_cdr(self, data, _info=None):
        """Take one serialised /tf message (the poll thread subscribes raw)."""
        try:
            items = tf_items_from_cdr(data)
        except (ValueError, struct.error, UnicodeDecodeError):
            # Not plain CDR (another encapsulation): let rclpy decode it.
            items = tf_items(deserialize_message(data, TFMessage))
        self._on_transforms(items, False)

    def _on_transforms(self, items, static):
        logger = self._node.get_logger()
        now_s = self._node.get_clock().now().nanoseconds * 1e-9
        if not static and now_s > 0:
            limit_s = now_s + TF_MAX_FUTURE_S
            late = [it for it in items if it[2] > limit_s]
            if late:
                self._count('tf_rejected', len(late))
                logger.warning(
                    f'{len(late)} transform(s) stamped more than {TF_MAX_FUTURE_S} s in the '
                    f'future ignored (e.g. {late[0][0]} -> {late[0][1]} at {late[0][2]:.3f} s, '
                    f'clock {now_s:.3f} s)', throttle_duration_sec=WARN_THROTTLE_S)
                items = [it for it in items if it[2] <= limit_s]
            if any(it[2] > now_s for it in items):
                self._hold([it for it in items if it[2] > now_s])
                items = [it for it in items if not it[2] > now_s]
        self._apply(items, static)

    def _hold(self, items):
        """Keep dynamic transforms stamped ahead of the clock until it reaches them."""
        room = TF_HELD_MAX - len(self._held)
        for it in items[:max(room, 0)]:
            heapq.heappush(self._held, (it[2], next(self._held_seq), it))
        if len(items) > room:
            self._count('tf_rejected', len(items) - max(room, 0))
            self._node.get_logger().warning(
                f'{len(items) - max(room, 0)} transform(s) stamped ahead of the clock ignored: '
                f'{TF_HELD_MAX} already wait for it', throttle_duration_sec=WARN_THROTTLE_S)

    def _release_held(self):
        """Apply the held transforms whose stamp the clock has reached."""
        if not self._held:
            return
        now_s = self._node.get_clock().now().nanoseconds * 1e-9
        due = []
        while self._held and self._held[0][0] <= now_s:
            due.append(heapq.heappop(self._held)[2])
        if due:
            self._apply(due, False)

    def _apply(self, items, static):
        logger = self._node.get_logger()
        with self.lock:
            errors = apply_transforms(self.tf_buffer, items, static)
        if items and not static:
            with self._applied_cv:
                self.applied += 1
                self._applied_cv.notify_all()
        if errors:
            self._count('tf_rejected', len(errors))
            logger.warning(
                f'{"/tf_static" if static else "/tf"}: {len(errors)} transform(s) ignored: '
                f'{errors[0]}', throttle_duration_sec=WARN_THROTTLE_S)

    def _first_delivery(self, info):
        """
        Return False for a message taken already through the other environment subscription.

        Keyed by the publisher's gid: its sequence number (or, where the middleware gives
        none, its source timestamp) must grow, which also drops an older message that one
        subscription delivers after the other delivered a newer one. rclpy 7 (Jazzy) gives no
        'publisher_gid': there the message is known by its source timestamp and sequence
        number together, the same in both deliveries.
        """
        gid = (info.get('publisher_gid') or {}).get('data')
        mark = info.get('publication_sequence_number') or info.get('source_timestamp')
        if not mark:
            return True
        if gid:
            key = bytes(gid)
            if self._env_marks.get(key, -1) >= mark:
                return False
        else:
            key = (info.get('source_timestamp'), mark)
            if key in self._env_marks:
                return False
        self._env_marks[key] = mark
        self._env_marks.move_to_end(key)
        if len(self._env_marks) > ENV_PUBLISHERS_KEPT:
            self._env_marks.popitem(last=False)
        return True

    def _on_environment(self, msg, info=None):
        if info is not None and not self._first_delivery(info):
            return
        try:
            self.weather = environment_to_weather(msg, self._world_frame)
        except (ConfigError, ValueError) as exc:
            self._count('env_rejected', 1)
            self._node.get_logger().warning(
                f'environment message ignored, keeping the last good weather: {exc}',
                throttle_duration_sec=WARN_THROTTLE_S)
