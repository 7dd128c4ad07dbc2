"""
Rates of the sensors started as demo.launch.py starts them: four node processes, config/*.yaml.

launch_ros is not installable from PyPI, so this starts the four console scripts the launch
files name, each with its package YAML (the launch defaults) plus the given overrides, and
counts what reliable subscribers in this process receive after a warm-up.

    source scripts/env.sh
    python benchmarks/launch_rates.py [--seconds 20] [--warmup 8] [--namespace front]
        [--set lidar_3d:sub_rays=7 ...]
"""

import argparse
import os
from pathlib import Path
import shutil
import signal
import subprocess
import time

ROOT = Path(__file__).resolve().parents[1]
NODES = ('lidar_3d', 'laser_scan', 'terrain_sensor', 'demo_driver')


def main(argv=None):
    """Start the four nodes, print the rate and frame of points, scan and terrain."""
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import LaserScan, PointCloud2
    from ubot_lidar_sim_msgs.msg import TerrainSensor

    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--seconds', type=float, default=20.0)
    parser.add_argument('--warmup', type=float, default=8.0)
    parser.add_argument('--namespace', default='')
    parser.add_argument('--set', action='append', default=[], metavar='NODE:NAME=VALUE')
    args = parser.parse_args(argv)
    env = dict(os.environ)
    env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    procs = []
    for name in NODES:
        cmd = [shutil.which(f'{name}_node'), '--ros-args', '--params-file',
               str(ROOT / 'config' / f'{name}.yaml')]
        if args.namespace:
            cmd += ['-r', f'__ns:=/{args.namespace}']
        for item in args.set:
            node, _, assignment = item.partition(':')
            cmd += ['-p', assignment.replace('=', ':=', 1)] if node == name else []
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True))
    rclpy.init(args=[])
    node = rclpy.create_node('launch_rates')
    got = {'points': [], 'scan': [], 'terrain': []}
    frames = {}
    prefix = f'/{args.namespace}/' if args.namespace else ''
    for topic, msg_type in (('points', PointCloud2), ('scan', LaserScan),
                            ('terrain', TerrainSensor)):
        def on_msg(msg, topic=topic):
            got[topic].append(time.monotonic())
            frames[topic] = msg.header.frame_id
        node.create_subscription(msg_type, prefix + topic, on_msg,
                                 QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE))
    t0 = time.monotonic()
    try:
        while time.monotonic() - t0 < args.warmup + args.seconds:
            rclpy.spin_once(node, timeout_sec=0.05)
    finally:
        node.destroy_node()
        rclpy.shutdown()
        for proc in procs:
            proc.send_signal(signal.SIGINT)
        for proc in procs:
            try:
                proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
    for topic, times in got.items():
        window = [t for t in times if t >= t0 + args.warmup]
        hz = (len(window) - 1) / (window[-1] - window[0]) if len(window) > 1 else 0.0
        print(f'{prefix + topic:16s} {hz:7.2f} Hz  ({len(window)} messages, frame '
              f'{frames.get(topic)!r})')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
