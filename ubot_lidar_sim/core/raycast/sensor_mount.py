"""
Actors rigid with the sensor that casts them (a robot's own body): posed in the sensor's frame.

A robot's links that no joint moves during a sweep are fixed in the frame of a sensor mounted
on it, wherever the robot goes: ``MountedPose(sensor, sensor_from_actor)`` says so. ``sensor``
(SensorFrame) holds the sensor's world pose for this sweep and its first cast's rays in its own
frame, the same array sweep after sweep (a repeating pattern). Such actors are cast once in the
sensor frame (raycast/fixed_actors.py FixedActors.cast_mounted) and each sweep only merges
those hits with its static ones: the body moves with the sensor, so its hits along each ray of
the pattern do not change. A pose_at of the world-frame path all the same (``fixed``).
"""

from functools import cached_property
from typing import NamedTuple

import numba
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core import numba_cache  # noqa: F401  (stamps the kernel cache)


class SensorFrame(NamedTuple):
    """A sensor at one pose through a sweep, and the rays (N, 6) it casts in its own frame."""

    world_from_sensor: NDArray[np.float64]      # (4, 4)
    # (N, 6) float32 origin, unit direction of each first-cast ray, sensor frame: one read-only
    # array for every sweep of the pattern (fixed_actors.py keys its cache on its identity).
    rays: NDArray[np.float32]


class MountedPose:
    """pose_at of an actor rigid with a sensor: world_from_sensor @ sensor_from_actor."""

    def __init__(self, sensor: SensorFrame, sensor_from_actor: ArrayLike) -> None:
        self.sensor = sensor
        mount = np.asarray(sensor_from_actor, np.float64)
        # The caller's array itself when it is one (4, 4): fixed_actors.py compares the mounts
        # by identity before it compares their values.
        self.mount = mount if mount.shape == (4, 4) else mount.reshape(4, 4)

    @cached_property
    def fixed(self) -> NDArray[np.float64]:
        """Return the world-from-actor (4, 4) of the sweep (poses.FixedPose's ``fixed``)."""
        return self.sensor.world_from_sensor @ self.mount

    def __call__(self, times_s: ArrayLike) -> NDArray[np.float64]:
        """World-from-actor poses (C, 4, 4) at times (C,) s: the one pose, C times."""
        return np.broadcast_to(self.fixed, (np.size(times_s), 4, 4))


def pattern_rays(directions: ArrayLike) -> NDArray[np.float32]:
    """Return the read-only rays (N, 6) float32 from the sensor origin along directions (N, 3)."""
    d = np.asarray(directions, np.float64).reshape(-1, 3)
    rays = np.hstack([np.zeros_like(d), d]).astype(np.float32)
    rays.setflags(write=False)
    return rays


def mounted(pose_at: tuple) -> tuple[SensorFrame, tuple] | None:
    """Return (sensor, mounts ((4, 4),) * A) when every pose_at is a MountedPose on one sensor."""
    if not pose_at or type(pose_at[0]) is not MountedPose:
        return None
    sensor = pose_at[0].sensor
    mounts = []
    for p in pose_at:       # a robot's few links (a plain loop: once or twice per cast)
        if type(p) is not MountedPose or p.sensor is not sensor:
            return None
        mounts.append(p.mount)
    return sensor, tuple(mounts)


# A unit direction turned by a float64 rotation and rounded to float32 is off by < 2^-24 per
# component (half an ulp below 1), the pattern's own float32 rounding by as much again: 1e-6
# holds both (2^-23 = 1.2e-7) and is far below what parts another cast's rays from these.
DIRECTION_TOL = 1e-6


# The rays pattern_at compares, evenly spaced: another cast of as many rays (a ghost's from
# mirror points, a probe's along other sub-rays) differs in every ray, so in these; comparing
# all 28,800 of a VLP-16 would cost as much as the body's sphere test it spares (~0.1 ms).
PATTERN_SAMPLES = 256


@numba.njit(cache=True, nogil=True)
def pattern_at(rays: NDArray[np.float32], pattern: NDArray[np.float32],
               pose: NDArray[np.float64], tol: float) -> bool:
    """
    Return True when rays (M, 6) are pattern (M, 6, sensor frame) turned by pose: sampled.

    Every (M // PATTERN_SAMPLES)-th ray and the last: its origin exactly the float32 of the
    sensor's position (with +0.0 for -0.0, as a first cast's: sweep_passes.rotate_sub_rays),
    each direction component within tol of R @ the pattern's (pose (4, 4) world-from-sensor).
    """
    origin = np.empty(3, np.float32)
    for j in range(3):
        origin[j] = np.float32(pose[j, 3] + 0.0)
    n = rays.shape[0]
    step = max(1, n // PATTERN_SAMPLES)
    for k in range(0, n + step - 1, step):
        i = min(k, n - 1)
        dx = np.float64(pattern[i, 3])
        dy = np.float64(pattern[i, 4])
        dz = np.float64(pattern[i, 5])
        for j in range(3):
            if rays[i, j] != origin[j]:
                return False
            w = pose[j, 0] * dx + pose[j, 1] * dy + pose[j, 2] * dz
            if abs(np.float64(rays[i, 3 + j]) - w) > tol:
                return False
    return True


@numba.njit(cache=True, nogil=True)
def merge_at_pose(rays: NDArray[np.float32], pattern: NDArray[np.float32],
                  pose: NDArray[np.float64], tol: float, ray: NDArray[np.int64],
                  t: NDArray[np.float64], obj: NDArray[np.int64], prim: NDArray[np.int64],
                  normal: NDArray[np.float64], out_t: NDArray[np.floating],
                  out_obj: NDArray[np.integer], out_prim: NDArray[np.integer],
                  out_normal: NDArray[np.floating]) -> int:
    """
    Merge a sensor-frame body cast into a sweep's static hits; return the rays taken, -1: none.

    -1 (nothing written) unless rays (M, 6) are pattern (M, 6) at pose (pattern_at, tol). Else
    each body hit h (ray[h] (H,), t, obj, prim, sensor-frame normal (H, 3)) nearer than the
    static out_t[ray[h]] replaces it in out_t, out_obj, out_prim and out_normal (M, 3), its
    normal turned by pose's rotation: fixed_actors._merge's rule.
    """
    if not pattern_at(rays, pattern, pose, tol):
        return -1
    taken = 0
    for h in range(ray.shape[0]):
        m = ray[h]
        if t[h] < out_t[m]:
            out_t[m] = t[h]
            out_obj[m] = obj[h]
            out_prim[m] = prim[h]
            for j in range(3):
                out_normal[m, j] = (pose[j, 0] * normal[h, 0] + pose[j, 1] * normal[h, 1]
                                    + pose[j, 2] * normal[h, 2])
            taken += 1
    return taken
