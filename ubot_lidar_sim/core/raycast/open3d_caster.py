"""
The default ray-casting backend, open3d's RaycastingScene: the only code that casts with open3d.

One scene per distinct set of ignored objects, built on first use and kept (the last few sets):
a sensor that ignores its own vehicle casts into a scene without it.
"""

import numpy as np
from numpy.typing import NDArray
import open3d as o3d

from ubot_lidar_sim.core.raycast.backend import CastResult

_SCENE_CACHE_SIZE = 8


class Open3dCaster:
    """Caster (raycast/backend.py) on open3d.t.geometry.RaycastingScene."""

    def __init__(self, geometries, threads=0):
        """
        Keep the geometries (Sequence of Geometry); build the scene without ignored objects.

        threads: open3d's threads per cast (0: automatic, every core; 1: a process that has
        one core to itself, e.g. one of several dataset workers, casts without contending).
        """
        self._geoms = list(geometries)
        self.threads = int(threads)
        self._scenes = {}
        self._scene(frozenset())

    def _scene(self, ignored):
        """
        Return (scene, lookup) without the ignored objects.

        lookup (G + 1,) int32 maps an open3d geometry id to its object index; its last entry,
        -1, is what the invalid id 0xFFFFFFFF (a miss) reads as int32 -1 indexes.
        """
        if ignored not in self._scenes:
            if len(self._scenes) >= _SCENE_CACHE_SIZE:
                self._scenes.pop(next(iter(self._scenes)))
            scene = o3d.t.geometry.RaycastingScene()
            ids, objs = [], []
            for index, geom in enumerate(self._geoms):
                if index in ignored or geom.triangles.shape[0] == 0:
                    continue
                ids.append(scene.add_triangles(
                    o3d.core.Tensor(np.ascontiguousarray(geom.vertices, np.float32)),
                    o3d.core.Tensor(np.ascontiguousarray(geom.triangles, np.uint32))))
                objs.append(index)
            lookup = np.full(max(ids, default=-1) + 2, -1, np.int32)
            lookup[np.asarray(ids, np.int64)] = objs
            self._scenes[ignored] = (scene, lookup)
        return self._scenes[ignored]

    def cast_rays(self, rays: NDArray[np.float32],
                  ignored: frozenset[int] = frozenset()) -> CastResult:
        """Cast rays (M, 6) float32 once; see backend.Caster (t float32, normal float32)."""
        scene, lookup = self._scene(frozenset(ignored))
        res = scene.cast_rays(o3d.core.Tensor.from_numpy(rays), nthreads=self.threads)
        gid = res['geometry_ids'].numpy().view(np.int32)       # a miss, 0xFFFFFFFF, reads -1
        return CastResult(res['t_hit'].numpy(), np.take(lookup, gid),
                          res['primitive_ids'].numpy(), res['primitive_normals'].numpy())
