"""
Limits a running node must keep: huge ranges, slow rates, many frame ids, early transforms.

Also the bounded lists of ``run``'s monitor.

Node processes from install/ over real DDS (a probe node publishes /tf, /clock and sets
parameters); the transform buffer, markers and monitor also directly.
"""

import math
import time

from node_rig import Clouds, diag_value, LIDAR_Z_M, SimClock, SMALL, transform
import numpy as np
import pytest
from rcl_interfaces.msg import Parameter as ParameterMsg, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.qos import DurabilityPolicy, QoSProfile
from rel_helpers import node_argv, rss_kb, tf_source_argv, write_params
from sensor_msgs.msg import LaserScan
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.ros.markers import fov_markers, MAX_RINGS
from ubot_lidar_sim.ros.tf_buffer import ExtrapolationError, FrameNotFoundError, TransformBuffer
from visualization_msgs.msg import MarkerArray

Q_ID = (0.0, 0.0, 0.0, 1.0)


def _start(procs, probe_factory, domain, tmp_path, sensors, name='node'):
    """Start one node executable per {node name: params}; return (procs, probe)."""
    exes = {'lidar_3d': 'lidar_3d_node', 'laser_scan': 'laser_scan_node'}
    path = write_params(tmp_path, name, sensors)
    started = [procs(node_argv(exes[n], path), domain, exes[n]) for n in sensors]
    return started, probe_factory(domain)


# -- item 8: max_range_m 10000 ---------------------------------------------------------------
def test_the_fov_markers_of_any_range_have_at_most_max_rings_distance_rings():
    near = fov_markers(LidarConfig(max_range_m=100.0))
    far = fov_markers(LidarConfig(max_range_m=10000.0))
    counts = [sum(len(m.points) for m in a.markers) for a in (near, far)]
    # 20 rings x 3 levels (top, bottom, horizon) x 72 arcs x 2 ends, the volume and the grid.
    assert counts[0] == counts[1] == 3024 + 816 + MAX_RINGS * 3 * 72 * 2
    labels = [m.text for m in far.markers if m.ns == 'range_labels']
    assert labels[0] == '500 m' and labels[-1] == '10000 m' and len(labels) == MAX_RINGS
    # 100 m keeps the 5 m distance grid (ros/markers.py).
    assert [m.text for m in near.markers if m.ns == 'range_labels'][:2] == ['5 m', '10 m']


@pytest.mark.ros
def test_setting_max_range_m_10000_repeatedly_keeps_points_at_rate(procs, probe_factory, domain,
                                                                   tmp_path):
    (proc,), probe = _start(procs, probe_factory, domain, tmp_path, {'lidar_3d': SMALL})
    # /tf from its own process. From this test process (which holds the whole suite's heap)
    # its timer paused for 0.21 s in a run of test/reliability; a pause past 0.5 s leaves the
    # node without a pose younger than its stale limit, and it skips sweeps whatever its
    # parameters do: the 0.7 s gaps this test showed in the full suite only.
    procs(tf_source_argv(50.0), domain, 'tf_source')
    clouds = Clouds(probe)
    markers = []
    probe.node.create_subscription(MarkerArray, '/lidar_3d/fov_markers', markers.append,
                                   QoSProfile(depth=1,
                                              durability=DurabilityPolicy.TRANSIENT_LOCAL))
    # The first sweep may compile the kernels (cold cache): a generous wait, no latency asserted.
    assert probe.wait_for(lambda: len(clouds.items) >= 10, 60.0), proc.stderr()[-2000:]
    client = probe.node.create_client(SetParameters, '/lidar_3d/set_parameters')
    assert client.wait_for_service(10.0)
    # The same node's sweeps for 4 s without sets: the machine's load (the suite, two CPU hogs)
    # slows them as it slows those during the sets, so the sets are judged against these.
    b0 = time.monotonic()
    time.sleep(4.0)
    b1 = time.monotonic()
    before = [c[1] for c in clouds.items if b0 <= c[0] <= b1]
    rss0 = rss_kb(proc.pid)
    t0, answers = time.monotonic(), []
    for k in range(40):                  # 10 sets per second for 4 s, the last 10000 m
        value = ParameterValue(type=ParameterType.PARAMETER_DOUBLE,
                               double_value=10000.0 - 500.0 * ((k + 1) % 2))
        answers.append(client.call_async(SetParameters.Request(
            parameters=[ParameterMsg(name='max_range_m', value=value)])))
        time.sleep(max(0.0, t0 + 0.1 * (k + 1) - time.monotonic()))
    t1 = time.monotonic()
    # Every set is answered (how soon depends on the machine's load: the node's executor also
    # runs its sweeps); what matters is that none is lost or refused.
    assert probe.wait_for(lambda: all(a.done() for a in answers), 60.0)
    assert all(a.result().results[0].successful for a in answers)
    during = [c[0] for c in clouds.items if t0 <= c[0] <= t1]
    # The sweeps the node skipped show as gaps between header stamps (continuous sweeps are
    # stamped one period apart): arrival times would also count this test process's own
    # pauses (its /tf source and its subscriber share it with the rest of the suite).
    stamps = [c[1] for c in clouds.items if t0 <= c[0] <= t1]
    gaps = np.diff(stamps)
    print(f'max_range_m set 10/s: {len(during) / (t1 - t0):.1f} Hz, longest gap '
          f'{gaps.max():.2f} s, RSS {(rss_kb(proc.pid) - rss0) / 1024:+.1f} MB')
    # The sets cost no sweeps: at least 60 % of the rate just before (10 Hz on an idle
    # machine), and no gap longer than 0.6 s or than twice the longest before them.
    assert len(during) / (t1 - t0) >= 0.6 * len(before) / (b1 - b0), (len(during), len(before))
    longest_before = np.diff(before).max() if len(before) > 1 else 0.0
    assert gaps.max() < max(0.6, 2.0 * longest_before), (
        gaps.max(), longest_before, proc.stderr()[-1500:])
    assert probe.wait_for(lambda: markers and any(
        m.text == '10000 m' for m in markers[-1].markers), 3.0)
    assert sum(len(m.points) for m in markers[-1].markers) <= 13000
    assert rss_kb(proc.pid) - rss0 < 40_000, (rss0, rss_kb(proc.pid))
    assert 'Traceback' not in proc.stderr()


# -- item 9: rates below 0.1 Hz ----------------------------------------------------------------
@pytest.mark.ros
def test_lidar_3d_and_laser_scan_publish_at_0_08_hz(procs, probe_factory, domain, tmp_path):
    slow = {'use_sim_time': True, 'rate_hz': 0.08, 'world_file': 'flat'}
    _, probe = _start(procs, probe_factory, domain, tmp_path, {
        'lidar_3d': {**SMALL, **slow}, 'laser_scan': {**slow, 'frame_id': 'laser'}})
    # Simulated time 10x: a 12.5 s sweep takes 1.25 s of the test.
    SimClock(probe, frames=('lidar_3d', 'laser'), speed=10.0)
    clouds, scans = Clouds(probe), []
    probe.node.create_subscription(LaserScan, 'scan', scans.append, 10)
    assert probe.wait_for(lambda: clouds.items and scans, 60.0), \
        [(d, e['message']) for d, e in probe.diag_latest.items()]
    cloud = clouds.items[0][2]
    # bound: 5 cm, flat ground (noise off) against the float32 hit
    assert np.allclose(cloud['z'], -LIDAR_Z_M, atol=0.05)       # the flat ground below
    # bound: float64 of exact or summed decimals, ulps; approx / isclose rel 1e-6 / 1e-9
    assert scans[0].scan_time == pytest.approx(12.5)


@pytest.mark.ros
def test_a_rate_whose_sweep_the_node_cannot_cover_is_refused(procs, domain, tmp_path):
    path = write_params(tmp_path, 'slower', {'lidar_3d': {'rate_hz': 0.005}})
    proc = procs(node_argv('lidar_3d_node', path), domain, 'lidar_3d_node')
    code, _ = proc.stop(None, timeout_s=30.0)
    lines = proc.stderr().strip().splitlines()
    assert code == 2 and len(lines) == 1, lines
    assert 'rate_hz: got 0.005, allowed >= 0.01 Hz on a node' in lines[0]


# -- item 10: many frame ids -----------------------------------------------------------------
def test_1000_new_frames_per_second_stay_bounded_and_lookups_stay_right():
    buf = TransformBuffer(cache_time_s=10.0, tolerance_s=0.05)
    most = 0
    for k in range(36000):               # 36 s of 1000 new child frames per second
        t = 100.0 + k * 1e-3
        buf.set_transform('map', f'robot{k}/base', t, (1.0, 0.0, 0.0), Q_ID)
        if k % 10 == 0:                  # and one frame that keeps talking, at 100 Hz
            buf.set_transform('map', 'base_link', t, (t, 0.0, 0.0), Q_ID)
        most = max(most, buf.frame_count())
    # A 10 s history pruned every 1 s: at most 11 s of frames, plus map and base_link.
    assert most <= 11_002, most
    # bound: float64 of exact or summed decimals, ulps; approx / isclose rel 1e-6 / 1e-9
    assert buf.lookup('map', 'base_link', 135.5)[0, 3] == pytest.approx(135.5)
    assert buf.lookup('map', 'robot35990/base', 135.99)[0, 3] == 1.0
    with pytest.raises(FrameNotFoundError, match=r"frame 'robot1/base' does not exist \(known: "
                                                 r'1\d{4} frames, e\.g\. \['):
        buf.lookup('map', 'robot1/base', 135.0)


def test_a_frame_that_still_has_children_is_kept_and_reports_its_age():
    buf = TransformBuffer(cache_time_s=10.0)
    buf.set_transform('map', 'odom', 0.0, (0.0, 0.0, 0.0), Q_ID)        # then silent
    for k in range(300):
        buf.set_transform('odom', 'base_link', 0.1 * k, (0.0, 0.0, 0.0), Q_ID)
    assert {'map', 'odom', 'base_link'} <= buf.frames()
    with pytest.raises(ExtrapolationError, match="'map' -> 'odom'"):
        buf.lookup('map', 'base_link', 29.0)


@pytest.mark.ros
def test_a_node_fed_1000_new_frames_per_second_keeps_its_tree_bounded(
        procs, probe_factory, domain, tmp_path):
    (proc,), probe = _start(procs, probe_factory, domain, tmp_path, {
        'lidar_3d': {**SMALL, 'use_sim_time': True, 'rate_hz': 2.0}})
    clock = SimClock(probe, speed=10.0)
    clouds = Clouds(probe)
    assert probe.wait_for(lambda: len(clouds.items) >= 2, 60.0), proc.stderr()[-2000:]
    count = [0]

    def new_frames(now_ns):              # 100 a tick of 0.1 simulated s: 1000 per simulated s
        count[0] += 100
        return [transform(f'robot{count[0] + i}/base', now_ns, parent='lidar_3d', z_m=0.0)
                for i in range(100)]
    clock.extra = new_frames
    frames, t0 = [], time.monotonic()
    while time.monotonic() < t0 + 4.0:   # 40 s of simulated time: 40,000 frame ids
        time.sleep(0.25)
        frames.append(int(diag_value(probe, 'tf_frames', default=0)))
    assert count[0] >= 25_000, count[0]
    assert max(frames) <= 12_000, frames
    late = clouds.since(t0 + 2.0)
    assert late, 'no cloud while the frames came'
    # bound: 5 cm, flat ground (noise off) against the float32 hit
    assert all(np.allclose(c[2]['z'], -LIDAR_Z_M, atol=0.05) for c in late)


# -- item 12: a transform stamped ahead of the clock --------------------------------------------
@pytest.mark.ros
def test_a_transform_stamped_4_s_ahead_is_held_and_does_not_outlive_its_publisher(
        procs, probe_factory, domain, tmp_path):
    (proc,), probe = _start(procs, probe_factory, domain, tmp_path, {'lidar_3d': SMALL})
    from test_faults import TfSource
    tf = TfSource(probe)
    clouds = Clouds(probe)
    assert probe.wait_for(lambda: len(clouds.items) >= 10, 60.0), proc.stderr()[-2000:]
    ahead = probe.node.get_clock().now().nanoseconds + 4_000_000_000
    tf.pub.publish(TFMessage(transforms=[transform('lidar_3d', ahead, x_m=10.0)]))
    t_ahead = time.monotonic()
    time.sleep(1.0)
    tf.on = False
    t_stop = time.monotonic()
    time.sleep(4.5)                      # past the stamp of the transform sent ahead
    while_on = [c for c in clouds.items if t_ahead + 0.2 <= c[0] <= t_stop]
    after = clouds.since(t_stop + 0.5 + 0.3)
    assert len(while_on) >= 5, len(while_on)      # held back, it blocks nothing meanwhile
    assert after == [], [(round(c[0] - t_stop, 2), c[1]) for c in after]
    reasons = {k for k, v in probe.diag('lidar_3d')['values'].items()
               if k.startswith('skipped.') and int(v)}
    assert 'skipped.stale_transform' in reasons, reasons
    tf.on = True
    t_back = time.monotonic()
    assert probe.wait_for(lambda: clouds.since(t_back), 3.0)


# -- item 19: the run monitor's lists ----------------------------------------------------------
def test_the_monitor_keeps_counts_not_lists_and_its_rates_are_right():
    from ubot_lidar_sim.ros.demo.monitor import RECENT_KEPT, TopicRate

    rate = TopicRate(skip_s=1.0)
    for k in range(100_000):             # 1000 s at 100 Hz
        rate.add(k % 7, 'clear' if k < 60_000 else 'fog', now_s=10.0 + 0.01 * k)
    assert len(rate.recent) == RECENT_KEPT
    assert rate.count == 100_000 and rate.phase_counts == {'clear': 60_000, 'fog': 40_000}
    # bound: float64 of exact or summed decimals, ulps; approx / isclose rel 1e-6 / 1e-9
    assert rate.mean_hz() == pytest.approx(100.0)
    assert rate.recent_hz(now_s=10.0 + 0.01 * 99_999) == pytest.approx(100.0)
    assert rate.mean_size() == pytest.approx(np.mean(np.arange(100_000) % 7))
    assert not any(isinstance(v, list) for v in vars(rate).values())


def test_the_snapshot_recorder_keeps_the_last_terrain_samples_only():
    from std_msgs.msg import Header
    from ubot_lidar_sim.ros.demo.snapshots import HISTORY_KEPT, Recorder
    from ubot_lidar_sim_msgs.msg import TerrainSensor

    rec = Recorder(lambda *a: None)
    msg = TerrainSensor(header=Header(), veh_hit_dist=1.0, tire_hit_dist=[0.0] * 4,
                        hit_flg=[True] * 5)
    for k in range(HISTORY_KEPT + 500):
        msg.header.stamp.sec = k
        rec.on_terrain(msg)
    assert [len(v) for v in rec.history.values()] == [HISTORY_KEPT] * 3
    # bound: float64 of exact or summed decimals, ulps; approx / isclose rel 1e-6 / 1e-9
    assert rec.history['t_s'][-1] == HISTORY_KEPT + 499 and math.isclose(
        rec.history['t_s'][0], 500)
