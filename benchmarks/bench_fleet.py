"""
Fleet case: N robots x 3 sensors on this machine, every sensor's rate.

`python -m ubot_lidar_sim run --robots N` (the runner's defaults: the demo world, each lidar_3d
in its own compute process, a process per robot)
in a subprocess; a subscriber here counts every sensor's messages
of every robot over `seconds` after a warm-up. FLEET_3x3: 3 robots at the defaults (physical
model); FLEET_<N>_physical and FLEET_<N>_geometric: lidar_3d model physical (the defaults) or
geometric, N = 1, 2, ... until a sensor of some
robot stays more than MISS_PCT under its rate (the largest N that keeps all is the row before);
FLEET_<N>_geometric_one_process: the last of those with ``--one-process`` (one GIL).
"""

import os
from pathlib import Path
import signal
import subprocess
import sys
import time

from common import cpu_times, steal_pct
import rclpy
import rclpy.executors
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import LaserScan, PointCloud2

from ubot_lidar_sim.pipeline.fleet import MAX_ROBOTS, robot_namespace
from ubot_lidar_sim_msgs.msg import TerrainSensor

COLUMNS = ('case', 'robots', 'sensors', 'slowest_hz', 'set_hz', 'met', 'run_cpu_pct', 'load_1min',
           'cpu_steal_pct')
MISS_PCT = 5.0          # a sensor under 95 % of its set rate misses it
RATES_HZ = {'points': 10.0, 'scan': 30.0, 'terrain': 50.0}      # the runner's defaults
ROOT = Path(__file__).resolve().parents[1]
_RUNS = [0]             # a DDS domain per run: the last run's participants may linger


def _robot_pids(pid):
    """Return pid and its robots' processes (a fleet runs robots 2..N in `run --robot K`)."""
    kids = []
    for task in os.listdir(f'/proc/{pid}/task') if os.path.isdir(f'/proc/{pid}/task') else ():
        try:
            kids += [int(k) for k in open(f'/proc/{pid}/task/{task}/children').read().split()]
        except OSError:
            pass
    return [pid] + [k for k in kids if b'--robot\0' in _read(f'/proc/{k}/cmdline')]


def _read(path):
    try:
        with open(path, 'rb') as fh:
            return fh.read()
    except OSError:
        return b''


def _cpu_s(pid):
    """Return the CPU time (user + system, s) the run (its robots' processes) used so far."""
    stats = [_read(f'/proc/{p}/stat') for p in _robot_pids(pid)]
    if not stats[0]:
        return None         # the runner is gone
    fields = [s.rsplit(b')', 1)[1].split() for s in stats if s]
    return sum(int(f[11]) + int(f[12]) for f in fields) / os.sysconf('SC_CLK_TCK')


def measure(n, seconds, warm_s=3.0, sets=(), start_limit_s=90.0, usage=None, flags=()):
    """
    Return {(robot, topic): rate Hz} of a run of n robots over seconds.

    Counted from warm_s after every topic's first message (the start takes longer on a loaded
    machine; none within start_limit_s: those topics count 0). usage (a dict) gets the run
    process's CPU share over those seconds (``run_cpu_pct``, 100 = one core) and the 1-minute
    load average at their end (``load_1min``): on shared cores the rates depend on both.
    """
    _RUNS[0] += 1
    domain = 60 + (os.getpid() + 7 * _RUNS[0]) % 40
    env = {**os.environ, 'ROS_DOMAIN_ID': str(domain)}
    argv = [sys.executable, '-m', 'ubot_lidar_sim', 'run', '--robots', str(n), *flags] + [
        a for s in sets for a in ('--set', s)]
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=domain)
    node = rclpy.create_node('fleet_bench', context=ctx)
    stamps = {}
    types = {'points': PointCloud2, 'scan': LaserScan, 'terrain': TerrainSensor}
    for k in range(1, n + 1):
        ns = robot_namespace(k, n)
        for topic, cls in types.items():
            key = (k, topic)
            stamps[key] = []
            node.create_subscription(cls, f'/{ns}/{topic}' if ns else f'/{topic}',
                                     lambda _m, key=key: stamps[key].append(time.monotonic()),
                                     qos_profile_sensor_data)
    executor = rclpy.executors.SingleThreadedExecutor(context=ctx)
    executor.add_node(node)
    limit = time.monotonic() + start_limit_s
    try:
        while time.monotonic() < limit and not all(stamps.values()):
            executor.spin_once(timeout_sec=0.05)
        start = time.monotonic() + warm_s
        while time.monotonic() < start:
            executor.spin_once(timeout_sec=0.05)
        cpu0 = _cpu_s(proc.pid)
        while time.monotonic() < start + seconds:
            executor.spin_once(timeout_sec=0.05)
        cpu1 = _cpu_s(proc.pid)
        if usage is not None and None not in (cpu0, cpu1):
            usage.update(run_cpu_pct=round(100.0 * (cpu1 - cpu0) / seconds),
                         load_1min=round(os.getloadavg()[0], 1))
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=ctx)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    end = start + seconds
    return {key: sum(1 for t in ts if start <= t < end) / seconds
            for key, ts in stamps.items()}


def _row(case, n, rates, steal, usage=None):
    """One bench.json row: every robot's rate per sensor, the slowest, met or not."""
    slowest = {topic: min(r for (k, t), r in rates.items() if t == topic) for topic in RATES_HZ}
    met = all(slowest[t] >= RATES_HZ[t] * (1.0 - MISS_PCT / 100.0) for t in RATES_HZ)
    return {'case': case, 'robots': n, 'sensors': 3 * n,
            'rates_hz': {f'robot{k}/{t}': round(r, 2) for (k, t), r in sorted(rates.items())},
            'slowest_hz': {t: round(r, 2) for t, r in slowest.items()},
            'set_hz': RATES_HZ, 'met': met, 'cpu_steal_pct': steal, **(usage or {})}


def run(seconds=20.0):
    """FLEET_3x3, then FLEET_<N>_geometric for N = 1.. until one misses; bench.json rows."""
    rows = []
    before, usage = cpu_times(), {}
    rows.append(_row('FLEET_3x3', 3, measure(3, seconds, usage=usage), steal_pct(before), usage))
    for model in ('physical', 'geometric'):
        for n in range(1, MAX_ROBOTS + 1):
            before, usage = cpu_times(), {}
            rows.append(_row(f'FLEET_{n}_{model}', n,
                             measure(n, seconds, sets=(f'lidar_3d:model={model}',), usage=usage),
                             steal_pct(before), usage))
            if not rows[-1]['met']:
                break
    # The same fleet in one process (one GIL), beside the largest one measured above.
    n = rows[-1]['robots']
    before, usage = cpu_times(), {}
    rows.append(_row(f'FLEET_{n}_geometric_one_process', n,
                     measure(n, seconds, sets=('lidar_3d:model=geometric',), usage=usage,
                             flags=('--one-process',)), steal_pct(before), usage))
    return rows


if __name__ == '__main__':
    import json
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
    print(json.dumps(run(seconds), indent=1))
