"""
The footprint against the world: how far a move may go before the outline meets an object.

Two checks, the earlier contact wins. (1) The footprint swept over the whole move against the
world's triangles (sweep.py: exact for a translation, whatever the object's thickness): the
move is cut into sub-moves, each a translation along its chord at the yaw it starts with, so
that the rotation between two sub-moves moves no outline point more than ROTATION_STEP_M (one
sub-move for a straight move); each is looked at contact_margin_m further than it goes.
(2) Rays, no loop over them: the outline is sampled every SPACING_M at a few heights between
ground_clearance_m and body_height_m above the ground plane of the base; a move from pose a to
pose b casts one ray per sample from its place at a to its place at b (the analytic spheres
and cylinders, whose triangles lie just inside them). ``allowed_fraction`` is the fraction of
the move before the first contact, less contact_margin_m. ``overlaps`` casts along every edge
of the outline and from its centre to every vertex and asks the sweep for a triangle inside
the outline, so an object that crosses the outline or sits inside it is found.
Ground objects (``ground: true``, planes and heightfields by default) are never obstacles;
actors are not seen (docs/nav2.md, limits).
"""

from collections.abc import Sequence
import math

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.motion.kinematics import planar_matrix, wrap
from ubot_lidar_sim.core.motion.sweep import TriangleSweep

SPACING_M = 0.05            # the outline is sampled at least this densely
N_HEIGHTS = 3               # collision heights between clearance and body height
ROTATION_STEP_M = 0.001     # a sub-move's rotation moves no outline point further


def outline_samples(polygon: NDArray[np.float64],
                    spacing_m: float = SPACING_M) -> NDArray[np.float64]:
    """Return (S, 2) points along the closed polygon (P, 2), vertices included."""
    nxt = np.roll(polygon, -1, axis=0)
    lengths = np.linalg.norm(nxt - polygon, axis=1)
    counts = np.maximum(1, np.ceil(lengths / spacing_m).astype(int))
    edge = np.repeat(np.arange(len(polygon)), counts)
    frac = np.concatenate([np.arange(c) / c for c in counts])
    return polygon[edge] + frac[:, None] * (nxt - polygon)[edge]


class FootprintCollision:
    """Collision of one footprint against one World (see the module)."""

    def __init__(self, world, polygon, cfg):
        self._world = world
        self._poly = np.asarray(polygon, np.float64)
        self._samples = outline_samples(self._poly)
        self._heights = np.linspace(cfg.ground_clearance_m, cfg.body_height_m, N_HEIGHTS)
        self._margin = cfg.contact_margin_m
        # Ground objects are driven on; actors move on their own clocks: neither collides.
        self._ignored = tuple(o.name for o in world.objects if o.ground) + tuple(
            a.obj.name for a in world.actors)
        self._sweep = TriangleSweep(world, self._ignored)
        self._reach = float(np.max(np.linalg.norm(self._poly, axis=1)))

    def _cast(self, origins2, ends2, ground_z):
        """Return the smallest fraction of each 2D segment where a ray meets an object (inf)."""
        n, k = len(origins2), len(self._heights)
        z = np.repeat(ground_z + self._heights, n)
        o = np.c_[np.tile(origins2, (k, 1)), z]
        d = np.c_[np.tile(ends2 - origins2, (k, 1)), np.zeros(n * k)]
        length = np.linalg.norm(d, axis=1)
        keep = length > 1e-9
        if not keep.any():
            return np.inf
        o, d, length = o[keep], d[keep], length[keep]
        hits = self._world.cast(o, d / length[:, None], length + self._margin,
                                ignored=self._ignored, texture=False)
        if len(hits.ray) == 0:
            return np.inf
        return float(np.min((hits.range_m - self._margin) / length[hits.ray]))

    def _place(self, pts, pose):
        m = planar_matrix(pose)
        return pts @ m[:2, :2].T + m[:2, 2]

    def allowed_fraction(self, pose_a: Sequence[float], pose_b: Sequence[float],
                         ground_z: float = 0.0) -> float:
        """Return the fraction (0-1) of the move pose_a -> pose_b that keeps clear of objects."""
        a = self._place(self._samples, pose_a)
        b = self._place(self._samples, pose_b)
        rays = self._cast(a, b, ground_z)
        return float(min(1.0, max(0.0, min(rays, self._swept(pose_a, pose_b, ground_z)))))

    def _swept(self, pose_a, pose_b, ground_z):
        """Return the fraction of the move before the swept footprint's contact, less margin."""
        z0, z1 = ground_z + self._heights[0], ground_z + self._heights[-1]
        dyaw = wrap(pose_b[2] - pose_a[2])
        n = max(1, math.ceil(self._reach * abs(dyaw) / ROTATION_STEP_M))
        xy_a, xy_b = np.asarray(pose_a[:2], np.float64), np.asarray(pose_b[:2], np.float64)
        d = (xy_b - xy_a) / n
        step = float(np.hypot(*d))
        if step < 1e-12:
            return np.inf
        ext = d * (step + self._margin) / step     # looked at contact_margin_m further
        for k in range(n):      # sub-moves (module docstring), one for a straight move
            start = (*(xy_a + k * d), pose_a[2] + k * dyaw / n)
            t = self._sweep.first_contact(self._place(self._poly, start), ext, z0, z1)
            if t <= 1.0:
                return (k + max(0.0, t * (step + self._margin) - self._margin) / step) / n
        return np.inf

    def overlaps(self, pose: Sequence[float], ground_z: float = 0.0) -> bool:
        """Return True when an object crosses the outline at pose or lies inside it."""
        verts = self._place(self._poly, pose)
        centre = np.repeat(np.asarray(pose[:2], np.float64)[None], len(verts), axis=0)
        starts = np.r_[verts, centre]
        ends = np.r_[np.roll(verts, -1, axis=0), verts]
        z0, z1 = ground_z + self._heights[0], ground_z + self._heights[-1]
        if self._sweep.overlaps(verts, z0, z1):
            return True
        margin, self._margin = self._margin, 0.0
        try:
            return self._cast(starts, ends, ground_z) <= 1.0
        finally:
            self._margin = margin
