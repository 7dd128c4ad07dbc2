"""
Rigid transforms in numpy: 4 x 4 matrices, unit quaternions, inverses and slerp.

Matrices from translations and quaternions and back; quaternions are (x, y, z, w) as in
geometry_msgs.
"""

import math

import numpy as np


def quaternion_to_matrix(q):
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


def matrix_to_quaternion(r):
    """Return the unit quaternion (4,) (x, y, z, w), w >= 0, of a rotation matrix (3, 3)."""
    r = np.asarray(r, dtype=np.float64)
    # Shepperd's method: pick the largest diagonal term for numerical stability.
    tr = r[0, 0] + r[1, 1] + r[2, 2]
    cands = np.array([tr, r[0, 0], r[1, 1], r[2, 2]])
    k = int(np.argmax(cands))
    if k == 0:
        s = 2.0 * math.sqrt(max(1.0 + tr, 1e-300))
        q = [(r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s, s / 4]
    elif k == 1:
        s = 2.0 * math.sqrt(max(1.0 + r[0, 0] - r[1, 1] - r[2, 2], 1e-300))
        q = [s / 4, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s, (r[2, 1] - r[1, 2]) / s]
    elif k == 2:
        s = 2.0 * math.sqrt(max(1.0 - r[0, 0] + r[1, 1] - r[2, 2], 1e-300))
        q = [(r[0, 1] + r[1, 0]) / s, s / 4, (r[1, 2] + r[2, 1]) / s, (r[0, 2] - r[2, 0]) / s]
    else:
        s = 2.0 * math.sqrt(max(1.0 - r[0, 0] - r[1, 1] + r[2, 2], 1e-300))
        q = [(r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, s / 4, (r[1, 0] - r[0, 1]) / s]
    q = np.array(q)
    q /= np.linalg.norm(q)
    return -q if q[3] < 0 else q


def slerp(q0, q1, u):
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


def to_matrix(translation, quaternion):
    """Return transforms (..., 4, 4) from translations (..., 3) and quaternions (..., 4)."""
    t = np.asarray(translation, dtype=np.float64)
    m = np.zeros(t.shape[:-1] + (4, 4))
    m[..., :3, :3] = quaternion_to_matrix(quaternion)
    m[..., :3, 3] = t
    m[..., 3, 3] = 1.0
    return m


def invert(m):
    """Return the inverses of rigid transforms (..., 4, 4)."""
    out = np.zeros_like(m)
    rt = np.swapaxes(m[..., :3, :3], -1, -2)
    out[..., :3, :3] = rt
    out[..., :3, 3] = -np.einsum('...ij,...j->...i', rt, m[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out
