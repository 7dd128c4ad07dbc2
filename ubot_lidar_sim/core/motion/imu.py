"""
An IMU on base_frame from the base's true motion: orientation, angular velocity, specific force.

Each step gives the base's true pose (x, y, z, roll, pitch, yaw in world_frame). ``Imu.sample``
returns what a strapdown IMU at base_frame measures over the step that ends there:
- orientation: base_frame in world_frame (z up, as REP 145 asks of an IMU's fixed frame);
- angular velocity (rad/s, base_frame): the rotation vector of R_a^T R_b over dt (exact for a
  constant rate);
- linear acceleration (m/s^2, base_frame): the specific force R^T (a - g), a from the second
  difference of the last three positions, R the middle one's rotation (so the acceleration is
  that of the step's start, one step late) and g = (0, 0, -9.80665): at rest on level ground it
  reads +9.80665 on z, as the BMI088 data sheet's table of output signals has it (+1 g on Z
  upright, BST-BMI088-DS001, section 8.2).
White noise is added to the rates and accelerations, sigma = noise density x sqrt(rate_hz)
(continuous-time density sampled at the step: sigma_d = sigma_c / sqrt(dt)); the defaults are
the Bosch BMI088's typical noise densities (data sheet BST-BMI088-DS001, table 1): gyroscope
0.014 deg/s/sqrt(Hz), accelerometer 175 ug/sqrt(Hz). Step k's draws come from
odometry.step_rng(seed, k, STREAM_IMU). The first two steps report zero acceleration besides
gravity (no second difference yet).
"""

from collections.abc import Sequence
import math
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.motion.odometry import step_rng, STREAM_IMU
from ubot_lidar_sim.core.poses import rotation_rpy, rpy_quaternion


class ImuNoiseConfig(Protocol):
    """The IMU noise fields of a BaseSimConfig (motion/config imports this module)."""

    rate_hz: float
    imu_gyro_noise_density: float
    imu_accel_noise_density: float
    imu_gyro_stddev_rad_s: float
    imu_accel_stddev_m_s2: float


GRAVITY_M_S2 = 9.80665                      # standard gravity (CGPM 1901)
GYRO_DENSITY_RAD_S_SQRT_HZ = math.radians(0.014)    # BMI088 gyroscope, typical
ACCEL_DENSITY_M_S2_SQRT_HZ = 175e-6 * GRAVITY_M_S2  # BMI088 accelerometer, typical


def relative_rotation_vector(q_a: Sequence[float], q_b: Sequence[float]
                             ) -> tuple[float, float, float]:
    """
    Return the rotation vector (axis x angle, rad, |angle| <= pi) of R_a^T R_b.

    q_a, q_b: unit quaternions (w, x, y, z) of R_a and R_b; R_a^T R_b is conj(q_a) q_b (Hamilton
    product), taken with w >= 0 (q and -q are one rotation) so that the angle is the shorter one.
    """
    aw, ax, ay, az = q_a
    bw, bx, by, bz = q_b
    w = aw * bw + ax * bx + ay * by + az * bz
    x = aw * bx - ax * bw - ay * bz + az * by
    y = aw * by + ax * bz - ay * bw - az * bx
    z = aw * bz - ax * by + ay * bx - az * bw
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    n = math.sqrt(x * x + y * y + z * z)
    if n == 0.0:
        return 0.0, 0.0, 0.0
    k = 2.0 * math.atan2(n, w) / n
    return x * k, y * k, z * k


def noise_sigmas(rate_hz: float, gyro_density: float, accel_density: float
                 ) -> tuple[float, float]:
    """Return (gyro rad/s, accel m/s^2) 1-sigma per sample of noise densities at rate_hz."""
    return gyro_density * math.sqrt(rate_hz), accel_density * math.sqrt(rate_hz)


def config_sigmas(cfg: ImuNoiseConfig) -> tuple[float, float]:
    """
    Return a BaseSimConfig's IMU sigmas per sample: its stddevs, else from the densities.

    A stddev given (>= 0, a Gazebo <noise> stddev, which gz-sensors draws per sample) is the
    sigma of every step's sample, whatever rate_hz; the published samples keep it.
    """
    gyro, accel = noise_sigmas(cfg.rate_hz, cfg.imu_gyro_noise_density,
                               cfg.imu_accel_noise_density)
    return (cfg.imu_gyro_stddev_rad_s if cfg.imu_gyro_stddev_rad_s >= 0 else gyro,
            cfg.imu_accel_stddev_m_s2 if cfg.imu_accel_stddev_m_s2 >= 0 else accel)


class RateGate:
    """Say which steps publish at rate_hz (0: every step): due(t) once per period, on time."""

    def __init__(self, rate_hz: float) -> None:
        self._period = 1.0 / rate_hz if rate_hz > 0 else 0.0
        self._next = None

    def due(self, t_s: float) -> bool:
        """Return True when a sample is due at t_s (s); the next one is a period later."""
        if self._period == 0.0:
            return True
        if self._next is not None and t_s < self._next - 1e-9:
            return False
        # on a grid of periods from the first sample: a late step does not shift the rest
        base = t_s if self._next is None else self._next
        self._next = base + self._period * (1 + max(0, math.floor((t_s - base) / self._period)))
        return True


class Imu:
    """The IMU of one base (see the module); gyro and accel sigmas per sample, seed."""

    def __init__(self, seed: int, gyro_sigma: float, accel_sigma: float) -> None:
        self._seed, self._sg, self._sa = seed, gyro_sigma, accel_sigma
        self._poses = []    # the last three (pose (x, y, z, roll, pitch, yaw), quaternion)
        self.step = 0

    def sample(self, pose: Sequence[float], dt_s: float
               ) -> tuple[tuple[float, float, float, float], NDArray[np.float64],
                          NDArray[np.float64]]:
        """Return (quaternion (w, x, y, z), angular velocity (3,), linear acceleration (3,))."""
        pose = tuple(pose)
        q_now = rpy_quaternion(*pose[3:])
        self._poses = (self._poses + [(pose, q_now)])[-3:]
        omega = np.zeros(3)
        accel_world, rpy_acc = np.zeros(3), pose[3:]
        if len(self._poses) >= 2 and dt_s > 0.0:
            omega = np.array(relative_rotation_vector(self._poses[-2][1], q_now)) / dt_s
        if len(self._poses) == 3 and dt_s > 0.0:
            p0, p1, p2 = (np.asarray(p[:3], np.float64) for p, _ in self._poses)
            accel_world = (p2 - 2.0 * p1 + p0) / (dt_s * dt_s)
            rpy_acc = self._poses[1][0][3:]
        specific = rotation_rpy(*rpy_acc).T @ (accel_world + np.array([0.0, 0.0, GRAVITY_M_S2]))
        rng = step_rng(self._seed, self.step, STREAM_IMU)
        self.step += 1
        noise = rng.standard_normal(6)
        return q_now, omega + self._sg * noise[:3], specific + self._sa * noise[3:]

    def reset(self) -> None:
        """Forget the past poses (a teleport is no motion)."""
        self._poses = []
