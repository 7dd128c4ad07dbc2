"""A fleet in one process per robot (pipeline/robot_processes.py): real processes, real DDS."""

import argparse
import os
from pathlib import Path
import signal
import subprocess
import sys
import time

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import LaserScan

from ubot_lidar_sim.pipeline import robot_processes
from ubot_lidar_sim.pipeline.run_args import add_arguments

TREE = Path(__file__).resolve().parents[2]
ROBOTS = 3
# Small, geometric sensors: the test is about processes, not rates.
SETS = ('lidar_3d:model=geometric', 'lidar_3d:channels=4', 'lidar_3d:horizontal_samples=90')


def _args(*argv):
    return add_arguments(argparse.ArgumentParser()).parse_args(list(argv))


def test_a_childs_argv_runs_robot_k_alone_with_the_runs_options_and_no_view():
    args = _args('--robots', '3', '--seconds', '7', '--preset', 'velodyne_vlp16', '--set',
                 'lidar_3d:sub_rays=1', '--view', '--snapshots', 'out/')
    argv = robot_processes.child_argv(args, 2)
    assert argv[:4] == [sys.executable, '-m', 'ubot_lidar_sim', 'run']
    assert argv[4:] == ['--robots', '3', '--robot', '2', '--seconds', '7.0', '--preset',
                        'velodyne_vlp16', '--set', 'lidar_3d:sub_rays=1']
    parsed = _args(*argv[4:])
    assert (parsed.robot, parsed.view, parsed.snapshots) == (2, False, None)


def _children(pid):
    """Return the pids of pid's child processes."""
    out = []
    for task in os.listdir(f'/proc/{pid}/task'):
        try:
            out += [int(p) for p in open(f'/proc/{pid}/task/{task}/children').read().split()]
        except OSError:
            pass
    return out


def _cmdline(pid):
    try:
        return open(f'/proc/{pid}/cmdline', 'rb').read().split(b'\0')
    except OSError:
        return []


def _alive(pid):
    """Return True while pid runs (a zombie has ended: its parent has not reaped it yet)."""
    try:
        return open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[0] not in 'ZX'
    except OSError:
        return False


def _wait(condition, timeout_s):
    end = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < end:
        time.sleep(0.05)
    return condition()


@pytest.fixture
def fleet_run():
    """Start `run --robots 3` on a fresh domain; yield (runner Popen, {robot: scans heard})."""
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    domain = 10 + (os.getpid() + 71) % 80
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), PYTHONPATH=os.pathsep.join(
        p for p in (str(TREE), os.environ.get('PYTHONPATH', '')) if p))
    argv = [sys.executable, '-m', 'ubot_lidar_sim', 'run', '--robots', str(ROBOTS)]
    proc = subprocess.Popen(argv + [a for s in SETS for a in ('--set', s)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=domain)
    node = rclpy.create_node('fleet_probe', context=ctx)
    heard = dict.fromkeys(range(1, ROBOTS + 1), 0)
    for k in heard:
        node.create_subscription(LaserScan, f'/robot{k}/scan',
                                 lambda _m, k=k: heard.__setitem__(k, heard[k] + 1),
                                 qos_profile_sensor_data)
    executor = SingleThreadedExecutor(context=ctx)
    executor.add_node(node)

    def spin_until(condition, timeout_s):
        end = time.monotonic() + timeout_s
        while not condition() and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
        return condition()
    try:
        yield proc, heard, spin_until
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=ctx)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.ros
def test_a_fleet_runs_robots_2_to_n_in_a_process_each_and_sigint_stops_them_all(fleet_run):
    proc, heard, spin_until = fleet_run
    # Generous: three processes import numba, open3d and rclpy on 2 shared cores.
    assert spin_until(lambda: all(v >= 3 for v in heard.values()), 120.0), heard
    kids = [p for p in _children(proc.pid) if b'--robot' in _cmdline(p)]
    robots = sorted(int(_cmdline(p)[_cmdline(p).index(b'--robot') + 1]) for p in kids)
    assert robots == [2, 3]
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-2000:]
    assert not any(_alive(p) for p in kids)
    assert 'Traceback' not in err, err[-2000:]


@pytest.mark.ros
def test_the_robots_processes_end_with_the_runner_when_it_is_killed(fleet_run):
    proc, heard, spin_until = fleet_run
    assert spin_until(lambda: all(v >= 1 for v in heard.values()), 120.0), heard
    kids = [p for p in _children(proc.pid) if b'--robot' in _cmdline(p)]
    assert len(kids) == ROBOTS - 1
    proc.kill()                 # no finally runs: the children's death signal stops them
    proc.wait()
    # Each child stops as a node does on SIGTERM (its sweeps end, its compute process too).
    assert _wait(lambda: not any(_alive(p) for p in kids), 60.0)


@pytest.mark.parametrize('argv, expected', [
    (('--robots', '3'), True), (('--robots', '3', '--one-process'), False),
    (('--robots', '1'), False), (('--robots', '3', '--robot', '2'), False)])
def test_a_fleet_runs_in_a_process_per_robot_unless_one_process_or_a_child(argv, expected):
    assert robot_processes.in_processes(_args(*argv)) is expected
