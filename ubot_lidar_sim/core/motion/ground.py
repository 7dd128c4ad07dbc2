"""
Ground following: z, roll and pitch of the base from the ground under its footprint.

Rays straight down at the footprint's vertices and its centre, from max_step_m above the
current ground height, meet only ground objects (planes, heightfields, meshes marked
``ground: true``). A plane z = z0 + gx u + gy v fitted through the contacts (u, v in the base
frame, least squares) gives z at the centre, pitch = -atan(gx) (nose up on a rising slope) and
roll = atan(gy / sqrt(1 + gx^2)). Contacts that miss keep the last height; no contact at all
keeps the last ground. The ground objects do not move, so a pose the last update had already
(a base standing still, or held at an object) keeps its ground without a cast: casting again
from the new height would only move z by the float32 rounding of the ranges (~1e-6 m).
"""

from collections.abc import Sequence
import math

import numpy as np

from ubot_lidar_sim.core.motion.kinematics import planar_matrix

DOWN_RANGE_M = 100.0


class GroundFollower:
    """The ground under a footprint in one World (see the module)."""

    def __init__(self, world, polygon, max_step_m):
        self._world = world
        self._uv = np.r_[np.zeros((1, 2)), np.asarray(polygon, np.float64)]
        design = np.c_[np.ones(len(self._uv)), self._uv]
        # every contact hit (the usual case): the plane is one product with the pseudo-inverse
        self._all_pinv = np.linalg.pinv(design) if np.linalg.matrix_rank(design) == 3 else None
        self._last = None       # (pose, start) of the last update
        objects = list(world.objects) + [a.obj for a in world.actors]
        self._ignored = tuple(o.name for o in objects if not o.ground)
        self._step = max_step_m
        self.z = self.roll = self.pitch = 0.0
        self._any = any(o.ground for o in objects)

    def update(self, pose: Sequence[float], start: bool = False) -> tuple[float, float, float]:
        """Return (z, roll, pitch) of the ground at planar pose; start: search from far above."""
        if not self._any:
            return self.z, self.roll, self.pitch
        key = (tuple(pose), start)
        if key == self._last:
            return self.z, self.roll, self.pitch
        self._last = key
        top = DOWN_RANGE_M / 2.0 if start else self.z + self._step
        m = planar_matrix(pose)
        xy = self._uv @ m[:2, :2].T + m[:2, 2]
        o = np.c_[xy, np.full(len(xy), top)]
        d = np.tile([0.0, 0.0, -1.0], (len(xy), 1))
        hits = self._world.cast(o, d, DOWN_RANGE_M, ignored=self._ignored, texture=False)
        if len(hits.ray) == 0:
            return self.z, self.roll, self.pitch
        z = top - np.asarray(hits.range_m, np.float64)
        uv = self._uv[hits.ray]
        if len(uv) == len(self._uv) and self._all_pinv is not None:
            z0, gx, gy = self._all_pinv @ z
        elif len(uv) >= 3 and np.linalg.matrix_rank(np.c_[np.ones(len(uv)), uv]) == 3:
            z0, gx, gy = np.linalg.lstsq(np.c_[np.ones(len(uv)), uv], z, rcond=None)[0]
        else:
            z0, gx, gy = float(np.mean(z)), 0.0, 0.0
        self.z = float(z0)
        self.pitch = -math.atan(gx)
        self.roll = math.atan(gy / math.sqrt(1.0 + gx * gx))
        return self.z, self.roll, self.pitch
