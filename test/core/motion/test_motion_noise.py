"""base_sim noise (core/motion): odometry covariance and IMU noise by sample statistics."""

import math

import numpy as np

from ubot_lidar_sim.core.motion.imu import (GRAVITY_M_S2, Imu, noise_sigmas,
                                            relative_rotation_vector)
from ubot_lidar_sim.core.motion.odometry import compose, Odometry
from ubot_lidar_sim.core.poses import matrix_to_quaternion, rotation_rpy, rpy_quaternion

N_RUNS = 2000
# A sample variance of N normal draws has relative standard deviation sqrt(2 / (N - 1)):
# 3.2 % for N = 2000; 5 of them bound it (a false failure about once in 3 million runs).
VAR_BOUND = 5.0 * math.sqrt(2.0 / (N_RUNS - 1))


def _drive(seed, km, kr, steps=20, step=(0.05, 0.0, 0.025)):
    """Return (odometry error (x, y, yaw), reported covariance) after steps of step (body)."""
    odom, truth = Odometry(seed, km, kr), (0.0, 0.0, 0.0)
    for _ in range(steps):
        nxt = compose(truth, step)
        odom.advance(truth, nxt)
        truth = nxt
    err = np.subtract(odom.pose, truth)
    err[2] = (err[2] + math.pi) % (2.0 * math.pi) - math.pi
    return err, odom.covariance


def test_the_odometry_covariance_is_the_spread_of_its_drift_over_2000_seeds():
    # 1 m and 0.5 rad in 20 steps; the heading error feeds the position, as the model carries it.
    runs = [_drive(seed, 0.05, 0.05) for seed in range(N_RUNS)]
    errors = np.array([e for e, _ in runs])
    reported = np.mean([c for _, c in runs], axis=0)
    sample = np.cov(errors.T)
    for k in range(3):
        assert abs(sample[k, k] / reported[k, k] - 1.0) <= VAR_BOUND, k
    # Without heading noise x and y are independent random walks of variance km^2 x 1 m.
    walk = np.mean([_drive(s, 0.05, 0.0, step=(0.05, 0.0, 0.0))[1] for s in range(3)], axis=0)
    # bound: 20 float64 terms km^2 |step|: each step's length comes from solve() at poses <= 1 m
    # (eps x 1 m on 0.05 m: 4.4e-15 relative) and a few roundings, so the sum is within 1e-13
    # relative; yaw is exactly 0 (no heading noise: every yaw term is an exact 0)
    assert np.allclose(np.diag(walk), [0.05 ** 2, 0.05 ** 2, 0.0], rtol=1e-12, atol=0.0)


def test_zero_drift_reports_zero_covariance():
    assert not _drive(0, 0.0, 0.0)[1].any()


def test_imu_at_rest_reads_gravity_up_with_the_bmi088_noise_at_the_rate():
    gyro, accel = noise_sigmas(50.0, math.radians(0.014), 175e-6 * GRAVITY_M_S2)
    # BMI088 densities at 50 Hz: 0.014 deg/s x sqrt(50) and 175 ug x sqrt(50).
    # bound: exact: noise_sigmas does the same correctly rounded float64 sqrt and product
    assert math.isclose(gyro, math.radians(0.014) * math.sqrt(50.0), rel_tol=1e-15)
    imu = Imu(7, gyro, accel)
    samples = [imu.sample((1.0, 2.0, 0.0, 0.0, 0.0, 0.3), 0.02) for _ in range(N_RUNS)]
    omega = np.array([s[1] for s in samples])
    acc = np.array([s[2] for s in samples])
    for values, sigma in ((omega, gyro), (acc, accel)):
        var = values.var(axis=0, ddof=1)
        assert np.all(np.abs(var / sigma ** 2 - 1.0) <= VAR_BOUND)
    # The mean of N draws is within 5 sigma / sqrt(N) of the truth.
    assert np.all(np.abs(acc.mean(axis=0) - [0.0, 0.0, GRAVITY_M_S2])
                  <= 5.0 * accel / math.sqrt(N_RUNS))
    assert np.all(np.abs(omega.mean(axis=0)) <= 5.0 * gyro / math.sqrt(N_RUNS))
    # bound: x, y are exact zeros (roll and pitch 0: the matrix terms they come from are 0), so
    # atol 1e-15 holds them at 0; w, z (libm cos / sin of 0.3 within 4 ulp, then ~8 float64
    # roundings: < 4e-15) are held by allclose's default rtol 1e-5
    assert np.allclose(samples[0][0], [math.cos(0.15), 0.0, 0.0, math.sin(0.15)], atol=1e-15)


def test_noiseless_imu_on_a_circle_reads_the_yaw_rate_and_the_centripetal_acceleration():
    # 1 m/s on a circle of 2 m: yaw rate 0.5 rad/s, centripetal 0.5 m/s^2 towards +y (body).
    imu, dt, r = Imu(0, 0.0, 0.0), 0.02, 2.0
    for k in range(4):
        a = 0.5 * k * dt
        quat, omega, acc = imu.sample((r * math.sin(a), r - r * math.cos(a), 0.0,
                                       0.0, 0.0, a), dt)
    # bound: yaw only, so x, y are exact zeros; z: the 0.01 rad rotation vector of R_a^T R_b to a
    # few float64 ulps of 1 (1e-15 rad) over dt 0.02 s: 1e-13 rad/s, 10x under 1e-12
    assert np.allclose(omega, [0.0, 0.0, 0.5], atol=1e-12)
    # bound: the second difference of a circle is a (1 - (w dt)^2 / 12) to leading order (4.2e-6
    # m/s^2 short), doubled for the next terms; float64 roundings (eps x 2 m / dt^2, 1e-11) nil
    assert np.allclose(acc, [0.0, 0.5, GRAVITY_M_S2], atol=0.5 * (0.5 * dt) ** 2 / 12 * 2)


def test_rpy_quaternion_is_the_quaternion_of_rotation_rpy_with_w_at_least_0():
    rng = np.random.default_rng(3)
    for roll, pitch, yaw in rng.uniform(-math.pi, math.pi, (200, 3)):
        q = rpy_quaternion(roll, pitch, yaw)
        x, y, z, w = matrix_to_quaternion(rotation_rpy(roll, pitch, yaw))
        assert q[0] >= 0.0
        # bound: both are within a few float64 roundings of the exact unit quaternion (cos and
        # sin within 1 ulp, ~10 products and sums; Shepperd's branch adds a sqrt and a division)
        assert np.allclose(q, (w, x, y, z), rtol=0.0, atol=1e-14)
    # yaw 0.3 alone: (cos 0.15, 0, 0, sin 0.15), the x and y terms exact zeros
    assert rpy_quaternion(0.0, 0.0, 0.3) == (math.cos(0.15), 0.0, 0.0, math.sin(0.15))


def test_relative_rotation_vector_takes_the_short_way_across_pi():
    # yaw 3.1 -> -3.1 rad is a turn of +0.0832 rad about z, not -6.2
    omega = relative_rotation_vector(rpy_quaternion(0.0, 0.0, 3.1), rpy_quaternion(0.0, 0.0, -3.1))
    # bound: half-angle cos / sin within 1 ulp, a Hamilton product and atan2: < 1e-14 rad
    assert np.allclose(omega, (0.0, 0.0, 2.0 * math.pi - 6.2), rtol=0.0, atol=1e-14)
    # roll 0.2 -> pitch 0.1 is R_x(0.2)^T R_y(0.1): the vector that rotation_rpy's matrices give
    r = rotation_rpy(0.2, 0.0, 0.0).T @ rotation_rpy(0.0, 0.1, 0.0)
    x, y, z, w = matrix_to_quaternion(r)
    angle = 2.0 * math.atan2(math.sqrt(x * x + y * y + z * z), w)
    expected = np.array([x, y, z]) * angle / math.sqrt(x * x + y * y + z * z)
    omega = relative_rotation_vector(rpy_quaternion(0.2, 0.0, 0.0), rpy_quaternion(0.0, 0.1, 0.0))
    assert np.allclose(omega, expected, rtol=0.0, atol=1e-14)    # bound: as above
    assert relative_rotation_vector((1.0, 0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0)) == (0.0, 0.0, 0.0)
