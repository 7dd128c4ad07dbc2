"""
Rigid-body math, in one place: 4 x 4 transforms, quaternions, slerp and constant-twist paths.

Transforms from xyz + roll/pitch/yaw or from a translation and a unit quaternion (x, y, z, w,
as in geometry_msgs) and back; inverses; slerp; the SE(3) exponential of a constant twist.

Rotations follow ROS (REP 103): R = Rz(yaw) Ry(pitch) Rx(roll), angles in radians unless the name
ends in ``_deg``. A constant body-frame twist moves the pose along the SE(3) exponential
T(t) = T0 exp((t - t0) xi), evaluated in closed form for many times at once.
"""

from collections.abc import Callable
import math

import numba
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core import numba_cache  # noqa: F401  (stamps the kernel cache)
from ubot_lidar_sim.core.errors import ConfigError


def rotation_rpy(roll: float, pitch: float, yaw: float) -> NDArray[np.float64]:
    """Rotation matrix (3, 3) of fixed-axis roll about x, pitch about y, yaw about z (rad)."""
    cr, sr = np.cos(roll), np.sin(roll)
    cp, sp = np.cos(pitch), np.sin(pitch)
    cy, sy = np.cos(yaw), np.sin(yaw)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr]])


def rpy_quaternion(roll: float, pitch: float, yaw: float) -> tuple[float, float, float, float]:
    """
    Return the unit quaternion (w, x, y, z) of rotation_rpy(roll, pitch, yaw) (rad), w >= 0.

    qz(yaw) qy(pitch) qx(roll) in plain float math: one pose per call (a base's step) costs
    ~1 us here against ~100 us through the vectorized matrices_to_quaternions.
    """
    cr, sr = math.cos(0.5 * roll), math.sin(0.5 * roll)
    cp, sp = math.cos(0.5 * pitch), math.sin(0.5 * pitch)
    cy, sy = math.cos(0.5 * yaw), math.sin(0.5 * yaw)
    q = (cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
         cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy)
    return q if q[0] >= 0.0 else (-q[0], -q[1], -q[2], -q[3])


def pose_matrix(xyz: ArrayLike, rpy_rad: ArrayLike) -> NDArray[np.float64]:
    """World-from-frame transform (4, 4) float64 from a position (m) and roll, pitch, yaw (rad)."""
    t = np.eye(4)
    t[:3, :3] = rotation_rpy(*rpy_rad)
    t[:3, 3] = np.asarray(xyz, dtype=np.float64)
    return t


def pose_matrix_deg(xyz: ArrayLike, rpy_deg: ArrayLike) -> NDArray[np.float64]:
    """pose_matrix with the angles in degrees."""
    return pose_matrix(xyz, np.radians(np.asarray(rpy_deg, dtype=np.float64)))


def poses_at(pose_at: Callable[[NDArray[np.float64]], ArrayLike], times_s: ArrayLike
             ) -> NDArray[np.float64]:
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


def _skew(w: NDArray[np.float64]) -> NDArray[np.float64]:
    """Skew matrices (N, 3, 3) of vectors (N, 3)."""
    s = np.zeros(w.shape[:-1] + (3, 3))
    s[..., 0, 1], s[..., 0, 2] = -w[..., 2], w[..., 1]
    s[..., 1, 0], s[..., 1, 2] = w[..., 2], -w[..., 0]
    s[..., 2, 0], s[..., 2, 1] = -w[..., 1], w[..., 0]
    return s


def se3_exp(twist: ArrayLike, dt: ArrayLike) -> NDArray[np.float64]:
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


class BodyTwist:
    """
    Trajectory of a frame moving with a constant body-frame twist from pose0 at time t0_s.

    Call it with times (C,) s to get the world-from-frame poses (C, 4, 4): the ``pose_at`` the
    scan orchestrators take. twist = (vx, vy, vz) m/s and (wx, wy, wz) rad/s, body frame.
    """

    def __init__(self, pose0: ArrayLike, twist: ArrayLike = (0.0,) * 6, t0_s: float = 0.0
                 ) -> None:
        self.pose0 = np.asarray(pose0, dtype=np.float64)
        self.twist = np.asarray(twist, dtype=np.float64)
        self.t0_s = float(t0_s)

    def __call__(self, times_s: ArrayLike) -> NDArray[np.float64]:
        """World-from-frame poses (C, 4, 4) at absolute times (C,) s."""
        t = np.atleast_1d(np.asarray(times_s, dtype=np.float64)) - self.t0_s
        return self.pose0[None] @ se3_exp(self.twist, t)


class WorldTwist:
    """
    Trajectory of a frame moving with a constant world-frame twist from pose0 at t = 0.

    twist = (vx, vy, vz) m/s and (wx, wy, wz) rad/s in the world frame: the origin moves
    along p0 + v t, the frame turns about its own origin by exp(t [w]) R0. Called with times
    (C,) s it returns world-from-frame poses (C, 4, 4). The world file's actor motion.
    """

    def __init__(self, pose0: ArrayLike, twist: ArrayLike = (0.0,) * 6) -> None:
        self.pose0 = np.asarray(pose0, dtype=np.float64)
        self.twist = np.asarray(twist, dtype=np.float64)

    def __call__(self, times_s: ArrayLike) -> NDArray[np.float64]:
        """World-from-frame poses (C, 4, 4) at times (C,) s."""
        t = np.atleast_1d(np.asarray(times_s, dtype=np.float64))
        turn = se3_exp(np.r_[0.0, 0.0, 0.0, self.twist[3:]], t)
        out = np.empty((t.size, 4, 4))
        out[:] = self.pose0
        out[:, :3, :3] = turn[:, :3, :3] @ self.pose0[:3, :3]
        out[:, :3, 3] = self.pose0[:3, 3] + t[:, None] * self.twist[:3]
        return out


class WaypointPath:
    """
    A frame driving through waypoints (W, 3) m at speed_m_s from t = 0; loop or stop.

    Straight segments; the frame's x axis points along the segment (yaw from dx, dy; pitch from
    dz; roll 0), so the heading turns at a waypoint from one sample to the next. loop False:
    it holds the last waypoint at the end; True: it drives on from the last waypoint back to
    the first and round again. Before t = 0 it stands on the first waypoint. The one
    waypoint trajectory of the dataset runner and of world actors.
    """

    def __init__(self, waypoints_m: ArrayLike, speed_m_s: float, name: str = 'waypoints',
                 loop: bool = False, speed_name: str = 'speed_m_s') -> None:
        pts = np.asarray(waypoints_m, dtype=np.float64)
        if pts.ndim != 2 or pts.shape[0] < 2 or pts.shape[1] != 3 or \
                not np.all(np.isfinite(pts)):
            raise ConfigError(name, _plain(waypoints_m), 'at least 2 finite [x, y, z] points')
        if loop and np.array_equal(pts[0], pts[-1]):
            pts = pts[:-1]
        if loop:
            pts = np.concatenate([pts, pts[:1]])
        seg = np.diff(pts, axis=0)
        length = np.linalg.norm(seg, axis=1)
        if np.any(length <= 0.0):
            raise ConfigError(name, _plain(waypoints_m), 'no two consecutive equal points')
        if isinstance(speed_m_s, bool) or not (isinstance(speed_m_s, (int, float))
                                               and 0.0 < speed_m_s < 1e3):
            raise ConfigError(speed_name, speed_m_s, 'a speed > 0 and < 1000 m/s')
        self.points = pts
        self.speed_m_s = float(speed_m_s)
        self.loop = bool(loop)
        self._cum = np.concatenate([[0.0], np.cumsum(length)])
        self._yaw = np.arctan2(seg[:, 1], seg[:, 0])
        pitch = -np.arctan2(seg[:, 2], np.hypot(seg[:, 0], seg[:, 1]))
        # One rotation per segment (W - 1 of them), taken by each time's segment.
        self._rot = np.stack([rotation_rpy(0.0, p, y) for p, y in zip(pitch, self._yaw)])

    def __call__(self, times_s: ArrayLike) -> NDArray[np.float64]:
        """World-from-frame poses (C, 4, 4) at times (C,) s (compiled: waypoint_poses)."""
        t = np.ascontiguousarray(np.atleast_1d(np.asarray(times_s, dtype=np.float64)))
        out = np.empty((t.size, 4, 4))
        waypoint_poses(t, self.speed_m_s, self.loop, self._cum, self.points, self._rot, out)
        return out


@numba.njit(cache=True, nogil=True)
def waypoint_poses(times_s: NDArray[np.float64], speed_m_s: float, loop: bool,
                   cum: NDArray[np.float64], points: NDArray[np.float64],
                   rot: NDArray[np.float64], out: NDArray[np.float64]) -> None:
    """
    Fill out (C, 4, 4) with the poses of a WaypointPath at times_s (C,) s.

    Distance s = max(t, 0) v (mod the loop length, or held at the end), its segment k (cum[k]
    <= s < cum[k + 1]), the point linearly between points[k] and points[k + 1], the segment's
    rotation rot[k] (numpy's operations in numpy's order: test_actors holds the reference).
    """
    n_seg = rot.shape[0]
    total = cum[n_seg]
    for i in range(times_s.shape[0]):
        s = max(times_s[i], 0.0) * speed_m_s
        s = s % total if loop else min(s, total)
        k = np.searchsorted(cum, s, side='right') - 1
        k = min(max(k, 0), n_seg - 1)
        frac = (s - cum[k]) / (cum[k + 1] - cum[k])
        for r in range(3):
            for c in range(3):
                out[i, r, c] = rot[k, r, c]
            out[i, r, 3] = points[k, r] + frac * (points[k + 1, r] - points[k, r])
            out[i, 3, r] = 0.0
        out[i, 3, 3] = 1.0


class SampledPath:
    """
    A frame's path known at sample times (K,) s as poses (K, 4, 4): the pose at any time.

    Between samples the position is linear and the rotation slerped; before the first and
    after the last sample the end pose holds. A NaN sample (a frame not known then) gives NaN
    poses next to it. Picklable: the poses a node looked up, sent to its compute processes.
    """

    def __init__(self, times_s: ArrayLike, poses: ArrayLike) -> None:
        self.times_s = np.asarray(times_s, dtype=np.float64).reshape(-1)
        self.poses = np.asarray(poses, dtype=np.float64).reshape(-1, 4, 4)
        if self.times_s.size == 0 or self.poses.shape[0] != self.times_s.size \
                or np.any(np.diff(self.times_s) < 0.0):
            raise ConfigError('times_s', self.times_s.tolist()[:4],
                              'ascending times, one per pose')
        # One sample (a sweep at one instant): that pose at every time, no quaternions; then
        # ``fixed`` is that pose, as FixedPose's (actors posed so take the cheap path).
        self._quats = (matrices_to_quaternions(self.poses[:, :3, :3])
                       if self.times_s.size > 1 else None)
        self.fixed = self.poses[0] if self._quats is None else None

    def __call__(self, times_s: ArrayLike) -> NDArray[np.float64]:
        """World-from-frame poses (C, 4, 4) at times (C,) s."""
        if self._quats is None:
            n = np.size(times_s)
            return np.array(np.broadcast_to(self.poses[0], (n, 4, 4)))
        t = np.clip(np.atleast_1d(np.asarray(times_s, dtype=np.float64)), self.times_s[0],
                    self.times_s[-1])
        hi = np.clip(np.searchsorted(self.times_s, t, side='right'), 1, self.times_s.size - 1) \
            if self.times_s.size > 1 else np.zeros(t.size, np.int64)
        lo = np.maximum(hi - 1, 0)
        span = self.times_s[hi] - self.times_s[lo]
        u = np.where(span > 0.0, (t - self.times_s[lo]) / np.where(span > 0.0, span, 1.0), 0.0)
        a, b = self.poses[lo, :3, 3], self.poses[hi, :3, 3]
        q = slerp(self._quats[lo], self._quats[hi], u)
        return to_matrix(a + u[:, None] * (b - a), q)


class FixedPose:
    """
    One world-from-frame pose at every time (a body that does not move during a sweep).

    ``fixed`` (4, 4) is that pose: raycast/actor_casting.py poses such an actor's sphere once
    per cast, not once per column. Calls return a read-only view, not n copies.
    """

    def __init__(self, pose: ArrayLike) -> None:
        self.fixed = np.array(pose, dtype=np.float64).reshape(4, 4)

    def __call__(self, times_s: ArrayLike) -> NDArray[np.float64]:
        """World-from-frame poses (C, 4, 4) at times (C,) s: the one pose, C times."""
        return np.broadcast_to(self.fixed, (np.size(times_s), 4, 4))


class Delayed:
    """A trajectory started at start_s: pose at t = path(t - start_s). Picklable."""

    def __init__(self, path: Callable[[NDArray[np.float64]], NDArray[np.float64]],
                 start_s: float) -> None:
        self.path, self.start_s = path, float(start_s)

    def __call__(self, times_s: ArrayLike) -> NDArray[np.float64]:
        """World-from-frame poses (C, 4, 4) at times (C,) s."""
        return self.path(np.asarray(times_s, dtype=np.float64) - self.start_s)


def _plain(value: object) -> object:
    """Return an array as a list for an error message, anything else as it is."""
    return np.asarray(value).tolist() if isinstance(value, np.ndarray) else value


def twist_from_cli(vx: float, vy: float, vz: float, wx_deg: float, wy_deg: float,
                   wz_deg: float) -> NDArray[np.float64]:
    """Body twist (6,) in m/s and rad/s from the CLI's m/s and deg/s."""
    return np.array([vx, vy, vz, *np.radians([wx_deg, wy_deg, wz_deg])], dtype=np.float64)


def quaternion_to_matrix(q: ArrayLike) -> NDArray[np.float64]:
    """Return rotation matrices (..., 3, 3) of unit quaternions (..., 4) (x, y, z, w)."""
    q = np.asarray(q, dtype=np.float64)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    r = np.empty(q.shape[:-1] + (3, 3))
    r[..., 0, 0] = 1 - 2 * (y * y + z * z)
    r[..., 0, 1] = 2 * (x * y - z * w)
    r[..., 0, 2] = 2 * (x * z + y * w)
    r[..., 1, 0] = 2 * (x * y + z * w)
    r[..., 1, 1] = 1 - 2 * (x * x + z * z)
    r[..., 1, 2] = 2 * (y * z - x * w)
    r[..., 2, 0] = 2 * (x * z - y * w)
    r[..., 2, 1] = 2 * (y * z + x * w)
    r[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return r


def matrix_to_quaternion(r: ArrayLike) -> NDArray[np.float64]:
    """Return the unit quaternion (4,) (x, y, z, w), w >= 0, of a rotation matrix (3, 3)."""
    return matrices_to_quaternions(np.asarray(r, dtype=np.float64)[None])[0]


def matrices_to_quaternions(r: ArrayLike) -> NDArray[np.float64]:
    """Return unit quaternions (N, 4) (x, y, z, w), w >= 0, of rotations (N, 3, 3); NaN: NaN."""
    r = np.asarray(r, dtype=np.float64).reshape(-1, 3, 3)
    (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = (
        (r[:, i, 0], r[:, i, 1], r[:, i, 2]) for i in range(3))
    # Shepperd's method: pick the largest diagonal term for numerical stability.
    tr = r00 + r11 + r22
    k = np.argmax(np.nan_to_num(np.stack([tr, r00, r11, r22], 1), nan=-np.inf), axis=1)
    s = 2.0 * np.sqrt(np.maximum(np.choose(k, [1.0 + tr, 1.0 + r00 - r11 - r22,
                                               1.0 - r00 + r11 - r22,
                                               1.0 - r00 - r11 + r22]), 1e-300))
    branches = [
        [(r21 - r12) / s, (r02 - r20) / s, (r10 - r01) / s, s / 4],
        [s / 4, (r01 + r10) / s, (r02 + r20) / s, (r21 - r12) / s],
        [(r01 + r10) / s, s / 4, (r12 + r21) / s, (r02 - r20) / s],
        [(r02 + r20) / s, (r12 + r21) / s, s / 4, (r10 - r01) / s]]
    q = np.stack([np.choose(k, [b[i] for b in branches]) for i in range(4)], 1)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return np.where(q[:, 3:] < 0, -q, q)


def slerp(q0: ArrayLike, q1: ArrayLike, u: ArrayLike) -> NDArray[np.float64]:
    """Spherical interpolation of unit quaternions q0, q1 (N, 4) at fractions u (N,) -> (N, 4)."""
    dot = np.sum(q0 * q1, axis=-1)
    # q and -q are the same rotation: take the short way round.
    q1 = np.where((dot < 0)[:, None], -q1, q1)
    dot = np.abs(dot)
    theta = np.arccos(np.clip(dot, -1.0, 1.0))
    sin_t = np.sin(theta)
    near = sin_t < 1e-9
    safe = np.where(near, 1.0, sin_t)
    w0 = np.where(near, 1.0 - u, np.sin((1.0 - u) * theta) / safe)
    w1 = np.where(near, u, np.sin(u * theta) / safe)
    q = w0[:, None] * q0 + w1[:, None] * q1
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def to_matrix(translation: ArrayLike, quaternion: ArrayLike) -> NDArray[np.float64]:
    """Return transforms (..., 4, 4) from translations (..., 3) and quaternions (..., 4)."""
    t = np.asarray(translation, dtype=np.float64)
    m = np.zeros(t.shape[:-1] + (4, 4))
    m[..., :3, :3] = quaternion_to_matrix(quaternion)
    m[..., :3, 3] = t
    m[..., 3, 3] = 1.0
    return m


def invert(m: ArrayLike) -> NDArray[np.float64]:
    """Return the inverses of rigid transforms (..., 4, 4)."""
    out = np.zeros_like(m)
    rt = np.swapaxes(m[..., :3, :3], -1, -2)
    out[..., :3, :3] = rt
    out[..., :3, 3] = -np.einsum('...ij,...j->...i', rt, m[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out
