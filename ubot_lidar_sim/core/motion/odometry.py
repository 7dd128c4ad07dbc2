"""
Odometry with seeded drift: what the wheels report, which a localiser then corrects.

Each step's true motion in the base frame (dx, dy, dyaw) gets independent Gaussian errors of
sigma = odom_noise_m_per_m * sqrt(|step length| / 1 m) on dx and dy and
sigma = odom_noise_rad_per_rad * sqrt(|dyaw| / 1 rad) on dyaw: a random walk whose 1-sigma
error after 1 m (1 rad) is the parameter, growing with the square root of the distance. The
draws of step k come from PCG64(SeedSequence([seed, crc32('base_sim'), k, STREAM_ODOM])), so a
run is repeatable whatever the wall-clock timing. Zero noise: odometry equals the truth.

``covariance`` (3 x 3 over x, y, yaw in odom_frame) is the drift model's own, propagated to
first order step by step: P <- F P F^T + G Q G^T, F the Jacobian of composing the step with the
pose, G the step's rotation into odom_frame, Q = diag(sigma^2) of the step's errors above. So a
heading error carries into the position as the odometry carries it.
"""

from collections.abc import Sequence
import math
import zlib

import numpy as np

from ubot_lidar_sim.core.motion.kinematics import Planar, planar_matrix, wrap

STREAM_ODOM = 0
STREAM_IMU = 1
SENSOR_ID = 'base_sim'


def step_rng(seed: int, step: int, stream: int = STREAM_ODOM) -> np.random.Generator:
    """Return the Generator of one stream of one step (module docstring)."""
    key = [int(seed), zlib.crc32(SENSOR_ID.encode()), int(step), int(stream)]
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(key)))


def body_delta(pose_a: Sequence[float], pose_b: Sequence[float]) -> Planar:
    """Return (dx, dy, dyaw) of pose_b in the frame of pose_a."""
    m = np.linalg.solve(planar_matrix(pose_a), planar_matrix(pose_b))
    return float(m[0, 2]), float(m[1, 2]), wrap(pose_b[2] - pose_a[2])


def compose(pose: Sequence[float], delta: Sequence[float]) -> Planar:
    """Return the planar pose moved by delta (dx, dy, dyaw) in its own frame."""
    x, y, yaw = pose
    dx, dy, dth = delta
    c, s = math.cos(yaw), math.sin(yaw)
    return (x + c * dx - s * dy, y + s * dx + c * dy, wrap(yaw + dth))


class Odometry:
    """The odom -> base pose, integrated from the true steps with drift (module docstring)."""

    def __init__(self, seed: int, noise_m_per_m: float, noise_rad_per_rad: float) -> None:
        self._seed = seed
        self._km, self._kr = noise_m_per_m, noise_rad_per_rad
        self.pose = (0.0, 0.0, 0.0)
        self.step = 0
        self.covariance = np.zeros((3, 3))

    def reset(self) -> None:
        """Start again at identity with zero covariance (the step count, and its draws, go on)."""
        self.pose = (0.0, 0.0, 0.0)
        self.covariance = np.zeros((3, 3))

    def _propagate(self, delta, var_xy, var_yaw):
        """Carry the covariance through one step delta (dx, dy, dyaw) (module docstring)."""
        c, s = math.cos(self.pose[2]), math.sin(self.pose[2])
        dx, dy, _ = delta
        f = np.array([[1.0, 0.0, -s * dx - c * dy], [0.0, 1.0, c * dx - s * dy],
                      [0.0, 0.0, 1.0]])
        g = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        q = np.diag([var_xy, var_xy, var_yaw])
        self.covariance = f @ self.covariance @ f.T + g @ q @ g.T

    def advance(self, true_a: Sequence[float], true_b: Sequence[float]) -> Planar:
        """Add the step true_a -> true_b (planar poses) with its drift; return the odom pose."""
        dx, dy, dth = body_delta(true_a, true_b)
        if self._km > 0.0 or self._kr > 0.0:
            z = step_rng(self._seed, self.step).standard_normal(3)
            st = self._km * math.sqrt(math.hypot(dx, dy))
            sr = self._kr * math.sqrt(abs(dth))
            self._propagate((dx, dy, dth), st * st, sr * sr)
            dx, dy = dx + st * z[0], dy + st * z[1]
            dth += sr * z[2]
        self.step += 1
        self.pose = compose(self.pose, (dx, dy, dth))
        return self.pose

    def world_to_odom(self, true_pose: Sequence[float]) -> Planar:
        """Return the planar world -> odom transform that puts odom's base at true_pose."""
        m = planar_matrix(true_pose) @ np.linalg.inv(planar_matrix(self.pose))
        return float(m[0, 2]), float(m[1, 2]), math.atan2(m[1, 0], m[0, 0])


def world_to_parent(world_to_odom: Sequence[float], parent_to_odom: Sequence[float]) -> Planar:
    """
    Return the planar world -> parent that keeps world -> odom when parent -> odom is given.

    A localiser's map -> odom (parent_to_odom) under base_sim's truth (world_to_odom):
    world -> map = (world -> odom) (map -> odom)^-1, so world -> map -> odom is the truth.
    """
    m = planar_matrix(world_to_odom) @ np.linalg.inv(planar_matrix(parent_to_odom))
    return float(m[0, 2]), float(m[1, 2]), math.atan2(m[1, 0], m[0, 0])
