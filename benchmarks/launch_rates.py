"""
Rates of the sensors started as demo.launch.py starts them: four node processes, config/*.yaml.

launch_ros is not installable from PyPI, so this starts the four console scripts the launch
files name, each with its package YAML (the launch defaults) plus the given overrides, and
counts what reliable subscribers in this process receive after a warm-up: the arrival rate, the
sweeps skipped by their header stamps (a continuous trigger's stamps are one period apart), and
the lidar node's last /diagnostics (mean compute time, skip reasons).

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

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
NODES = ('lidar_3d', 'laser_scan', 'terrain_sensor', 'demo_driver')


def main(argv=None):
    """Start the four nodes, print the rate and frame of points, scan and terrain."""
    from diagnostic_msgs.msg import DiagnosticArray
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
    stamps = {'points': [], 'scan': [], 'terrain': []}
    frames = {}
    prefix = f'/{args.namespace}/' if args.namespace else ''
    for topic, msg_type in (('points', PointCloud2), ('scan', LaserScan),
                            ('terrain', TerrainSensor)):
        def on_msg(msg, topic=topic):
            got[topic].append(time.monotonic())
            stamps[topic].append(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9)
            frames[topic] = msg.header.frame_id
        node.create_subscription(msg_type, prefix + topic, on_msg,
                                 QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE))
    diags = {}

    def on_diag(msg):
        for status in msg.status:
            diags[status.name] = status
    node.create_subscription(DiagnosticArray, '/diagnostics', on_diag, 10)
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
        keep = [k for k, t in enumerate(times) if t >= t0 + args.warmup]
        window = [times[k] for k in keep]
        hz = (len(window) - 1) / (window[-1] - window[0]) if len(window) > 1 else 0.0
        # Sweeps skipped: the header stamps of a continuous trigger are one period apart,
        # a skipped sweep leaves a gap of a whole number of periods.
        st = np.diff([stamps[topic][k] for k in keep])
        period = float(np.median(st)) if st.size else 0.0
        skipped = int(np.sum(np.round(st / period) - 1)) if period > 0.0 else 0
        print(f'{prefix + topic:16s} {hz:7.2f} Hz  ({len(window)} messages, frame '
              f'{frames.get(topic)!r}, {skipped} sweeps skipped by their stamps)')
    for name, status in sorted(diags.items()):
        if 'lidar' in name:
            kv = {v.key: v.value for v in status.values}
            shown = [f'{k} {v}' for k, v in kv.items() if k.startswith('skipped.')
                     or k in ('compute_ms_mean', 'scans_published')]
            print(f'{name}: ' + ', '.join(shown))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
