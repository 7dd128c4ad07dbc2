"""~/sample and ~/get_latest of lidar_3d and laser_scan over real DDS, timer and service mode."""

import numpy as np
import pytest
from ros_helpers import stamp_ns
from sensor_msgs.msg import PointCloud2
from std_srvs.srv import Trigger

from ubot_lidar_sim.ros.laser_scan_node import LaserScanNode
from ubot_lidar_sim.ros.lidar_3d_node import Lidar3DNode
from ubot_lidar_sim.ros.services import EXPIRE_POLL_S
from ubot_lidar_sim_msgs.srv import GetLatestCloud, GetLatestScan

LIDAR = {'channels': 4, 'horizontal_samples': 60, 'sub_rays': 1, 'max_range_m': 20.0,
         'noise_enabled': False, 'rate_hz': 10.0, 'world_file': 'flat'}
LASER = {'resolution_deg': 2.0, 'max_range_m': 20.0, 'noise_enabled': False, 'rate_hz': 10.0,
         'world_file': 'flat', 'debug_rays': False}


@pytest.fixture
def rig(sensor_rig):
    def make(node_cls=Lidar3DNode, params=None, frame='lidar_3d'):
        base = LIDAR if node_cls is Lidar3DNode else LASER
        return sensor_rig(node_cls, {**base, **(params or {})}, frame)
    return make


def test_get_latest_is_empty_before_the_first_cloud_then_returns_the_sampled_one(rig):
    r = rig(params={'trigger': 'service'})
    clouds = r.subscribe(PointCloud2, 'points')
    before = r.call(GetLatestCloud, 'get_latest')
    assert not before.success and before.message == 'nothing published yet'
    assert before.cloud.width == 0 and len(before.cloud.data) == 0
    sample = r.call(Trigger, 'sample')
    assert sample.success and sample.message.startswith('published ')
    assert r.spin_until(lambda: len(clouds) == 1)
    latest = r.call(GetLatestCloud, 'get_latest')
    assert latest.success and latest.cloud.header.frame_id == 'lidar_3d'
    assert stamp_ns(latest.cloud) == stamp_ns(clouds[0])
    assert bytes(latest.cloud.data) == bytes(clouds[0].data)
    assert f'{latest.cloud.width} points' in latest.message
    # get_latest does not scan: still one cloud; each ~/sample call scans once.
    r.spin_until(lambda: False, 0.3)
    assert len(clouds) == 1
    assert r.call(Trigger, 'sample').success
    assert r.spin_until(lambda: len(clouds) == 2)


def test_sample_in_timer_mode_is_served_by_a_timer_sweep_and_adds_none(rig):
    r = rig()
    # Nobody subscribes to points, so the timer sweeps are skipped; a call still gets one.
    sample = r.call(Trigger, 'sample')
    assert sample.success, sample.message
    assert r.node.stats.counts['published'] == 1
    latest = r.call(GetLatestCloud, 'get_latest')
    assert latest.success and latest.cloud.width > 0
    # With a subscriber the stream keeps its 10 Hz while calls come in: no extra sweep.
    clouds = r.subscribe(PointCloud2, 'points')
    assert r.spin_until(lambda: len(clouds) >= 2)
    for _ in range(3):
        assert r.call(Trigger, 'sample').success
    stamps = np.array([stamp_ns(c) for c in clouds]) * 1e-9
    assert np.all(np.diff(stamps) > 0.05), np.diff(stamps)


@pytest.mark.parametrize('trigger', ['timer', 'service'])
def test_sample_without_a_pose_answers_false_naming_the_missing_frame(rig, trigger):
    r = rig(params={'trigger': trigger, 'frame_id': 'nowhere'})
    sample = r.call(Trigger, 'sample')
    assert not sample.success
    assert sample.message.startswith('no frame: no_transform')
    assert "'nowhere'" in sample.message and 'map' in sample.message


def test_laser_scan_has_the_same_pair_of_services(rig):
    r = rig(LaserScanNode, frame='laser')
    assert not r.call(GetLatestScan, 'get_latest').success
    sample = r.call(Trigger, 'sample')
    assert sample.success and ' 180 rays in ' in sample.message, sample.message
    latest = r.call(GetLatestScan, 'get_latest')
    assert latest.success and latest.scan.header.frame_id == 'laser'
    assert len(latest.scan.ranges) == 180 and '180 rays' in latest.message
    # The wall at x = 5 m: the ray along +x reads the distance to its face (4.9 m).
    ahead = latest.scan.ranges[int(round(-latest.scan.angle_min / latest.scan.angle_increment))]
    # bound: 2 cm at 4.9 m (noise off), >> the f32 hit bound
    assert ahead == pytest.approx(4.9, abs=0.02)


def test_the_sample_expiry_poll_runs_only_while_a_call_waits(rig):
    # An idle node's executor is not woken every EXPIRE_POLL_S (a fleet has nine such nodes).
    r = rig(params={'trigger': 'service'})
    # The node's timer of that period (rclpy's public Node.timers): the poll, and only it.
    polls = [t for t in r.node.timers if t.timer_period_ns == round(EXPIRE_POLL_S * 1e9)]
    assert len(polls) == 1, [t.timer_period_ns for t in r.node.timers]
    timer = polls[0]
    assert r.spin_until(timer.is_canceled)
    r.spin_until(lambda: False, 0.3)
    assert timer.is_canceled()
    assert r.call(Trigger, 'sample').success
    assert r.spin_until(timer.is_canceled)      # answered: idle again at the next poll
