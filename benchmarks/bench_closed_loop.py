"""
Closed-loop case: the real-time factor base_sim + laser_scan + lidar_3d reach, and their sweeps.

Three node processes on the demo world, as sim.launch.py starts them: base_sim owning /clock at
real_time_factor 1, 2, 4 or 0 ('max'); at every factor each step also waits until /scan and
/points are within 2.5 sweeps of simulated time (ros/sim_pacing.py), laser_scan (30 Hz) and
lidar_3d (velodyne_vlp16, 1 sub-ray, model geometric or physical), both with use_sim_time. A
bench node drives the base on a circle (0.5 m/s, 0.25 rad/s), one /cmd_vel per 0.05 s of
simulated time as Nav2's controller_server sends them (controller_frequency 20.0 by default,
docs.nav2.org, configuring-controller-server), and counts, over `seconds` of wall time after
every topic's first message: the simulated seconds (/clock), and the sweeps per simulated
second of each sensor over the span of their stamps (30 and 10 when every sweep of simulated
time is published; scan_share and points_share divide them by the rates). It reads only the
stamps, from the serialized messages (as base_sim's sync watch does): a cloud is never
deserialized here; its best-effort readers keep 1000 messages, so a bench process held off by
a busy machine drops none.
realtime_factor = simulated s / wall s. base_cpu, laser_cpu, lidar_cpu and bench_cpu: each
process's CPU time (user + system, /proc) per simulated second over the same window (s/s): on a
shared machine they move less than the wall-time factor, and 2 cores allow a factor of at most
2 / their sum.

Usage: python benchmarks/bench_closed_loop.py [--seconds 20] [--model geometric,physical]
       [--factors 1,2,4,max]
"""

import argparse
import os
import shutil
import subprocess
import sys
import time

from common import cpu_times, process_cpu_s, steal_pct
from geometry_msgs.msg import Twist
import rclpy
import rclpy.executors
from rclpy.qos import qos_profile_sensor_data, QoSProfile
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import LaserScan, PointCloud2

from ubot_lidar_sim.ros.sim_pacing import header_stamp_s

COLUMNS = ('case', 'lidar_model', 'factor', 'sim_s', 'wall_s', 'realtime_factor',
           'scan_hz_sim', 'points_hz_sim', 'scan_share', 'points_share', 'base_cpu',
           'laser_cpu', 'lidar_cpu', 'bench_cpu', 'cpu_steal_pct', 'error')
RATES_HZ = {'scan': 30.0, 'points': 10.0}
CMD_PERIOD_S = 0.05         # simulated s between two /cmd_vel (Nav2's controller, 20 Hz)
SIM = ['-p', 'use_sim_time:=true', '-p', 'world_file:=demo']


def _commands(model, factor='max'):
    rtf = 0.0 if factor == 'max' else float(factor)
    base = ['base_sim_node', '--ros-args', *SIM, '-p', 'publish_clock:=true',
            '-p', f'real_time_factor:={rtf}', '-p', 'cmd_vel_timeout_s:=60.0',
            '-p', 'sync_topics:=[/scan, /points]']
    laser = ['laser_scan_node', '--ros-args', *SIM, '-p', 'rate_hz:=30.0']
    lidar = ['lidar_3d_node', '--ros-args', *SIM, '-p', 'preset:=velodyne_vlp16',
             '-p', 'sub_rays:=1', '-p', f'model:={model}']
    return base, laser, lidar


def measure(model, seconds, warm_s=3.0, start_limit_s=120.0, factor='max'):
    """Run the three nodes with lidar_3d's model at factor; return one bench.json row."""
    case = f'CLOSED_LOOP_{model}' + ('' if factor == 'max' else f'_x{factor}')
    commands = _commands(model, factor)
    if any(shutil.which(c[0]) is None for c in commands):
        return {'case': case, 'lidar_model': model, 'error': 'nodes not on PATH (make build; '
                'source scripts/env.sh)'}
    domain = 50 + os.getpid() % 40
    env = {**os.environ, 'ROS_DOMAIN_ID': str(domain)}
    env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    procs = [subprocess.Popen([shutil.which(c[0])] + c[1:], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for c in commands]
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=domain)
    node = rclpy.create_node('closed_loop_bench', context=ctx)
    seen = {'clock': [], 'scan': [], 'points': []}
    # a Clock starts with its builtin_interfaces/Time, as a Header does: the same offset
    node.create_subscription(Clock, '/clock', lambda m: seen['clock'].append(
        (time.monotonic(), header_stamp_s(m))), 10, raw=True)
    # best effort as the sensors publish, with room for 30 s of scans: a bench process that
    # the busy machine holds off for a while loses none from its reader's history
    qos = QoSProfile(depth=1000, reliability=qos_profile_sensor_data.reliability,
                     durability=qos_profile_sensor_data.durability)
    node.create_subscription(LaserScan, '/scan', lambda m: seen['scan'].append(
        header_stamp_s(m)), qos, raw=True)
    node.create_subscription(PointCloud2, '/points', lambda m: seen['points'].append(
        header_stamp_s(m)), qos, raw=True)
    cmd = node.create_publisher(Twist, '/cmd_vel', 10)
    twist = Twist()
    twist.linear.x, twist.angular.z = 0.5, 0.25
    executor = rclpy.executors.SingleThreadedExecutor(context=ctx)
    executor.add_node(node)
    before = cpu_times()
    try:
        row = _run(case, model, seconds, warm_s, start_limit_s, executor, cmd, twist, seen,
                   before, [p.pid for p in procs] + [os.getpid()])
        row['factor'] = factor
        for topic, rate in RATES_HZ.items():
            if row.get(f'{topic}_hz_sim') is not None:
                row[f'{topic}_share'] = round(row[f'{topic}_hz_sim'] / rate, 3)
        return row
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=ctx)
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


def _run(case, model, seconds, warm_s, start_limit_s, executor, cmd, twist, seen, before,
         pids):
    """Spin until every topic flows, then count over seconds; return the row."""
    due = [None]        # simulated s of the next /cmd_vel (None: each spin until /clock flows)

    def spin(until):
        while time.monotonic() < until:
            sim = seen['clock'][-1][1] if seen['clock'] else None
            if sim is None or due[0] is None or sim >= due[0]:
                cmd.publish(twist)
                due[0] = None if sim is None else sim + CMD_PERIOD_S
            executor.spin_once(timeout_sec=0.05)
    limit = time.monotonic() + start_limit_s
    while not all(seen.values()) and time.monotonic() < limit:
        spin(time.monotonic() + 0.2)
    if not all(seen.values()):
        return {'case': case, 'lidar_model': model,
                'error': f'no message on {[k for k, v in seen.items() if not v]}'}
    spin(time.monotonic() + warm_s)
    n_scan, n_points, sim0 = len(seen['scan']), len(seen['points']), seen['clock'][-1][1]
    cpu0, wall0 = [process_cpu_s([pid]) for pid in pids], time.monotonic()
    spin(wall0 + seconds)
    wall_s = time.monotonic() - wall0
    sim_s = seen['clock'][-1][1] - sim0
    cpu = {f'{name}_cpu': round((process_cpu_s([pid]) - c0) / sim_s, 3) if sim_s else None
           for name, pid, c0 in zip(('base', 'laser', 'lidar', 'bench'), pids, cpu0)}
    return {'case': case, 'lidar_model': model, 'sim_s': round(sim_s, 2),
            'wall_s': round(wall_s, 2), 'realtime_factor': round(sim_s / wall_s, 2),
            'scan_hz_sim': _hz(seen['scan'][n_scan:]),
            'points_hz_sim': _hz(seen['points'][n_points:]), **cpu,
            'cpu_steal_pct': steal_pct(before)}


def _hz(stamps):
    """Return the sweeps per simulated second over their own stamps' span (None: < 2)."""
    # Over the stamps, not the window: a sensor's lag behind /clock (up to 2.5 sweeps) differs
    # at the window's two ends and would move a count over the window by a sweep or two.
    span = max(stamps) - min(stamps) if len(stamps) >= 2 else 0.0
    return round((len(set(stamps)) - 1) / span, 2) if span > 0 else None


def run(seconds, models=('geometric', 'physical'), factors=('max',)):
    """Return the rows of the closed-loop cases."""
    return [measure(m, seconds, factor=f) for m in models for f in factors]


def main(argv=None):
    """Run the cases and print them; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--seconds', type=float, default=20.0)
    parser.add_argument('--model', default='geometric,physical')
    parser.add_argument('--factors', default='max', help='real_time_factor values, e.g. 1,2,4,max')
    args = parser.parse_args(argv)
    rows = run(args.seconds, tuple(m for m in args.model.split(',') if m),
               tuple(f for f in args.factors.split(',') if f))
    for row in rows:
        print(row)
    return 0


if __name__ == '__main__':
    sys.exit(main())
