"""Helpers shared by the ROS node tests (imported by name: pytest puts test/ros on sys.path)."""

import os
import time

from geometry_msgs.msg import TransformStamped
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.core.world.world import World
from ubot_lidar_sim.ros.tf_buffer import TransformError


def stamp_ns(msg):
    """Return the header stamp of msg in integer ns."""
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def subscribed(node, topic):
    """
    Return True when node's publisher of topic (a full name) has matched a subscription.

    The count the node's own publisher sees (rclpy's public Node.publishers), so the node's
    next message on topic reaches that subscription.
    """
    return any(p.topic_name == topic and p.get_subscription_count() > 0 for p in node.publishers)


def trigger_scan(node, spin_until, attempts=10):
    """
    Return (ok, why) of the next scan of a sensor node.

    A continuous trigger scans back to back on the node's worker thread: this waits (spinning)
    for its next published sweep, or its next skip and the skip's reason. A 'service' node
    scans now; a newest transform that the last sweep used already is refused
    ('no_new_transform', which is right), so the test waits 50 ms for a newer one and asks
    again.
    """
    if node.continuous:
        counts = node.stats.counts
        for _ in range(attempts):
            published, skipped = counts['published'], sum(counts['skipped'].values())
            spin_until(lambda: counts['published'] > published
                       or sum(counts['skipped'].values()) > skipped, 10.0)
            if counts['published'] > published:
                return True, 'published'
            # A worker that looked for subscribers just before the test's matched counts that
            # skip after it: the next sweep is the test's.
            if not (counts['last_skip'].startswith('no_subscribers') and node.has_subscribers()):
                break
        return False, counts['last_skip']
    ok, why = node.run_scan(on_demand=True)
    for _ in range(attempts):
        if ok or not why.startswith('no_new_transform'):
            break
        end = time.monotonic() + 0.05
        spin_until(lambda: time.monotonic() > end)
        ok, why = node.run_scan(on_demand=True)
    return ok, why


def static_transform(parent, child, xyz, stamp=None):
    """Return an identity-rotation TransformStamped parent -> child at xyz (stamp a Time, or 0)."""
    t = TransformStamped()
    t.header.frame_id, t.child_frame_id = parent, child
    if stamp is not None:
        t.header.stamp = stamp
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = xyz
    t.transform.rotation.w = 1.0
    return t


class SensorRig:
    """
    One sensor node and a probe node on one executor, in a context of their own.

    ``frame``: the probe latches map -> frame on /tf_static (1 m up) and the rig waits until
    the node has it. The probe calls the node's services (``call``) and subscribes to topics
    (``subscribe``).
    """

    def __init__(self, node_cls, world, params, frame=None, domain_id=40, **node_kwargs):
        self.ctx = rclpy.Context()
        rclpy.init(context=self.ctx, domain_id=domain_id + os.getpid() % 60)
        self.probe = rclpy.create_node('probe', context=self.ctx)
        if frame:
            self.probe.create_publisher(
                TFMessage, '/tf_static',
                QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)).publish(
                TFMessage(transforms=[static_transform('map', frame, (0.0, 0.0, 1.0))]))
        self.node = node_cls(context=self.ctx, world=world, parameter_overrides=[
            Parameter(k, value=v) for k, v in params.items()], **node_kwargs)
        self.executor = SingleThreadedExecutor(context=self.ctx)
        self.executor.add_node(self.probe)
        self.executor.add_node(self.node)
        if frame:
            assert self.spin_until(lambda: self._knows('map', frame)), f'no map -> {frame}'

    def _knows(self, parent, child):
        with self.node.intake.lock:
            try:
                self.node.tf_buffer.latest_common_time(parent, child)
            except TransformError:
                return False
        return True

    def spin_until(self, done, timeout_s=5.0):
        """Spin until done() or the timeout; return done()."""
        end = time.monotonic() + timeout_s
        while not done() and time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.02)
        return done()

    def call(self, srv_type, service, request=None, timeout_s=60.0):
        """
        Call the node's service ('sample' for ~/sample) and return its response.

        The long default covers a first sweep that compiles the numba kernels (18 s with a cold
        cache on 2 busy cores); a warm one answers in milliseconds.
        """
        name = f'{self.node.get_fully_qualified_name()}/{service}'
        client = self.probe.create_client(srv_type, name)
        assert self.spin_until(client.service_is_ready), f'{name} not offered'
        future = client.call_async(request or srv_type.Request())
        assert self.spin_until(future.done, timeout_s), f'{name} did not answer'
        return future.result()

    def subscribe(self, msg_type, topic, qos=10):
        """Return the list the probe appends each message of topic to."""
        got = []
        self.probe.create_subscription(msg_type, topic, got.append, qos)
        return got

    def close(self):
        """Destroy both nodes and the context."""
        self.executor.shutdown()
        self.node.destroy_node()
        self.probe.destroy_node()
        rclpy.shutdown(context=self.ctx)


def wall_world():
    """Return a 40 m grass plane at z = 0 with a concrete wall whose face is at x = 4.9 m."""
    return World.from_dict({'frame': 'map', 'objects': [
        {'name': 'ground', 'type': 'plane', 'size_m': [40, 40], 'material': 'grass'},
        {'name': 'wall', 'type': 'box', 'size_m': [0.2, 20, 6], 'pose': {'xyz': [5, 0, 0]},
         'material': 'concrete'}]})


def closing_factory(build):
    """
    Yield make(*args, **kw) = build(*args, **kw), closing every rig it made afterwards.

    The body of a fixture that hands a test several rigs: ``yield from closing_factory(...)``.
    """
    rigs = []

    def make(*args, **kw):
        rigs.append(build(*args, **kw))
        return rigs[-1]
    yield make
    for rig in rigs:
        rig.close()
