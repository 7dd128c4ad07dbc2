"""Wheel joint angles from a base's motion (base_sim's /joint_states), by hand."""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.motion.imu import RateGate
from ubot_lidar_sim.core.motion.wheels import WheelOdometer, Wheels


def _drive(odometer, poses, dt_s=0.02):
    for pose in poses:
        odometer.step(pose, dt_s)


def test_a_quarter_circle_turns_each_track_by_its_own_arc_over_r():
    # R = 2 m about (0, 2): the left wheel (separation 0.5) rolls (2 - 0.25) pi / 2, the right
    # (2 + 0.25) pi / 2, each over r = 0.1 m
    wheels = WheelOdometer(Wheels(('l',), ('r',), 0.1, 0.5))
    th = np.linspace(0.0, math.pi / 2, 401)
    _drive(wheels, [(2 * math.sin(t), 2 - 2 * math.cos(t), 0, 0, 0, t) for t in th])
    # bound: a step's travel is its chord along the mean heading, 2 R sin(dpsi / 2): the arc
    # times 1 - (dpsi / 2)^2 / 6 = 1 - 6.4e-7 (dpsi = pi / 800); the turn's share is exact
    assert wheels.position == pytest.approx([1.75 * math.pi / 2 / 0.1,
                                             2.25 * math.pi / 2 / 0.1], rel=1e-6)


def test_ackermann_steering_joints_take_gz_sims_angles_for_the_turn():
    # R = 5 m, wheel base 1.2, kingpin 0.8: left atan(1.2 / 4.6), right atan(1.2 / 5.4)
    wheels = WheelOdometer(Wheels(('l',), ('r',), 0.3, 1.0, ('ls', 'rs'), 1.2, 0.8))
    th = np.linspace(0.0, 0.2, 11)
    _drive(wheels, [(5 * math.sin(t), 5 - 5 * math.cos(t), 0, 0, 0, t) for t in th])
    # bound: the travel is the chord, 2 R sin(dpsi / 2), so R is seen short by (dpsi / 2)^2 / 6
    # = 1.7e-5 relative (dpsi = 0.02 rad), the angles by less
    assert wheels.position[2:] == pytest.approx([math.atan(1.2 / 4.6), math.atan(1.2 / 5.4)],
                                                rel=1e-4)


def test_a_teleport_turns_no_wheel():
    wheels = WheelOdometer(Wheels(('l',), ('r',), 0.1, 0.5))
    _drive(wheels, [(0, 0, 0, 0, 0, 0), (0.1, 0, 0, 0, 0, 0)])
    wheels.forget()
    _drive(wheels, [(5, 5, 0, 0, 0, 1.0), (5, 5, 0, 0, 0, 1.0)])
    # bound: 0.1 m / 0.1 m in float64, one rounding each (< 1e-15)
    assert wheels.position == pytest.approx([1.0, 1.0], abs=1e-12)


def test_the_rate_gate_passes_one_step_per_period_on_the_grid():
    gate = RateGate(10.0)
    steps = [k * 0.02 for k in range(51)]           # 50 Hz for 1 s
    due = [t for t in steps if gate.due(t)]
    # bound: the step times are float64 multiples of 0.02 (rounding 1e-17), the gate's 1e-9 s
    assert due == pytest.approx([k * 0.1 for k in range(11)], abs=1e-9)
