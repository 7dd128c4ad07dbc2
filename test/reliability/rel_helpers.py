"""
Helpers of the reliability suite: ROS domains, node subprocesses, a probe node, RSS.

Imported by conftest.py and the test modules (pytest puts this directory on sys.path).
"""

import itertools
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
# scripts/env.sh sets UBOT_INSTALL to the install directory of the build it activates.
EXE_DIR = pathlib.Path(os.environ.get('UBOT_INSTALL', ROOT / 'install'), 'ubot_lidar_sim', 'lib',
                       'ubot_lidar_sim')
NODE_EXES = ('lidar_3d_node', 'laser_scan_node', 'terrain_sensor_node', 'demo_driver_node')
# Domains 10-109: the node tests of test/ros mostly use 120-219.
_DOMAINS = itertools.count((os.getpid() * 7) % 100)


def new_domain():
    """Return a fresh ROS_DOMAIN_ID for one test (10-109)."""
    return 10 + next(_DOMAINS) % 100


def ros_env(domain_id):
    """Return the environment of a subprocess on domain_id (localhost discovery)."""
    env = dict(os.environ)
    env.update(ROS_DOMAIN_ID=str(domain_id), PYTHONUNBUFFERED='1',
               ROS_AUTOMATIC_DISCOVERY_RANGE=env.get('ROS_AUTOMATIC_DISCOVERY_RANGE',
                                                     'LOCALHOST'))
    return env


def rss_kb(pid):
    """Return VmRSS of a process in kB (from /proc/<pid>/status)."""
    with open(f'/proc/{pid}/status', encoding='ascii') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    raise RuntimeError(f'no VmRSS for pid {pid}')


class Proc:
    """A node or CLI subprocess with stdout/stderr in files (never a full pipe)."""

    def __init__(self, argv, domain_id, tmp_path, name, cwd=ROOT):
        self.name = name
        self.out_path = tmp_path / f'{name}.out'
        self.err_path = tmp_path / f'{name}.err'
        self._out = open(self.out_path, 'w', encoding='utf-8')
        self._err = open(self.err_path, 'w', encoding='utf-8')
        self.popen = subprocess.Popen([str(a) for a in argv], stdout=self._out,
                                      stderr=self._err, env=ros_env(domain_id), cwd=cwd)
        self.pid = self.popen.pid

    def stop(self, sig=signal.SIGINT, timeout_s=5.0):
        """Send sig (None: only wait), wait; return (exit code, s taken); kill after timeout_s."""
        t0 = time.monotonic()
        if sig is not None and self.popen.poll() is None:
            self.popen.send_signal(sig)
        try:
            code = self.popen.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            code = self.popen.wait()
        return code, time.monotonic() - t0

    def close(self):
        if self.popen.poll() is None:
            self.stop(signal.SIGINT, 3.0)
        self._out.close()
        self._err.close()

    def stderr(self):
        self._err.flush()
        return self.err_path.read_text(encoding='utf-8', errors='replace')

    def stdout(self):
        self._out.flush()
        return self.out_path.read_text(encoding='utf-8', errors='replace')


# A /tf source in its own process (test pauses, such as a collection of a large heap in the
# pytest process, do not reach it): map -> odom -> base_link on the demo's 12 m loop at argv[1]
# Hz, base_link -> lidar_3d / laser on /tf_static; prints (monotonic s, sent) every 100.
TF_SOURCE = """
import sys, time
import rclpy
from geometry_msgs.msg import TransformStamped
from rclpy.qos import DurabilityPolicy, QoSProfile
from tf2_msgs.msg import TFMessage
from ubot_lidar_sim.ros.conversions import ns_to_stamp
from ubot_lidar_sim.ros.demo.scenario import loop_pose
rate = float(sys.argv[1])
rclpy.init()
node = rclpy.create_node('tf_source_1khz')
pub = node.create_publisher(TFMessage, '/tf', 100)
static = node.create_publisher(TFMessage, '/tf_static',
                               QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
def tf(parent, child, stamp, x, y, z, yaw=0.0):
    import math
    t = TransformStamped()
    t.header.frame_id, t.child_frame_id, t.header.stamp = parent, child, stamp
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = x, y, z
    t.transform.rotation.z, t.transform.rotation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    return t
clock = node.get_clock()
stamp = clock.now().to_msg()
static.publish(TFMessage(transforms=[tf('base_link', 'lidar_3d', stamp, 0.0, 0.0, 1.2),
                                     tf('base_link', 'laser', stamp, 0.3, 0.0, 0.3)]))
t0, k, sent = time.monotonic(), 0, 0
while rclpy.ok():
    k += 1
    wait = t0 + k / rate - time.monotonic()
    if wait > 0:
        time.sleep(wait)
    elif wait < -0.05:          # fell behind by more than 50 ms: drop the backlog
        t0, k = time.monotonic(), 0
    now = clock.now()
    x, y, yaw = loop_pose(now.nanoseconds * 1e-9 % 1e4, 12.0, 2.0)
    pub.publish(TFMessage(transforms=[tf('map', 'odom', now.to_msg(), 0.0, 0.0, 0.0),
                                      tf('odom', 'base_link', now.to_msg(), x, y, 0.4, yaw)]))
    sent += 1
    if sent % 100 == 0:
        print(time.monotonic(), sent, flush=True)
"""


def tf_source_argv(rate_hz):
    """Return the argv of the TF_SOURCE process at rate_hz."""
    return [sys.executable, '-c', TF_SOURCE, str(float(rate_hz))]


class _NoAliases(yaml.SafeDumper):
    """rcl's parameter parser refuses YAML aliases: write repeated values out in full."""

    def ignore_aliases(self, data):
        return True


def write_params(tmp_path, name, node_params):
    """Write {node name: {param: value}} as a ros__parameters YAML file; return its path."""
    path = tmp_path / f'{name}.params.yaml'
    path.write_text(yaml.dump({node: {'ros__parameters': p} for node, p in node_params.items()},
                              Dumper=_NoAliases), encoding='utf-8')
    return path


def node_argv(exe, params_file=None):
    """Return the argv of an installed node executable with an optional parameter file."""
    argv = [EXE_DIR / exe]
    if params_file is not None:
        argv += ['--ros-args', '--params-file', params_file]
    return argv


def cli_argv(*args):
    """Return the argv of ``python -m ubot_lidar_sim ARGS``."""
    return [sys.executable, '-m', 'ubot_lidar_sim', *args]


class Probe:
    """
    A test-side rclpy node on its own context and domain, spun in a background thread.

    ``node`` for publishers and subscriptions; ``diagnostics`` keeps the latest key/values of
    each DiagnosticStatus by name (``diag(name)``) and ``diag_history`` every sample.
    """

    def __init__(self, domain_id, name='reliability_probe', diagnostics=True):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        self._closed = False
        self.ctx = rclpy.Context()
        rclpy.init(context=self.ctx, domain_id=domain_id)
        self.node = rclpy.create_node(name, context=self.ctx)
        self.lock = threading.Lock()
        self.diag_latest = {}
        self.diag_history = []
        if diagnostics:
            from diagnostic_msgs.msg import DiagnosticArray
            self.node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diag, 50)
        # Single-threaded on purpose: rclpy's MultiThreadedExecutor takes only ~200-300
        # messages/s, far below the 1 kHz /tf of the load test.
        self.executor = SingleThreadedExecutor(context=self.ctx)
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self):
        try:
            self.executor.spin()
        except Exception:  # noqa: B902 (shutdown races end the thread quietly)
            pass

    def _on_diag(self, msg):
        now = time.monotonic()
        with self.lock:
            for status in msg.status:
                values = {kv.key: kv.value for kv in status.values}
                entry = {'t': now, 'level': int.from_bytes(status.level, 'little')
                         if isinstance(status.level, bytes) else int(status.level),
                         'message': status.message, 'values': values}
                self.diag_latest[status.name] = entry
                self.diag_history.append((status.name, entry))

    def diag(self, name):
        """Return the latest diagnostics entry whose status name starts with name (or None)."""
        with self.lock:
            for key, entry in self.diag_latest.items():
                if key.startswith(name):
                    return entry
        return None

    def wait_for(self, predicate, timeout_s=10.0, step_s=0.02):
        """Poll predicate() until true or timeout; return its last value."""
        end = time.monotonic() + timeout_s
        value = predicate()
        while not value and time.monotonic() < end:
            time.sleep(step_s)
            value = predicate()
        return value

    def close(self):
        """Stop spinning and shut the context down (idempotent)."""
        import rclpy

        if self._closed:
            return
        self._closed = True
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        if self.ctx.ok():
            rclpy.shutdown(context=self.ctx)
        self._thread.join(2.0)
