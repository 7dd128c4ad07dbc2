"""
Pose helpers: 4 x 4 transforms from xyz + roll/pitch/yaw, and constant-twist trajectories.

Rotations follow ROS (REP 103): R = Rz(yaw) Ry(pitch) Rx(roll), angles in radians unless the name
ends in ``_deg``. A constant body-frame twist moves the pose along the SE(3) exponential
T(t) = T0 exp((t - t0) xi), evaluated in closed form for many times at once.
"""

import numpy as np


def rotation_rpy(roll, pitch, yaw):
    """Rotation matrix (3, 3) of fixed-axis roll about x, pitch about y, yaw about z (rad)."""
    cr, sr = np.cos(roll), np.sin(roll)
    cp, sp = np.cos(pitch), np.sin(pitch)
    cy, sy = np.cos(yaw), np.sin(yaw)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr]])


def pose_matrix(xyz, rpy_rad):
    """World-from-frame transform (4, 4) float64 from a position (m) and roll, pitch, yaw (rad)."""
    t = np.eye(4)
    t[:3, :3] = rotation_rpy(*rpy_rad)
    t[:3, 3] = np.asarray(xyz, dtype=np.float64)
    return t


def pose_matrix_deg(xyz, rpy_deg):
    """pose_matrix with the angles in degrees."""
    return pose_matrix(xyz, np.radians(np.asarray(rpy_deg, dtype=np.float64)))


def poses_at(pose_at, times_s):
    """
    Return pose_at(times_s) as (N, 4, 4) float64, asking once when every time is the same.

    A sweep without motion distortion needs its pose at C + 1 equal times: one lookup (a TF
    interpolation, a twist exponential) serves them all, the same pose in every row.
    """
    t = np.asarray(times_s, dtype=np.float64)
    if t.size > 1 and np.all(t == t[0]):
        one = np.asarray(pose_at(t[:1]), dtype=np.float64)
        return np.ascontiguousarray(np.broadcast_to(one, (t.size,) + one.shape[1:]))
    return np.asarray(pose_at(t), dtype=np.float64)


def _skew(w):
    """Skew matrices (N, 3, 3) of vectors (N, 3)."""
    s = np.zeros(w.shape[:-1] + (3, 3))
    s[..., 0, 1], s[..., 0, 2] = -w[..., 2], w[..., 1]
    s[..., 1, 0], s[..., 1, 2] = w[..., 2], -w[..., 0]
    s[..., 2, 0], s[..., 2, 1] = -w[..., 1], w[..., 0]
    return s


def se3_exp(twist, dt):
    """
    exp(dt xi) for a body twist xi = (vx, vy, vz, wx, wy, wz) (m/s, rad/s): (N, 4, 4) for dt (N,).

    Rodrigues for the rotation and the left Jacobian V for the translation; the series forms
    are used for small angles so a pure translation is exact.
    """
    xi = np.asarray(twist, dtype=np.float64)
    dt = np.atleast_1d(np.asarray(dt, dtype=np.float64))
    v = dt[:, None] * xi[None, :3]
    w = dt[:, None] * xi[None, 3:]
    th = np.linalg.norm(w, axis=1)
    small = th < 1e-8
    ths = np.where(small, 1.0, th)
    a = np.where(small, 1.0 - th ** 2 / 6.0, np.sin(ths) / ths)
    b = np.where(small, 0.5 - th ** 2 / 24.0, (1.0 - np.cos(ths)) / ths ** 2)
    c = np.where(small, 1.0 / 6.0 - th ** 2 / 120.0, (ths - np.sin(ths)) / ths ** 3)
    k = _skew(w)
    k2 = k @ k
    eye = np.eye(3)[None]
    rot = eye + a[:, None, None] * k + b[:, None, None] * k2
    jac = eye + b[:, None, None] * k + c[:, None, None] * k2
    out = np.zeros((len(dt), 4, 4))
    out[:, :3, :3] = rot
    out[:, :3, 3] = np.einsum('nij,nj->ni', jac, v)
    out[:, 3, 3] = 1.0
    return out


class ConstantTwist:
    """
    Trajectory of a frame moving with a constant body-frame twist from pose0 at time t0_s.

    Call it with times (C,) s to get the world-from-frame poses (C, 4, 4): the ``pose_at`` the
    scan orchestrators take. twist = (vx, vy, vz) m/s and (wx, wy, wz) rad/s, body frame.
    """

    def __init__(self, pose0, twist=(0.0,) * 6, t0_s=0.0, frame_offset=None):
        self.pose0 = np.asarray(pose0, dtype=np.float64)
        self.twist = np.asarray(twist, dtype=np.float64)
        self.t0_s = float(t0_s)
        # Optional fixed body-from-frame transform (e.g. base_link -> sensor).
        self.frame_offset = None if frame_offset is None else np.asarray(frame_offset)

    def __call__(self, times_s):
        """World-from-frame poses (C, 4, 4) at absolute times (C,) s."""
        t = np.atleast_1d(np.asarray(times_s, dtype=np.float64)) - self.t0_s
        poses = self.pose0[None] @ se3_exp(self.twist, t)
        if self.frame_offset is not None:
            poses = poses @ self.frame_offset[None]
        return poses


def twist_from_cli(vx, vy, vz, wx_deg, wy_deg, wz_deg):
    """Body twist (6,) in m/s and rad/s from the CLI's m/s and deg/s."""
    return np.array([vx, vy, vz, *np.radians([wx_deg, wy_deg, wz_deg])], dtype=np.float64)
