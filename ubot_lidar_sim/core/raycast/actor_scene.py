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
The distances come back measured from the ray's own origin.
"""

from collections.abc import Sequence

import numba
import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core import numba_cache  # noqa: F401  (stamps the kernel cache)
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


class ActorScene:
    """The actors' geometries in one caster, each in its slot (see the module docstring)."""

    def __init__(self, geometries: Sequence[Geometry], factory: CasterFactory):
        """Build one caster over every geometry, actor k (object k) in slot k."""
        spheres = [bounding_sphere(g) for g in geometries]
        self.centre = [c for c, _ in spheres]
        self.radius = [r for _, r in spheres]
        spacing = 2.0 * max(self.radius, default=0.0) + SLOT_GAP_M
        self._slot = slot_centres(len(geometries), spacing)
        self._centres = np.array(self.centre, np.float64).reshape(-1, 3)
        # Each geometry's box in its own frame (fixed_actors.py drops the rays that miss it).
        boxes = [bounding_box(g) for g in geometries]
        self.lower = np.array([lo for lo, _ in boxes], np.float64).reshape(-1, 3)
        self.upper = np.array([hi for _, hi in boxes], np.float64).reshape(-1, 3)
        self._radii = np.array(self.radius, np.float64)
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
        k = np.ascontiguousarray(np.broadcast_to(np.asarray(k, np.int64), (local.shape[0],)))
        moved = np.empty((local.shape[0], 6), np.float32)
        t0 = np.empty(local.shape[0])
        into_slots(np.ascontiguousarray(local, np.float32), k, self._centres, self._radii,
                   self._slot, moved, t0)
        hit = self._caster.cast_rays(moved)
        t = np.empty(local.shape[0])
        obj = np.empty(local.shape[0], np.int32)
        slot_hits(k, t0, np.asarray(hit.obj), np.asarray(hit.t), t, obj)
        return CastResult(t, obj, np.asarray(hit.primitive), np.asarray(hit.normal))


@numba.njit(cache=True, nogil=True)
def into_slots(local: NDArray[np.float32], k: NDArray[np.int64], centre: NDArray[np.float64],
               radius: NDArray[np.float64], slot: NDArray[np.float64],
               moved: NDArray[np.float32], t0: NDArray[np.float64]) -> None:
    """
    Write to moved (n, 6) float32 the rays local (n, 6) started in their actor's sphere and slot.

    Ray i of actor k[i] starts where it enters the sphere centre[k[i]] (A, 3), radius[k[i]]
    (A,) m (at its origin when that lies inside), t0[i] m along it, moved by slot[k[i]] - centre;
    a ray that misses the sphere, or whose sphere lies behind it, gets t0 = NaN.
    """
    for i in range(local.shape[0]):
        a = k[i]
        ox = np.float64(local[i, 0]) - centre[a, 0]
        oy = np.float64(local[i, 1]) - centre[a, 1]
        oz = np.float64(local[i, 2]) - centre[a, 2]
        dx, dy, dz = np.float64(local[i, 3]), np.float64(local[i, 4]), np.float64(local[i, 5])
        # The sums in numpy einsum's order (x + z) + y, so that the numbers are those of the
        # plain-numpy form (test/core/raycast/test_fixed_actors.py) bit for bit on x86-64.
        b = (ox * dx + oz * dz) + oy * dy
        disc = b * b - (((ox * ox + oz * oz) + oy * oy) - radius[a] * radius[a])
        meets = disc >= 0.0
        root = np.sqrt(disc) if meets else 0.0
        meets = meets and -b + root >= 0.0          # the sphere is not behind the ray
        start = max(-b - root, 0.0)                 # 0: the ray starts inside the sphere
        t0[i] = start if meets else np.nan
        moved[i, 0] = ox + start * dx + slot[a, 0]
        moved[i, 1] = oy + start * dy + slot[a, 1]
        moved[i, 2] = oz + start * dz + slot[a, 2]
        moved[i, 3], moved[i, 4], moved[i, 5] = local[i, 3], local[i, 4], local[i, 5]


@numba.njit(cache=True, nogil=True)
def slot_hits(k: NDArray[np.int64], t0: NDArray[np.float64], hit_obj: NDArray[np.int32],
              hit_t: NDArray[np.float32], t: NDArray[np.float64],
              obj: NDArray[np.int32]) -> None:
    """
    Write each ray's distance t (n,) m from its own origin and obj (n,) (k, or -1 for a miss).

    A ray's hit is its actor's when the caster met object k[i] from the ray's sphere entry
    t0[i] (into_slots; NaN: the ray misses the sphere).
    """
    for i in range(k.shape[0]):
        if t0[i] == t0[i] and hit_obj[i] == k[i]:
            t[i] = t0[i] + np.float64(hit_t[i])
            obj[i] = np.int32(k[i])
        else:
            t[i] = np.inf
            obj[i] = -1
