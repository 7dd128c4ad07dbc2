"""
Every actor of a world in one caster: each geometry in a slot of its own, cast one actor at a time.

open3d crashes (SIGSEGV) at about its 1,011th RaycastingScene, so a caster per actor cannot hold
the 1,024 actors a world may have. Here the actors' geometries, each moved from its own frame
so that its bounding sphere is centred on a slot of a cubic grid, make one caster (any backend of
the Caster seam). The slots are spaced by the largest sphere's diameter plus SLOT_GAP_M, so no
two spheres overlap.

A cast for actor k takes rays in k's frame: each ray is started where it enters k's sphere (a ray
that misses the sphere misses the actor) and moved to k's slot. From there the first triangle it
meets is k's when k's geometry is on its way (everything of k lies in the sphere, and nothing
else does); a triangle of another actor, met only after the ray has left k's sphere, is a miss.
The distances come back measured from the ray's own origin. A ray that misses k's box (its
vertices' bounds in k's frame, grown by SPHERE_MARGIN_M) misses k and is not cast at all.
"""

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.raycast.backend import CasterFactory, CastResult
from ubot_lidar_sim.core.raycast.geometry import Geometry

SLOT_GAP_M = 1.0            # between two neighbouring slots' spheres
SPHERE_MARGIN_M = 1e-3      # float32 vertices and rays: a millimetre keeps every hit inside


def bounding_sphere(geometry: Geometry) -> tuple[NDArray[np.float64], float]:
    """Return (centre (3,), radius m) of a sphere holding every vertex (0 for no vertex)."""
    v = np.asarray(geometry.vertices, np.float64)
    if not v.size:
        return np.zeros(3), 0.0
    c = (v.min(axis=0) + v.max(axis=0)) / 2.0
    return c, float(np.linalg.norm(v - c, axis=1).max()) + SPHERE_MARGIN_M


def bounding_box(geometry: Geometry) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Return (lower (3,), upper (3,)) corners holding every vertex, SPHERE_MARGIN_M wider."""
    v = np.asarray(geometry.vertices, np.float64).reshape(-1, 3)
    if not v.size:
        return np.full(3, np.inf), np.full(3, -np.inf)     # empty: met by no ray
    return v.min(axis=0) - SPHERE_MARGIN_M, v.max(axis=0) + SPHERE_MARGIN_M


def slot_centres(n: int, spacing_m: float) -> NDArray[np.float64]:
    """Return (n, 3) slot centres on a cubic grid of spacing_m around the origin (slot 0 there)."""
    side = max(1, int(np.ceil(round(n ** (1.0 / 3.0), 9))))
    k = np.arange(n)
    grid = np.stack([k % side, (k // side) % side, k // (side * side)], axis=1)
    grid = grid - np.where(grid > side // 2, side, 0)       # ... -1, 0, 1 ...: near the origin
    return grid.astype(np.float64) * spacing_m


def enters_box(o: NDArray[np.float64], d: NDArray[np.float64], lo: NDArray[np.float64],
               hi: NDArray[np.float64]) -> NDArray[np.bool_]:
    """
    Return (n,) whether each ray o + s d (n, 3), s >= 0, meets its box lo..hi (n, 3) (slabs).

    A direction component 0 gives slab bounds of +-inf (or NaN on a face, ignored by fmin and
    fmax): such a ray is kept unless another axis rules it out; never a ray that meets the box.
    """
    with np.errstate(divide='ignore', invalid='ignore'):
        inv = 1.0 / d
        s1, s2 = (lo - o) * inv, (hi - o) * inv
    near = np.fmin(s1, s2).max(axis=1)
    far = np.fmax(s1, s2).min(axis=1)
    return (far >= near) & (far >= 0.0)


class ActorScene:
    """The actors' geometries in one caster, each in its slot (see the module docstring)."""

    def __init__(self, geometries: Sequence[Geometry], factory: CasterFactory):
        """Build one caster over every geometry, actor k (object k) in slot k."""
        spheres = [bounding_sphere(g) for g in geometries]
        self.centre = [c for c, _ in spheres]
        self.radius = [r for _, r in spheres]
        spacing = 2.0 * max(self.radius, default=0.0) + SLOT_GAP_M
        self._slot = slot_centres(len(geometries), spacing)
        self._centres = np.reshape(self.centre, (-1, 3))
        self._radius2 = np.asarray(self.radius) ** 2
        # Each geometry's box in its own frame (fixed_actors.py drops the rays that miss it),
        # and about its sphere's centre (cast_rays); empty for no vertex: lower > upper.
        boxes = [bounding_box(g) for g in geometries]
        self.lower = np.array([lo for lo, _ in boxes], np.float64).reshape(-1, 3)
        self.upper = np.array([hi for _, hi in boxes], np.float64).reshape(-1, 3)
        self._box = np.stack([self.lower, self.upper], axis=1) - self._centres[:, None, :]
        moved = [Geometry(vertices=np.asarray(g.vertices, np.float64) - c + s,
                          triangles=np.asarray(g.triangles))
                 for g, c, s in zip(geometries, self.centre, self._slot)]
        self._caster = factory(moved) if moved else None

    def __len__(self):
        """Return the number of actors."""
        return len(self.centre)

    def cast_rays(self, k: int | NDArray[np.int64], local: NDArray[np.float32]) -> CastResult:
        """
        Cast rays (n, 6) float32, each in its actor's frame, against that actor alone.

        k: the actor of every ray (an int) or of each ray ((n,) int64): the rays of many actors
        go in one cast. Returns t (n,) float64 from each ray's origin (inf for a miss), obj k
        (or -1), the primitive within k's geometry and the normal in k's frame (float32).
        """
        if self._caster is None:
            raise IndexError('cast_rays: the scene has no actors')
        n = local.shape[0]
        k = np.broadcast_to(np.asarray(k, np.int64), (n,))
        o = np.asarray(local[:, :3], np.float64) - self._centres[k]
        d = np.asarray(local[:, 3:6], np.float64)
        b = np.einsum('ij,ij->i', o, d)
        disc = b * b - (np.einsum('ij,ij->i', o, o) - self._radius2[k])
        meets = disc >= 0.0
        root = np.sqrt(np.where(meets, disc, 0.0))
        meets &= -b + root >= 0.0                   # the sphere is not behind the ray
        t0 = np.maximum(-b - root, 0.0)             # 0: the ray starts inside the sphere
        meets &= enters_box(o, d, self._box[k, 0], self._box[k, 1])
        cast = np.flatnonzero(meets)
        t, obj = np.full(n, np.inf), np.full(n, -1, np.int32)
        primitive, normal = np.zeros(n, np.int64), np.zeros((n, 3), np.float32)
        if cast.size == 0:
            return CastResult(t, obj, primitive, normal)
        kc = k[cast]
        moved = np.empty((cast.size, 6), np.float32)
        moved[:, :3] = o[cast] + t0[cast, None] * d[cast] + self._slot[kc]
        moved[:, 3:6] = local[cast, 3:6]
        hit = self._caster.cast_rays(moved)
        mine = np.asarray(hit.obj) == kc
        t[cast] = np.where(mine, t0[cast] + np.asarray(hit.t, np.float64), np.inf)
        obj[cast] = np.where(mine, kc, -1)
        primitive[cast] = hit.primitive
        normal[cast] = hit.normal
        return CastResult(t, obj, primitive, normal)
