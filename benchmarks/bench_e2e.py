"""
End-to-end case: the lidar_3d node (case A settings) publishing to a subscriber in another process.

This process publishes a moving /tf (map -> base_link at 100 Hz, static base_link -> lidar_3d) and
subscribes to `points`; the node runs in its own process. Reports the achieved rate against the
configured one, the stamp-to-receive latency and the node's peak RSS (VmHWM).
"""

import os
import shutil
import signal
import statistics
import subprocess
import time

from common import cpu_times, steal_pct
import numpy as np

from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg


def _peak_rss_mb(pid):
    try:
        with open(f'/proc/{pid}/status') as f:
            for line in f:
                if line.startswith('VmHWM:'):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float('nan')


def _children(pid):
    """Return the pids of the direct children of pid (the compute process)."""
    try:
        with open(f'/proc/{pid}/task/{pid}/children') as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _transform(msg_type, parent, child, pose, stamp):
    from scipy.spatial.transform import Rotation

    t = msg_type()
    t.header.frame_id = parent
    t.header.stamp = stamp
    t.child_frame_id = child
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = (
        float(v) for v in pose[:3, 3])
    q = Rotation.from_matrix(pose[:3, :3]).as_quat()
    (t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z,
     t.transform.rotation.w) = (float(v) for v in q)
    return t


def run(seconds, rate_hz=10.0, compute_process=False, case='E2E', compute_workers=1,
        trigger='timer', column_blocks=0, params=None):
    """
    Run the node for `seconds` and return one bench.json row (`case`).

    compute_process, compute_workers: the node's parameters (column blocks in child processes;
    the peak RSS is then the node's plus its children's, each one's own peak: an upper bound of
    the group's); trigger, column_blocks: the node's (0: auto, each block computed as soon as
    /tf covers it, ros/sweep_clock.py); params: other node parameters (name: value).
    """
    import rclpy
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from diagnostic_msgs.msg import DiagnosticArray
    from geometry_msgs.msg import TransformStamped
    from sensor_msgs.msg import PointCloud2
    from tf2_msgs.msg import TFMessage

    exe = shutil.which('lidar_3d_node')
    if exe is None:
        return [{'case': case, 'error': 'lidar_3d_node not on PATH (source scripts/env.sh)'}]
    env = dict(os.environ)
    env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    args = [exe, '--ros-args', '-p', 'preset:=velodyne_vlp16', '-p', 'world_file:=demo',
            '-p', 'sub_rays:=7', '-p', 'return_mode:=dual_strongest_last',
            '-p', 'rain_override_mm_h:=10.0', '-p', 'visibility_override_m:=1000.0',
            '-p', f'rate_hz:={rate_hz}', '-p', 'motion_distortion:=true',
            '-p', f'compute_process:={str(bool(compute_process)).lower()}',
            '-p', f'compute_workers:={int(compute_workers)}', '-p', f'trigger:={trigger}',
            '-p', f'column_blocks:={int(column_blocks)}']
    for name, value in (params or {}).items():
        args += ['-p', f'{name}:={value}']
    before = cpu_times()
    node_proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
    rclpy.init()
    node = rclpy.create_node('bench_e2e')
    try:
        tf_pub = node.create_publisher(TFMessage, '/tf', 100)
        static_pub = node.create_publisher(
            TFMessage, '/tf_static',
            QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        stamps = []

        def on_points(msg):
            now = node.get_clock().now().nanoseconds * 1e-9
            stamps.append((now, msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9))

        # Reliable like the node's default qos_reliability: a best-effort reader drops whole
        # 0.7 MB clouds when one of their fragments is late, which measures DDS, not the node.
        node.create_subscription(PointCloud2, 'points', on_points,
                                 QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE))
        diagnostics = {}

        def on_diagnostics(msg):
            for status in msg.status:
                if status.name.startswith('lidar_3d'):
                    diagnostics.clear()
                    diagnostics.update({kv.key: kv.value for kv in status.values})
                    diagnostics['message'] = status.message

        node.create_subscription(DiagnosticArray, '/diagnostics', on_diagnostics, 10)
        mount = pose_matrix_deg([0.0, 0.0, 1.5], [0.0, 0.0, 0.0])
        stamp = node.get_clock().now().to_msg()
        static_pub.publish(TFMessage(transforms=[
            _transform(TransformStamped, 'base_link', 'lidar_3d', mount, stamp)]))
        t0 = time.monotonic()
        traj = BodyTwist(pose_matrix_deg([12.0, 0.0, 0.3], [0.0, 0.0, 90.0]),
                         (2.0, 0.0, 0.0, 0.0, 0.0, 2.0 / 12.0), t0_s=t0)
        next_tf = t0
        warmup_s = 5.0
        while time.monotonic() - t0 < seconds + warmup_s and node_proc.poll() is None:
            now = time.monotonic()
            if now >= next_tf:
                pose = traj(np.array([now]))[0]
                tf_pub.publish(TFMessage(transforms=[_transform(
                    TransformStamped, 'map', 'base_link', pose, node.get_clock().now().to_msg())]))
                next_tf += 0.01
            rclpy.spin_once(node, timeout_sec=0.002)
        peak_mb = _peak_rss_mb(node_proc.pid) + sum(
            _peak_rss_mb(c) for c in _children(node_proc.pid))
    finally:
        node.destroy_node()
        rclpy.shutdown()
        node_proc.send_signal(signal.SIGINT)
        try:
            _, err = node_proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            node_proc.kill()
            _, err = node_proc.communicate()
    wall0 = stamps[0][0] + warmup_s if stamps else 0.0
    steady = [(r, s) for r, s in stamps if r >= wall0]
    if len(steady) < 2:
        return [{'case': case, 'error': 'too few clouds received',
                 'node_stderr_tail': (err or '')[-400:]}]
    span = steady[-1][0] - steady[0][0]
    achieved = (len(steady) - 1) / span
    latency = [r - s for r, s in steady]
    return [{
        'case': case, 'compute_process': bool(compute_process),
        'compute_workers': int(compute_workers), 'trigger': trigger,
        'column_blocks': int(column_blocks),
        'preset': (params or {}).get('preset', 'velodyne_vlp16'), 'params': params or {},
        'sub_rays': 7,
        'return_mode': 'dual_strongest_last', 'weather': 'rain 10 mm/h + visibility 1 km',
        'configured_rate_hz': rate_hz, 'achieved_rate_hz': round(achieved, 3),
        'achieved_over_configured': round(achieved / rate_hz, 4),
        'latency_s_median': round(statistics.median(latency), 4),
        'latency_s_max': round(max(latency), 4),
        'latency_periods_median': round(statistics.median(latency) * rate_hz, 3),
        'node_peak_rss_mb': round(peak_mb, 1), 'seconds': seconds, 'clouds': len(steady),
        'cpu_steal_pct': steal_pct(before),
        'node_diagnostics': diagnostics,
    }]
