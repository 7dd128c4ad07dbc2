"""
base_sim in a closed loop over real DDS, on simulated time faster than the wall clock.

A small controller written here (pure pursuit on /odom, slowing on /scan) drives the base
around a box to a goal; the laser_scan node follows base_sim's /clock. And at real_time_factor
0 ('max') the laser publishes every sweep of simulated time.
"""

import math
import time

from base_sim_rig import BaseRig, boxes_world, twist
import pytest
from sensor_msgs.msg import LaserScan

PATH = ((0.0, 0.0), (2.0, 0.0), (4.0, 1.8), (6.0, 0.0), (9.0, 0.0))
BOXES = [(4.0, 0.0, 1.0, 1.0), (6.5, 2.0, 1.0, 1.0)]
LOOKAHEAD_M = 0.8
SPEED_M_S = 0.8
GOAL_TOLERANCE_M = 0.25
SIM = {'use_sim_time': True}


def _yaw(q):
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def _stamp_s(msg):
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def _sync_timeouts(r):
    """Return base_sim's sync_timeouts count from its diagnostics."""
    values = {v.key: v.value for v in r.node.diagnostics().status[0].values}
    return int(values['sync_timeouts'])


def _lookahead(x, y):
    """Return the first point of PATH, past the closest one, LOOKAHEAD_M or more from (x, y)."""
    points = [(ax + (bx - ax) * k / 20, ay + (by - ay) * k / 20)
              for (ax, ay), (bx, by) in zip(PATH, PATH[1:]) for k in range(21)]
    start = min(range(len(points)),
                key=lambda i: math.hypot(points[i][0] - x, points[i][1] - y))
    for px, py in points[start:]:
        if math.hypot(px - x, py - y) >= LOOKAHEAD_M:
            return px, py
    return PATH[-1]


class PurePursuit:
    """Pure pursuit on /odom; the speed falls as /scan sees something close ahead."""

    def __init__(self, rig):
        self.rig = rig
        self.done = False

    def on_odom(self, msg):
        p = msg.pose.pose
        x, y, yaw = p.position.x, p.position.y, _yaw(p.orientation)
        if math.hypot(PATH[-1][0] - x, PATH[-1][1] - y) < GOAL_TOLERANCE_M:
            self.done = True
            self.rig.cmd.publish(twist(0.0))
            return
        tx, ty = _lookahead(x, y)
        c, s = math.cos(yaw), math.sin(yaw)
        dx, dy = c * (tx - x) + s * (ty - y), -s * (tx - x) + c * (ty - y)
        curvature = 2.0 * dy / max(dx * dx + dy * dy, 1e-6)
        v = SPEED_M_S * self._slow_down()
        self.rig.cmd.publish(twist(v, wz=v * curvature))

    def _slow_down(self):
        scans = self.rig.scans
        if not scans:
            return 0.5
        scan = scans[-1]
        ahead = [r for k, r in enumerate(scan.ranges)
                 if abs(scan.angle_min + k * scan.angle_increment) < math.radians(30.0)
                 and math.isfinite(r)]
        nearest = min(ahead, default=math.inf)
        return min(1.0, max(0.25, (nearest - 0.5) / 1.5))


def test_pure_pursuit_reaches_the_goal_around_a_box_without_contact_faster_than_real_time(
        rig_closed_loop, record_property):
    r = rig_closed_loop
    ctrl = PurePursuit(r)
    r.probe.create_subscription(type(r.odom[0]), 'odom', ctrl.on_odom, 10)
    t0_wall = time.monotonic()
    t0_sim = _stamp_s(r.odom[-1])
    assert r.spin_until(lambda: ctrl.done, 240.0), \
        f'goal not reached: at {r.odom[-1].pose.pose.position}'
    wall_s = time.monotonic() - t0_wall
    sim_s = _stamp_s(r.odom[-1]) - t0_sim
    record_property('closed_loop_wall_s', round(wall_s, 2))
    record_property('closed_loop_sim_s', round(sim_s, 2))
    print(f'closed loop: {sim_s:.1f} s simulated in {wall_s:.1f} s wall')
    assert r.node.base.counts['contacts'] == 0
    assert not any(m.data for m in r.collision)
    assert r.scans, 'the controller drove without a scan'


def test_at_max_real_time_factor_the_laser_publishes_every_sweep_of_simulated_time(rig_max):
    r = rig_max
    assert r.spin_until(lambda: len(r.scans) >= 30, 120.0), f'{len(r.scans)} scans'
    stamps = [s.header.stamp.sec * 10**9 + s.header.stamp.nanosec for s in r.scans[5:]]
    gaps = {b - a for a, b in zip(stamps, stamps[1:])}
    assert gaps == {100_000_000}, (gaps, r.laser.stats.counts, _sync_timeouts(r),
                                   [x - stamps[0] for x in stamps])   # 10 Hz: none skipped


def test_at_max_real_time_factor_the_terrain_sensor_publishes_every_sample(rig_max_terrain):
    r = rig_max_terrain
    assert r.spin_until(lambda: len(r.samples) >= 60, 120.0), f'{len(r.samples)} samples'
    stamps = [s.header.stamp.sec * 10**9 + s.header.stamp.nanosec for s in r.samples[5:]]
    gaps = {b - a for a, b in zip(stamps, stamps[1:])}
    assert gaps == {20_000_000}, (gaps, r.terrain.stats.counts)     # 50 Hz: no sample skipped


def _fixture(params, laser_params):
    def make():
        r = BaseRig(boxes_world(BOXES), params, laser=True, laser_params=laser_params)
        try:
            yield r
        finally:
            r.close()
    return make


rig_closed_loop = pytest.fixture(_fixture(
    {'publish_clock': True, 'real_time_factor': 4.0, 'use_sim_time': True,
     'cmd_vel_timeout_s': 1.0}, SIM))
rig_max = pytest.fixture(_fixture(
    {'publish_clock': True, 'real_time_factor': 0.0, 'use_sim_time': True,
     'sync_topics': ['/scan']}, SIM))


@pytest.fixture
def rig_max_terrain():
    r = BaseRig(boxes_world(BOXES), {'publish_clock': True, 'real_time_factor': 0.0,
                                     'use_sim_time': True, 'sync_topics': ['/terrain']},
                terrain_params={'use_sim_time': True, 'rate_hz': 50.0})
    try:
        yield r
    finally:
        r.close()


rig_beyond = pytest.fixture(_fixture(
    {'publish_clock': True, 'real_time_factor': 1000.0, 'use_sim_time': True,
     'sync_topics': ['/scan']}, SIM))


def test_at_a_factor_beyond_the_machine_simulated_time_waits_and_no_sweep_is_lost(rig_beyond):
    # 1000x real time is beyond any machine here: the clock waits for the laser instead of
    # letting it skip sweeps, and the first sweep comes in the first simulated periods.
    r = rig_beyond
    assert r.spin_until(lambda: len(r.scans) >= 30, 120.0), f'{len(r.scans)} scans'
    stamps = [s.header.stamp.sec * 10**9 + s.header.stamp.nanosec for s in r.scans]
    gaps = {b - a for a, b in zip(stamps, stamps[1:])}
    assert gaps == {100_000_000}, (gaps, r.laser.stats.counts, _sync_timeouts(r))
    # The laser's sweep grid starts at its first pose. Until its first stamp the clock runs
    # at most sync_lag_s (0.25 s) ahead, however long that first sweep takes (its kernels
    # load), so the laser first sees the time no later than then.
    # bound: sync_lag_s 0.25 s plus one base step (50 Hz), 0.27 s
    assert stamps[0] <= 270_000_000, (stamps[0], r.laser.stats.counts, r.node.diagnostics())
    values = {v.key: v.value for v in r.node.diagnostics().status[0].values}
    assert float(values['real_time_factor_reached']) < 1000.0


def test_simulated_time_waits_past_sync_timeout_s_for_a_sensors_first_message():
    # A sensor's first sweep comes after its world loads and its kernels compile: seconds on a
    # loaded machine. Until a sync topic's first message, the wait is sync_start_timeout_s,
    # not sync_timeout_s (0.2 s here); after it, sync_timeout_s again.
    r = BaseRig(boxes_world(BOXES), {'publish_clock': True, 'real_time_factor': 0.0,
                                     'use_sim_time': True, 'sync_topics': ['/scan'],
                                     'sync_timeout_s': 0.2, 'sync_start_timeout_s': 60.0})
    try:
        scan = r.probe.create_publisher(LaserScan, 'scan', 10)
        r.spin_for(2.0)     # ten sync timeouts of wall time without a message on /scan
        # bound: without a stamp the lag allowed is sync_lag_s (0.25 s), plus one 50 Hz step.
        waited_s = _stamp_s(r.odom[-1])
        assert waited_s <= 0.25 + 0.02, waited_s
        assert _sync_timeouts(r) == 0
        msg = LaserScan()
        msg.header.stamp = r.odom[-1].header.stamp
        scan.publish(msg)
        # One message, then silence: after sync_timeout_s the clock runs on without /scan.
        assert r.spin_until(lambda: _stamp_s(r.odom[-1]) > waited_s + 1.0, 30.0), \
            _stamp_s(r.odom[-1])
        assert _sync_timeouts(r) >= 1
    finally:
        r.close()
