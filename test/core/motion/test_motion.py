"""The kinematic base of base_sim (core/motion): limits, bad commands, collision, ground, drift."""

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
from tolerances import F64_EPS

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.motion.base import BaseSim
from ubot_lidar_sim.core.motion.config import BaseSimConfig, footprint_outline, parse_footprint
from ubot_lidar_sim.core.motion.kinematics import (ackermann_yaw_rate, check_command, integrate,
                                                   limit_target, ramp)
from ubot_lidar_sim.core.motion.odometry import Odometry
from ubot_lidar_sim.core.world.world import World

DT = 0.02
# Float64 sums of O(1) terms over <= 500 steps: far fewer than 1e6 roundings of F64_EPS.
EXACT = 1e6 * F64_EPS


def _world(wall=True, slope_deg=0.0):
    """Return a 40 m plane tilted slope_deg about y (rising to +x), a wall with face x = 4.9."""
    objects = [{'name': 'ground', 'type': 'plane', 'size_m': [40, 40], 'material': 'grass',
                'pose': {'xyz': [0, 0, 0], 'rpy_deg': [0, -slope_deg, 0]}}]
    if wall:
        objects.append({'name': 'wall', 'type': 'box', 'size_m': [0.2, 20, 6],
                        'pose': {'xyz': [5, 0, 0]}, 'material': 'concrete'})
    return World.from_dict({'frame': 'map', 'objects': objects})


def _drive(base, cmd, seconds, t0=0.0):
    """Command cmd every step for seconds; return the last Step and the end time."""
    n = int(round(seconds / DT))
    step = None
    for k in range(n):
        t = t0 + (k + 1) * DT
        base.command(cmd, t)
        step = base.step(t, DT)
    return step, t0 + n * DT


def test_nan_inf_and_absurd_commands_are_refused():
    assert check_command((float('nan'), 0, 0)) is None
    assert check_command((0, float('inf'), 0)) is None
    assert check_command((1001.0, 0, 0)) is None
    assert check_command((0.5, 0, -0.1)) == (0.5, 0.0, -0.1)


def test_refused_command_is_counted_and_never_integrated():
    base = BaseSim(BaseSimConfig(), _world(wall=False))
    assert not base.command((float('nan'), 0, 0), 0.0)
    assert not base.command((2e3, 0, 0), 0.0)
    step = base.step(DT, DT)
    assert base.counts == {'accepted': 0, 'refused': 2, 'contacts': 0}
    assert step.pose[:2] == (0.0, 0.0)


def test_speed_limits_clamp_and_diff_drops_lateral():
    cfg = BaseSimConfig(max_linear_m_s=1.0, max_angular_rad_s=1.5)
    assert limit_target(cfg, (3.0, 2.0, -4.0)) == (1.0, 0.0, -1.5)
    omni = BaseSimConfig(drive='omni', max_lateral_m_s=0.5)
    assert limit_target(omni, (0.2, 2.0, 0.0)) == (0.2, 0.5, 0.0)


def test_ackermann_steering_limit_45_deg_gives_yaw_rate_v_over_wheelbase():
    # tan(45 deg) = 1: yaw rate = v / wheelbase; asking for more is clamped to it.
    assert abs(ackermann_yaw_rate(1.0, 10.0, 0.5, math.radians(45.0)) - 2.0) < EXACT
    assert ackermann_yaw_rate(0.0, 1.0, 0.5, 0.5) == 0.0      # no turn on the spot


def test_acceleration_limit_ramps_by_accel_times_dt():
    cfg = BaseSimConfig(max_linear_accel_m_s2=1.0, max_angular_accel_rad_s2=2.0)
    got = ramp(cfg, (0.0, 0.0, 0.0), (1.0, 0.0, 1.0), 0.1)
    assert got == pytest.approx((0.1, 0.0, 0.2), abs=EXACT)


def test_constant_twist_integrates_along_a_quarter_circle():
    # 1 m/s at pi/2 rad/s for 1 s: a quarter circle of radius 2/pi.
    r = 2.0 / math.pi
    x, y, yaw = integrate((0.0, 0.0, 0.0), (1.0, 0.0, math.pi / 2), (1.0, 0.0, math.pi / 2), 1.0)
    assert (x, y, yaw) == pytest.approx((r, r, math.pi / 2), abs=EXACT)


def test_half_metre_per_second_for_4_s_then_stop_covers_2_m():
    # Ramp-up loses v^2 / 2a, braking after the last command gains it back: 2 m exactly.
    base = BaseSim(BaseSimConfig(max_linear_accel_m_s2=1.0), _world(wall=False))
    _, t = _drive(base, (0.5, 0.0, 0.0), 4.0)
    _drive(base, (0.0, 0.0, 0.0), 1.0, t)
    assert base.pose[0] == pytest.approx(2.0, abs=EXACT)


def test_command_stream_that_stops_brakes_after_the_timeout():
    cfg = BaseSimConfig(cmd_vel_timeout_s=0.5, max_linear_accel_m_s2=1.0)
    base = BaseSim(cfg, _world(wall=False))
    base.command((0.5, 0.0, 0.0), 0.0)
    for k in range(100):
        step = base.step((k + 1) * DT, DT)
    # 0.5 s of command (ramp to 0.5 m/s: 0.125 m), then braking 0.5 s (0.125 m).
    assert step.velocity == (0.0, 0.0, 0.0)
    assert base.pose[0] == pytest.approx(0.25, abs=EXACT)


def test_driving_into_a_wall_stops_at_the_footprint_never_inside():
    cfg = BaseSimConfig(footprint_radius_m=0.3, contact_margin_m=0.02)
    base = BaseSim(cfg, _world())
    step, _ = _drive(base, (1.0, 0.0, 0.0), 8.0)
    # The footprint is the 16-gon around the 0.3 m circle: vertex radius 0.3 / cos(pi / 16).
    reach = 0.3 / math.cos(math.pi / 16)
    assert step.contact and base.counts['contacts'] == 1 and step.velocity == (0.0, 0.0, 0.0)
    assert 4.9 - 0.02 - 0.01 <= base.pose[0] + reach <= 4.9   # bound: 1 cm below the margin


def test_polygon_footprint_in_nav2_format():
    poly = parse_footprint('[[0.5, 0.3], [-0.5, 0.3], [-0.5, -0.3], [0.5, -0.3]]')
    assert poly.shape == (4, 2)
    with pytest.raises(ConfigError, match='footprint_polygon'):
        BaseSimConfig(footprint_polygon='[[0, 0], [1, 1]]')
    base = BaseSim(BaseSimConfig(footprint_polygon='[[0.5, 0.3], [-0.5, 0.3], [-0.5, -0.3], '
                                 '[0.5, -0.3]]'), _world())
    _drive(base, (1.0, 0.0, 0.0), 8.0)
    assert 4.9 - 0.03 <= base.pose[0] + 0.5 <= 4.9   # bound: 1 cm below the 2 cm margin


def test_circle_footprint_polygon_holds_the_circle():
    poly = footprint_outline(BaseSimConfig(footprint_radius_m=0.3))
    mid = (poly + np.roll(poly, -1, axis=0)) / 2
    assert np.linalg.norm(mid, axis=1) == pytest.approx(0.3, abs=EXACT)


def test_start_inside_an_object_is_refused_naming_initial_pose():
    with pytest.raises(ConfigError, match='initial_pose'):
        BaseSim(BaseSimConfig(initial_pose=(5.0, 0.0, 0.0)), _world())
    with pytest.raises(ConfigError, match='initial_pose'):
        BaseSim(BaseSimConfig(initial_pose=(4.75, 0.0, 0.0)), _world())   # overlapping


def test_ground_following_on_a_10_deg_slope_pitches_nose_up():
    base = BaseSim(BaseSimConfig(), _world(wall=False, slope_deg=10.0))
    step = base.state()
    assert step.pose[4] == pytest.approx(-math.radians(10.0), abs=1e-6)  # bound: f32 hits
    _drive(base, (1.0, 0.0, 0.0), 2.0)
    step = base.state()
    assert step.pose[2] == pytest.approx(base.pose[0] * math.tan(math.radians(10.0)),
                                         abs=1e-4)    # bound: float32 hits at ~10 m
    assert step.pose[3] == pytest.approx(0.0, abs=1e-6)    # bound: f32 hits, level across


def test_a_base_standing_still_keeps_its_ground_without_casting_again():
    world = _world(wall=False, slope_deg=10.0)
    base = BaseSim(BaseSimConfig(), world)
    first = base.state()
    casts, cast = [], world.cast
    world.cast = lambda *a, **k: casts.append(1) or cast(*a, **k)
    steps = [base.step((k + 1) * DT, DT) for k in range(10)]     # no command: at rest
    assert {s.pose for s in steps} == {first.pose}
    assert len(casts) <= 1      # one cast from the settled height at most, then none
    _drive(base, (0.5, 0.0, 0.0), 0.2)
    assert len(casts) > 10      # a moving base casts (ground, collision) at every step


def test_odometry_drift_is_seeded_and_zero_noise_is_the_truth():
    a = Odometry(7, 0.05, 0.05)
    b = Odometry(7, 0.05, 0.05)
    exact = Odometry(7, 0.0, 0.0)
    for k in range(50):
        p0, p1 = (k * 0.1, 0.0, 0.0), ((k + 1) * 0.1, 0.0, 0.0)
        assert a.advance(p0, p1) == b.advance(p0, p1)
        exact.advance(p0, p1)
    assert exact.pose == pytest.approx((5.0, 0.0, 0.0), abs=EXACT)
    assert a.pose != exact.pose
    wx, wy, wyaw = a.world_to_odom((5.0, 0.0, 0.0))
    c, s = math.cos(wyaw), math.sin(wyaw)
    x, y, _ = a.pose
    assert (wx + c * x - s * y, wy + s * x + c * y) == pytest.approx((5.0, 0.0), abs=EXACT)


def test_bad_config_names_parameter():
    with pytest.raises(ConfigError, match='drive'):
        BaseSimConfig(drive='tank')
    with pytest.raises(ConfigError, match='real_time_factor'):
        BaseSimConfig(real_time_factor=-1.0)


def test_docs_nav2_lists_every_base_sim_parameter():
    text = (Path(__file__).resolve().parents[3] / 'docs' / 'nav2.md').read_text()
    missing = [f.name for f in dataclasses.fields(BaseSimConfig) if f'| `{f.name}` |' not in text]
    assert not missing, f'docs/nav2.md, "Parameters": {missing}'
