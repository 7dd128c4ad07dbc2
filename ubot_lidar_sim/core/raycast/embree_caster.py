"""
A second ray-casting backend: Embree 4 through embreex, which casts without holding the GIL.

open3d's ``cast_rays`` holds the GIL for the whole cast, so numpy or numba work in another
thread waits for it. embreex casts ray by ray in C with the GIL released: a caller may run a
sweep's parts in threads that cast and compute at the same time. One cast is single-threaded;
``threads`` > 1 splits a large cast into chunks cast by a small thread pool (open3d's speed on
two cores). The scenes are built from the same world-frame float32 triangles as open3d's, so the
first hits agree within float32 rounding (test/core/raycast/test_caster.py).
"""

from concurrent.futures import ThreadPoolExecutor
import os
import threading

from embreex import mesh_construction, rtcore, rtcore_scene
import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.raycast.backend import CastResult

_SCENE_CACHE_SIZE = 8
_CHUNK_RAYS = 32768          # a cast of more rays than this is split over the pool's threads
_POOLS = {}
_POOLS_LOCK = threading.Lock()


def _pool(threads):
    """Return the process-wide thread pool of that size (created on first use)."""
    with _POOLS_LOCK:
        if threads not in _POOLS:
            _POOLS[threads] = ThreadPoolExecutor(threads, thread_name_prefix='embree')
        return _POOLS[threads]


class EmbreeCaster:
    """Caster (raycast/backend.py) on embreex's EmbreeScene (Embree 4), GIL released."""

    def __init__(self, geometries, threads=None):
        """
        Keep the geometries (Sequence of Geometry); build the scene without ignored objects.

        threads: threads per large cast (None: the CPU count; 1: cast in the calling thread).
        """
        self._geoms = list(geometries)
        self.threads = max(1, int(threads or os.cpu_count() or 1))
        self._device = rtcore.EmbreeDevice()
        self._scenes = {}
        self._lock = threading.Lock()
        self._scene(frozenset())

    def __reduce__(self):
        """Pickle as the geometries (an Embree scene does not pickle)."""
        return (EmbreeCaster, (self._geoms, self.threads))

    def _scene(self, ignored):
        """
        Return (scene, lookup) without the ignored objects.

        lookup (G + 1,) int32 maps an Embree geometry id to its object index; its last entry,
        -1, is what the invalid id (a miss, -1) indexes.
        """
        with self._lock:
            if ignored not in self._scenes:
                if len(self._scenes) >= _SCENE_CACHE_SIZE:
                    self._scenes.pop(next(iter(self._scenes)))
                scene = rtcore_scene.EmbreeScene(self._device)
                objs = []
                for index, geom in enumerate(self._geoms):
                    if index in ignored or geom.triangles.shape[0] == 0:
                        continue
                    mesh_construction.TriangleMesh(
                        scene, np.ascontiguousarray(geom.vertices, np.float32),
                        np.ascontiguousarray(geom.triangles, np.int32))
                    objs.append(index)
                lookup = np.append(np.asarray(objs, np.int32), np.int32(-1))
                # Embree builds its BVH on the first cast; do it now, not in a sweep.
                scene.run(np.zeros((1, 3), np.float32), np.ones((1, 3), np.float32))
                self._scenes[ignored] = (scene, lookup)
            return self._scenes[ignored]

    def cast_rays(self, rays: NDArray[np.float32],
                  ignored: frozenset[int] = frozenset()) -> CastResult:
        """Cast rays (M, 6) float32 once; see backend.Caster (t float32, normal float32)."""
        scene, lookup = self._scene(frozenset(ignored))
        rays = np.ascontiguousarray(rays, np.float32)
        m = rays.shape[0]
        n_chunks = min(self.threads, m // _CHUNK_RAYS)
        if n_chunks <= 1:
            parts = [scene.run(rays[:, :3], rays[:, 3:], output=1)]
        else:
            bounds = np.linspace(0, m, n_chunks + 1).astype(np.int64)
            futures = [_pool(self.threads).submit(
                scene.run, rays[lo:hi, :3], rays[lo:hi, 3:], None, 'INTERSECT', 1)
                for lo, hi in zip(bounds[:-1], bounds[1:])]
            parts = [f.result() for f in futures]

        def column(key):
            return parts[0][key] if len(parts) == 1 else np.concatenate([p[key] for p in parts])

        t, gid, normal = column('tfar'), column('geomID'), column('Ng')
        miss = gid < 0
        t[miss] = np.inf
        # Embree's geometric normal is cross(v1 - v0, v2 - v0), not unit, and undefined for a
        # miss (its length is taken as 1 there, and for a degenerate triangle).
        with np.errstate(over='ignore', invalid='ignore'):
            length = np.sqrt(np.einsum('ij,ij->i', normal, normal))
        normal /= np.where(miss | ~(length > 0.0), np.float32(1.0), length)[:, None]
        return CastResult(t, np.take(lookup, gid), column('primID'), normal)
