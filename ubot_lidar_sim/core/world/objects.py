"""
World objects: one checked world-file entry -> a WorldObject record and its world-frame Geometry.

An object is placed by its pose (xyz, then R = Rz(yaw) Ry(pitch) Rx(roll) of rpy_deg); a mesh,
heightfield or occupancy map by its own origin, the other types by their centre (shapes.py).
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.poses import rotation_rpy
from ubot_lidar_sim.core.raycast.geometry import Geometry, KIND_BOX, KIND_CYLINDER, KIND_SPHERE
from ubot_lidar_sim.core.world.loaders import heightfield
from ubot_lidar_sim.core.world.meshes import mesh
from ubot_lidar_sim.core.world.occupancy import occupancy_map
from ubot_lidar_sim.core.world.schema import check_object, Context
from ubot_lidar_sim.core.world.shapes import boxes, CYLINDER, plane, SPHERE

#: The builders of the file-backed types: (entry, where, ctx, budget) -> vertices, triangles.
_FILE_TYPES: dict[str, Callable[[Mapping[str, Any], str, Context, int],
                                tuple[NDArray[np.float64], NDArray[np.int64]]]] = {
    'mesh': mesh, 'heightfield': heightfield, 'occupancy_map': occupancy_map}


@dataclass(frozen=True)
class WorldObject:
    """One object of the world: material index, semantic class and the trace flags."""

    name: str
    type: str                       # noqa: A003 (the world-file key)
    material: int
    class_id: int
    foliage: bool
    ground: bool
    n_triangles: int


def build_object(obj: Any, index: int, ctx: Context, budget: int, section: str = 'objects'
                 ) -> tuple[WorldObject, Geometry]:
    """
    Check objects[index] and build it; returns (WorldObject, Geometry) within budget.

    section 'actors': an actor (schema.check_object), placed by its pose in its own frame.
    """
    keys = check_object(obj, index, ctx, section)
    kind, where, xyz = keys.kind, keys.where, keys.xyz
    rot = rotation_rpy(*np.radians(keys.rpy_deg))
    extra: dict[str, Any] = {}
    if kind == 'plane':
        v, t = plane(ctx.vector(obj, 'size_m', where, 2, positive=True))
    elif kind == 'box':
        size = ctx.vector(obj, 'size_m', where, 3, positive=True)
        v, t = boxes([0.0, 0.0, 0.0], size)
        extra = {'closed': True, 'kind': KIND_BOX, 'center': xyz, 'frame': rot,
                 'half_size_m': np.asarray(size, np.float64) / 2.0}
    elif kind == 'sphere':
        r = ctx.number(obj, 'radius_m', where)
        v, t = SPHERE[0] * r, SPHERE[1]
        extra = {'closed': True, 'kind': KIND_SPHERE, 'center': xyz, 'radius_m': r}
    elif kind == 'cylinder':
        r, h = ctx.number(obj, 'radius_m', where), ctx.number(obj, 'height_m', where)
        v, t = CYLINDER[0] * [r, r, h], CYLINDER[1]
        extra = {'closed': True, 'kind': KIND_CYLINDER, 'center': xyz, 'axis': rot[:, 2],
                 'radius_m': r, 'half_height_m': h / 2.0, 'n_side': CYLINDER[2]}
    else:
        v, t = _FILE_TYPES[kind](obj, where, ctx, budget)
    v = np.ascontiguousarray(v @ rot.T + xyz)
    if kind in _FILE_TYPES and v.size:      # a file's extent is known once it is placed
        largest = float(np.abs(v).max())
        ctx.within_extent(largest, f'{where}.file', f'a vertex at {largest:.3g} m')
    geometry = Geometry(v, np.asarray(t, np.int64), **extra)
    return WorldObject(keys.name, kind, keys.material, keys.class_id, keys.foliage, keys.ground,
                       int(t.shape[0])), geometry


def build_objects(entries: Sequence[Any], ctx: Context, max_triangles: int
                  ) -> tuple[list[WorldObject], list[Geometry]]:
    """Build every entry of the objects list; returns (objects, geometries), names unique."""
    objects: list[WorldObject] = []
    geoms: list[Geometry] = []
    used, names = 0, set()
    for index, entry in enumerate(entries):
        obj, geom = build_object(entry, index, ctx, max_triangles - used)
        if obj.name in names:
            raise ctx.error(f'objects[{index}].name', f"duplicate name '{obj.name}'")
        names.add(obj.name)
        used += obj.n_triangles
        if used > max_triangles:
            raise ctx.error(f"objects[{index}] '{obj.name}'", f'world exceeds max_triangles '
                            f'{max_triangles} ({used} triangles so far)')
        objects.append(obj)
        geoms.append(geom)
    return objects, geoms
