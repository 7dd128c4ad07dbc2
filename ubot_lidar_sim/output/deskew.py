"""
Ego-motion compensation (deskew): every point of a sweep in the sensor frame at the stamp.

A sweep's point i is in the sensor frame at its own firing time ``stamp_s + time_i`` (the full
layout's ``time``, s after the stamp; docs/nodes.md, "Point layouts"). KITTI's odometry scans
are ego-motion compensated: each point is where the scanner at the scan's stamp sees it. So::

    p_stamp = inv(S(stamp)) @ S(stamp + time_i) @ p_i

with S(t) the world-from-sensor pose (the rig's trajectory and the sensor's mount). Points of
the static world then lie where a scan taken at the stamp in one instant has them; a moving
actor's points stay where the actor was at each point's own time (deskew removes the ego
motion only, as KITTI's does), up to v x |time_i| from its pose at the stamp.
"""

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.poses import invert


def point_times(points: NDArray[np.void], stamp_s: float) -> NDArray[np.float64]:
    """Return (P,) float64 absolute firing times of full-layout points of a sweep at stamp_s."""
    return float(stamp_s) + points['time'].astype(np.float64)


def moved_points(xyz: NDArray[np.float64], frm: NDArray[np.float64],
                 to: NDArray[np.float64]) -> NDArray[np.float64]:
    """Return (P, 3) points xyz moved by the rigid transforms to @ inv(frm), each (P, 4, 4)."""
    rel = to @ invert(frm)
    return np.einsum('pij,pj->pi', rel[:, :3, :3], xyz) + rel[:, :3, 3]


def poses_of(pose_at: Callable[[NDArray[np.float64]], ArrayLike],
             times: ArrayLike) -> NDArray[np.float64]:
    """Return pose_at at times (P,), asked once per distinct time: (P, 4, 4) float64."""
    unique, inverse = np.unique(np.asarray(times, np.float64), return_inverse=True)
    return np.asarray(pose_at(unique), dtype=np.float64)[inverse.reshape(-1)]


def deskew_xyz(points: NDArray[np.void], stamp_s: float,
               sensor_pose_at: Callable[[NDArray[np.float64]], ArrayLike]) -> NDArray[np.float64]:
    """
    Return (P, 3) float64 x y z of full-layout points in the sensor frame at stamp_s.

    sensor_pose_at(times (n,) s) -> world-from-sensor (n, 4, 4).
    """
    xyz = np.stack([points['x'], points['y'], points['z']], axis=1).astype(np.float64)
    if not len(xyz):
        return xyz
    at_point = poses_of(sensor_pose_at, point_times(points, stamp_s))
    at_stamp = np.asarray(sensor_pose_at(np.array([float(stamp_s)])), np.float64)[0]
    return moved_points(xyz, invert(at_point), np.broadcast_to(invert(at_stamp),
                                                               at_point.shape))


def deskewed(points: NDArray[np.void], stamp_s: float,
             sensor_pose_at: Callable[[NDArray[np.float64]], ArrayLike]) -> NDArray[np.void]:
    """Return a copy of full-layout points with x y z in the sensor frame at stamp_s."""
    out = points.copy()
    xyz = deskew_xyz(points, stamp_s, sensor_pose_at)
    for k, name in enumerate(('x', 'y', 'z')):
        out[name] = xyz[:, k]
    return out
