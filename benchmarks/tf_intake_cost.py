"""
CPU per /tf message: an rclpy executor dispatching each message, against the nodes' poll thread.

Usage: python benchmarks/tf_intake_cost.py [--rate 1000] [--seconds 10]
Publishes map -> odom -> base_link at --rate from a child process, and subscribes in this one in
three ways, one after the other: 'executor' (a SingleThreadedExecutor calls an empty callback
per message), 'poll raw' (a PolledGroup subscription, raw messages taken every 5 ms, not
decoded) and 'poll + decode + apply' (as the sensor nodes do: CDR decode and TransformBuffer
insert). It prints the CPU time of this process per received message.
"""

import argparse
import os
from pathlib import Path
import subprocess
import sys
import threading
import time

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402,F401,I100  (source tree first on sys.path)

PUBLISHER = """
import sys, time, rclpy
from geometry_msgs.msg import TransformStamped
from tf2_msgs.msg import TFMessage
rclpy.init()
node = rclpy.create_node('tf_intake_cost_publisher')
pub = node.create_publisher(TFMessage, '/tf', 100)
rate, t0, k = float(sys.argv[1]), time.monotonic(), 0
def tf(parent, child, stamp):
    t = TransformStamped()
    t.header.frame_id, t.child_frame_id, t.header.stamp = parent, child, stamp
    t.transform.rotation.w = 1.0
    return t
try:
    while rclpy.ok():
        k += 1
        time.sleep(max(0.0, t0 + k / rate - time.monotonic()))
        stamp = node.get_clock().now().to_msg()
        pub.publish(TFMessage(transforms=[tf('map', 'odom', stamp),
                                          tf('odom', 'base_link', stamp)]))
except Exception:   # the context goes away when the parent stops us
    pass
"""


def measure(mode, seconds):
    """Return (messages, CPU s) of this process over `seconds` in one subscription mode."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile
    from tf2_msgs.msg import TFMessage

    from ubot_lidar_sim.ros.conversions import apply_transforms, tf_items_from_cdr
    from ubot_lidar_sim.ros.rclpy_compat import PolledGroup, queued_messages
    from ubot_lidar_sim.ros.tf_buffer import TransformBuffer

    rclpy.init()
    node = rclpy.create_node('tf_intake_cost', start_parameter_services=False)
    count, stop = [0], threading.Event()
    buffer = TransformBuffer(10.0, 0.05)
    if mode == 'executor':
        node.create_subscription(TFMessage, '/tf', lambda _m: count.__setitem__(0, count[0] + 1),
                                 QoSProfile(depth=1000))
    else:
        sub = node.create_subscription(TFMessage, '/tf', lambda _m: None,
                                       QoSProfile(depth=1000), callback_group=PolledGroup(),
                                       raw=True)

        def poll():
            while not stop.wait(0.005):
                for data in queued_messages(sub, 10 ** 9):
                    count[0] += 1
                    if mode == 'poll + decode + apply':
                        apply_transforms(buffer, tf_items_from_cdr(data))
        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    end = time.monotonic() + 2.0 + seconds
    start = None
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.05)
        if start is None and time.monotonic() > end - seconds:
            start = (os.times(), count[0])
    stop.set()
    t = os.times()
    if mode != 'executor':
        poller.join()
    cpu = (t.user + t.system) - (start[0].user + start[0].system)
    n = count[0] - start[1]
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown()
    return n, cpu


def main(argv=None):
    """Run the three modes and print us of CPU per message; returns 0."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--rate', type=float, default=1000.0)
    parser.add_argument('--seconds', type=float, default=10.0)
    args = parser.parse_args(argv)
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    pub = subprocess.Popen([sys.executable, '-c', PUBLISHER, str(args.rate)],
                           stderr=subprocess.DEVNULL)
    try:
        time.sleep(2.0)
        for mode in ('executor', 'poll raw', 'poll + decode + apply'):
            n, cpu = measure(mode, args.seconds)
            print(f'{mode:22s} {n:7d} messages  {cpu:5.2f} s CPU  '
                  f'{1e6 * cpu / max(n, 1):6.1f} us per message')
    finally:
        pub.terminate()
        pub.wait(5)
    return 0


if __name__ == '__main__':
    sys.exit(main())
