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


@numba.njit(cache=True, nogil=True, error_model='numpy', inline='always')
def in_box(o: NDArray[np.float64], d: NDArray[np.float64], lo: NDArray[np.float64],
           hi: NDArray[np.float64]) -> bool:
    """
    Return whether the ray o + s d (3,), s >= 0, meets the box lo..hi (3,) (slabs).

    A direction component 0 gives slab bounds of +-inf (or NaN on a face, ignored): such a ray
    is kept unless another axis rules it out; never a ray that meets the box.
    """
    near, far = -np.inf, np.inf
    for j in range(3):
        inv = 1.0 / d[j]
        s1, s2 = (lo[j] - o[j]) * inv, (hi[j] - o[j]) * inv
        # fmin / fmax: NaN (0 x inf, a flat ray on a face plane) is ignored beside a number.
        a = s2 if s1 != s1 else s1 if s2 != s2 else min(s1, s2)
        b = s2 if s1 != s1 else s1 if s2 != s2 else max(s1, s2)
        if a != a or b != b:        # both NaN: the box is flat there (lo = hi), met by none
            return False
        near, far = max(near, a), min(far, b)
    return far >= near and far >= 0.0


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
        k = np.ascontiguousarray(np.broadcast_to(np.asarray(k, np.int64), (n,)))
        moved = np.empty((n, 6), np.float32)
        t0 = np.empty(n)
        cast = np.empty(n, np.int64)
        n_cast = into_slots(np.ascontiguousarray(local, np.float32), k, self._centres,
                            self._radius2, self._box, self._slot, moved, t0, cast)
        t, obj = np.full(n, np.inf), np.full(n, -1, np.int32)
        primitive, normal = np.zeros(n, np.int64), np.zeros((n, 3), np.float32)
        if n_cast == 0:
            return CastResult(t, obj, primitive, normal)
        hit = self._caster.cast_rays(moved[:n_cast])
        slot_hits(k, t0, cast[:n_cast], np.asarray(hit.obj), np.asarray(hit.t),
                  np.asarray(hit.primitive), np.asarray(hit.normal), t, obj, primitive, normal)
        return CastResult(t, obj, primitive, normal)


@numba.njit(cache=True, nogil=True, error_model='numpy')
def into_slots(local: NDArray[np.float32], k: NDArray[np.int64], centre: NDArray[np.float64],
               radius2: NDArray[np.float64], box: NDArray[np.float64],
               slot: NDArray[np.float64], moved: NDArray[np.float32], t0: NDArray[np.float64],
               cast: NDArray[np.int64]) -> int:
    """
    Write to moved[:K] (K, 6) float32 the rays of local (n, 6) that meet sphere and box; return K.

    Those rays start where they enter the sphere and are moved to the slot; their rows in
    cast[:K].
    Ray i of actor k[i] enters the sphere centre[k[i]] (A, 3), squared radius radius2[k[i]]
    (A,) m^2, t0[i] m along it (0 from inside); box[k[i]] (A, 2, 3) about the centre
    (in_box); slot[k[i]] (A, 3) the actor's slot.
    """
    n_cast = 0
    o = np.empty(3)
    d = np.empty(3)
    for i in range(local.shape[0]):
        a = k[i]
        for j in range(3):
            o[j] = np.float64(local[i, j]) - centre[a, j]
            d[j] = np.float64(local[i, 3 + j])
        # The sums in numpy einsum's order (x + z) + y: the numbers of the plain-numpy form
        # (test/core/raycast/test_fixed_actors.py) bit for bit on x86-64.
        b = (o[0] * d[0] + o[2] * d[2]) + o[1] * d[1]
        disc = b * b - (((o[0] * o[0] + o[2] * o[2]) + o[1] * o[1]) - radius2[a])
        if not disc >= 0.0:
            continue
        root = np.sqrt(disc)
        if -b + root < 0.0:                         # the sphere is behind the ray
            continue
        t0[i] = max(-b - root, 0.0)                 # 0: the ray starts inside the sphere
        if not in_box(o, d, box[a, 0], box[a, 1]):
            continue
        for j in range(3):
            moved[n_cast, j] = o[j] + t0[i] * d[j] + slot[a, j]
            moved[n_cast, 3 + j] = local[i, 3 + j]
        cast[n_cast] = i
        n_cast += 1
    return n_cast


@numba.njit(cache=True, nogil=True)
def slot_hits(k: NDArray[np.int64], t0: NDArray[np.float64], cast: NDArray[np.int64],
              hit_obj: NDArray[np.int32], hit_t: NDArray[np.float32],
              hit_primitive: NDArray[np.integer], hit_normal: NDArray[np.float32],
              t: NDArray[np.float64], obj: NDArray[np.int32], primitive: NDArray[np.int64],
              normal: NDArray[np.float32]) -> None:
    """
    Write the hits of the rays cast (K,) (into_slots' rows) into t, obj, primitive, normal (n,).

    Ray cast[j]'s hit is its actor's when the caster met object k (then t = t0 + hit_t m from
    the ray's own origin, obj k); else t stays inf and obj -1.
    """
    for j in range(cast.shape[0]):
        i = cast[j]
        primitive[i] = hit_primitive[j]
        normal[i, 0], normal[i, 1], normal[i, 2] = hit_normal[j, 0], hit_normal[j, 1], \
            hit_normal[j, 2]
        if hit_obj[j] == k[i]:
            t[i] = t0[i] + np.float64(hit_t[j])
            obj[i] = np.int32(k[i])
