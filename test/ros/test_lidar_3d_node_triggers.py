"""lidar_3d node over real rclpy + DDS: triggers, the sample service, parameters, timing."""

import math
import os
import subprocess
import sys

from diagnostic_msgs.msg import DiagnosticArray
from lidar_node_rig import CONCRETE, SENSOR_Z, SMALL, WALL_FACE_X
import numpy as np
import pytest
import rclpy
from rclpy.parameter import Parameter
from ros_helpers import static_transform
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.ros.conversions import pointcloud2_to_array, stamp_to_s
from ubot_lidar_sim.ros.lidar_3d_node import Lidar3DNode


def _compute_processes_took_over(diagnostics):
    """Return True when a /diagnostics message says all but 5 published sweeps were theirs."""
    values = {kv.key: kv.value for kv in diagnostics.status[0].values}
    return int(values['compute_in_process_sweeps']) < int(values['scans_published']) - 5


def _call_sample(rig):
    client = rig.probe.create_client(Trigger, 'lidar_3d/sample')
    assert rig.spin_until(client.service_is_ready, 5.0)
    rig.spin_until(lambda: False, 0.3)   # let TF arrive; no timer: nothing is published
    future = client.call_async(Trigger.Request())
    assert rig.spin_until(future.done, 5.0)
    return future.result()


def test_service_trigger_publishes_one_frame_per_call(lidar_rig):
    rig = lidar_rig({'trigger': 'service'})
    result = _call_sample(rig)
    assert rig.spin_until(lambda: len(rig.clouds) == 1, 3.0)
    assert result.success and 'published' in result.message
    rig.spin_until(lambda: False, 0.3)
    assert len(rig.clouds) == 1


def test_service_trigger_without_a_transform_fails_with_the_reason(lidar_rig):
    rig = lidar_rig({'trigger': 'service', 'frame_id': 'nowhere'})
    result = _call_sample(rig)
    assert not result.success
    assert 'no_transform' in result.message and 'nowhere' in result.message
    assert rig.clouds == []


def test_out_of_range_parameter_set_is_refused_and_live_changes_apply(lidar_rig):
    rig = lidar_rig()
    node = rig.node
    result = node.set_parameters([Parameter('max_range_m', value=1e6)])[0]
    assert not result.successful and 'out of range' in result.reason
    result = node.set_parameters([Parameter('max_range_m', value=0.05)])[0]
    assert not result.successful and 'min_range_m' in result.reason
    result = node.set_parameters([Parameter('max_rays_per_scan', value=100)])[0]
    assert not result.successful and 'max_rays_per_scan' in result.reason
    result = node.set_parameters([Parameter('channels', value=32)])[0]
    assert not result.successful and 'read-only' in result.reason
    assert node.config.max_range_m == 30.0 and node.config.channels == 8
    rig.clouds_after(1)
    t_set = node.get_clock().now().nanoseconds * 1e-9
    assert node.set_parameters([Parameter('max_range_m', value=5.0)])[0].successful
    # The first sweep that starts after the set: the clouds of sweeps begun before it may
    # still arrive (computed, or queued for this executor, on a busy machine).
    later = [m for m in rig.clouds_after(6, timeout_s=15.0) if stamp_to_s(m.header.stamp) > t_set]
    assert later, 'no sweep started after the set'
    pts = pointcloud2_to_array(later[0])
    assert len(pts) > 0 and pts['range'].max() <= 5.0


def test_a_set_of_ignored_objects_not_in_the_world_is_refused_and_the_node_keeps_sweeping(
        lidar_rig, lidar_world):
    rig = lidar_rig()
    node = rig.node
    rig.clouds_after(1)
    result = node.set_parameters([Parameter('ignored_objects', value=['building'])])[0]
    assert not result.successful and "ignored_objects: got 'building'" in result.reason
    assert 'wall' in result.reason and node.config.ignored_objects == ()
    rig.clouds_after(2)         # still sweeping on the value it had
    assert node.set_parameters([Parameter('ignored_objects', value=['wall'])])[0].successful
    pts = pointcloud2_to_array(rig.clouds_after(2)[-1])
    assert len(pts) > 0 and not np.any(pts['material'] == CONCRETE)     # the wall is gone


def test_ignored_objects_not_in_the_world_stop_the_node_at_start_up(lidar_world):
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=120 + os.getpid() % 100)
    try:
        with pytest.raises(ConfigError, match="ignored_objects: got 'building'"):
            Lidar3DNode(context=ctx, world=lidar_world, parameter_overrides=[
                Parameter(k, value=v) for k, v in {**SMALL, 'ignored_objects': ['building']}
                .items()])
    finally:
        rclpy.shutdown(context=ctx)


def test_a_scan_that_cannot_keep_up_is_counted_and_reported_not_queued(lidar_rig, capfd):
    rig = lidar_rig({'rate_hz': 500.0})
    diags = []
    rig.probe.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 10)
    rig.clouds_after(3)
    assert rig.spin_until(lambda: any(
        kv.key == 'skipped.overrun' for d in diags for s in d.status for kv in s.values), 4.0)
    values = {kv.key: kv.value for kv in diags[-1].status[0].values}
    assert int(values['skipped.overrun']) > 0
    # ... and said on the console: the stamps are not one period apart there.
    assert 'falling behind /tf: skipped' in capfd.readouterr().err
    assert float(values['compute_ms_mean']) > 0.0 and int(values['points_last']) > 0
    for key in ('rate_hz', 'scans_published', 'scans_skipped', 'beams_per_scan'):
        assert key in values


def test_bad_transforms_are_ignored_and_the_node_keeps_publishing(lidar_rig):
    rig = lidar_rig()
    rig.clouds_after(1)
    bad = static_transform('map', 'base_link', (math.nan, 0.0, 0.0),
                           rig.probe.get_clock().now().to_msg())
    cyc = static_transform('lidar_3d', 'map', (0.0, 0.0, 0.0),
                           rig.probe.get_clock().now().to_msg())
    rig.tf_pub.publish(TFMessage(transforms=[bad, cyc]))
    assert rig.spin_until(lambda: rig.node.stats.counts['tf_rejected'] >= 2, 3.0)
    pts = pointcloud2_to_array(rig.clouds_after(2)[-1])
    assert np.all(np.isfinite(pts['x'])) and len(pts) > 0


def test_use_sim_time_stamps_follow_the_clock_topic(lidar_rig):
    rig = lidar_rig(sim_time_s=1000.0)
    msg = rig.clouds_after(2)[-1]
    stamp = stamp_to_s(msg.header.stamp)
    assert 1000.0 < stamp < 1010.0
    pts = pointcloud2_to_array(msg)
    # bound: 2 cm at 10 m (noise off): the points' f32 hit bound is 4e-5 m, the rest TF timing
    np.testing.assert_allclose(pts[pts['material'] == CONCRETE]['x'], WALL_FACE_X, atol=0.02)


def test_default_sweeps_are_stamped_whole_periods_apart_under_load(lidar_rig):
    # The default config and trigger (a VLP-16-sized sweep, 'timer'), two busy processes on a
    # two-core machine: every stamp lies on the period grid of the first, and a gap longer
    # than one period is a skipped sweep that /diagnostics counts.
    default = LidarConfig()
    hogs = [subprocess.Popen([sys.executable, '-c', 'while True: pass']) for _ in range(2)]
    try:
        rig = lidar_rig({name: getattr(default, name) for name in SMALL}, speed_m_s=2.0)
        rig.clouds_after(2, timeout_s=20.0)     # the first sweep loads the compiled kernels
        skipped0 = sum(rig.node.stats.counts['skipped'].values())
        clouds = rig.clouds_after(10, timeout_s=30.0)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    stamps = np.array([c.header.stamp.sec * 10**9 + c.header.stamp.nanosec for c in clouds])
    gaps = np.diff(stamps)
    assert np.all(gaps > 0) and np.all(gaps % 100_000_000 == 0), gaps
    extra = int(gaps.sum() // 100_000_000) - len(gaps)
    assert extra == 0 or sum(rig.node.stats.counts['skipped'].values()) > skipped0, \
        (gaps, rig.node.stats.counts)


@pytest.mark.parametrize('workers', [1, 2])
def test_stream_trigger_publishes_back_to_back_sweeps_of_the_core_blocks(
        lidar_rig, lidar_world, workers):
    # workers 2: block j is computed by compute process j % 2 (in the node while they start).
    rig = lidar_rig({'trigger': 'stream', 'column_blocks': 4, 'compute_workers': workers},
                    speed_m_s=2.0)
    rig.clouds_after(2)         # the first sweep loads the compiled kernels (~0.5 s): a jump
    if workers > 1:     # the node computes the sweeps itself until its compute processes start
        diags = []
        rig.probe.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 10)
        assert rig.spin_until(lambda: diags and _compute_processes_took_over(diags[-1]), 20.0)
    overruns = rig.node.stats.counts['skipped'].get('overrun', 0)
    clouds = rig.clouds_after(5)
    stamps = [c.header.stamp.sec * 10**9 + c.header.stamp.nanosec for c in clouds]
    # Each sweep starts where the one before ended: stamps exactly one period apart, unless the
    # node fell two sweeps behind (a stalled CI machine), which counts as overrun.
    assert np.diff(stamps).tolist() == [100_000_000] * 4 or \
        rig.node.stats.counts['skipped'].get('overrun', 0) > overruns, rig.node.stats.counts
    # The cloud is the core's sweep in 4 column blocks, from the poses TF interpolates (the
    # draws of SMALL's noise-free model do not change its points).
    sim = LidarSimulator(rig.node.config, lidar_world, rig.node.materials)

    def pose_at(times_s):
        poses = np.tile(np.eye(4), (len(times_s), 1, 1))
        poses[:, 0, 3] = rig.base_x(np.asarray(times_s))
        poses[:, 2, 3] = SENSOR_Z
        return poses

    core = sim.scan(pose_at, stamps[-1] * 1e-9).points
    got = pointcloud2_to_array(clouds[-1])
    assert len(got) == len(core) > 100
    for name in ('x', 'y', 'z'):
        # bound: float32 points from the same scan: two roundings of x at 10 m (1e-6) << 1e-4
        np.testing.assert_allclose(got[name], core[name], atol=1e-4)
    np.testing.assert_array_equal(got['ring'], core['ring'])


def test_stream_trigger_serves_sample_with_its_next_sweep(lidar_rig):
    rig = lidar_rig({'trigger': 'stream', 'column_blocks': 2})
    rig.clouds_after(2)
    result = _call_sample(rig)
    assert result.success and 'published' in result.message
