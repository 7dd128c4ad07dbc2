"""
SDF ``<geometry>`` -> triangles in the element's frame, and their Geometry in the world frame.

box, cylinder (axis z), sphere, capsule (``<length>`` between the cap centres, trimesh's
tessellation), ellipsoid (``<radii>``), cone (SDF 1.11 ``<radius>``, ``<length>``: its base at
-length / 2 and its tip at +length / 2, as gz-common's MeshManager::CreateCone builds it,
graphics/src/MeshManager.cc:1259-1330), plane (finite: ``<size>`` facing ``<normal>``, like the
YAML plane), mesh (``<uri>``, ``<scale>`` of three numbers > 0, ``<submesh>`` with ``<name>``
and ``<center>``; core/world/meshes.py) and heightmap (an 8- or 16-bit PNG, as gz-common reads
it: of a grey, RGB or RGBA image the first channel, gz-common
geospatial/include/gz/common/geospatial/ImageHeightmap.hh:115; the brightest pixel at size z,
spanning size x by size y centred on ``<pos>``, the image's top row at +y).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree.ElementTree import Element

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.raycast.geometry import Geometry, KIND_BOX, KIND_CYLINDER, KIND_MESH, \
    KIND_SPHERE
from ubot_lidar_sim.core.world.loaders import image_size, read_image
from ubot_lidar_sim.core.world.meshes import load_mesh, load_parts, MeshError
from ubot_lidar_sim.core.world.sdf.reading import number, numbers, SdfError, SdfMissing, text_of
from ubot_lidar_sim.core.world.sdf.uris import resolve
from ubot_lidar_sim.core.world.shapes import boxes, CYLINDER, grid, plane, SPHERE

#: The directories a relative URI is looked up in first (uris.resolve's base_dirs).
Dirs = Sequence[str | Path | None]
GEOMETRY_TYPES = ('box', 'cylinder', 'sphere', 'capsule', 'ellipsoid', 'cone', 'plane', 'mesh',
                  'heightmap')
CONE_SEGMENTS = 48              # as the YAML cylinder's (shapes.CYLINDER)
# Elements of <geometry> that draw nothing (SDF 1.9 empty; polyline is not read: refused).
EMPTY = ('empty',)


@dataclass
class Shape:
    """Triangles of one geometry in its element's frame, with its analytic kind and the files."""

    vertices: NDArray[np.float64]
    triangles: NDArray[np.int64]
    kind: int = KIND_MESH
    size: NDArray[np.float64] = field(default_factory=lambda: np.zeros(3))   # box / (r, r, h)
    ground: bool = False
    files: tuple[Path, ...] = ()


def _vector(el: Element, tag: str, n: int, where: str,
            default: str | None = None) -> NDArray[np.float64]:
    """Return a child of n numbers > 0 as an array."""
    text = text_of(el, tag, where, default)
    v = np.asarray(numbers(text, n, f'{where}/{tag}', tag), np.float64)
    if not np.all(v > 0):
        raise SdfError(f'{where}/{tag}: expected {n} numbers > 0, got {text}')
    return v


def _file(el: Element, where: str, base_dirs: Dirs, model_paths: Sequence[str]) -> Path:
    """Return the file a geometry's <uri> names (SdfMissing if it is not one)."""
    uri = text_of(el, 'uri', where)
    path = resolve(uri, base_dirs, model_paths, f'{where}/uri')
    if isinstance(path, str) or not path.is_file():
        raise SdfMissing(f"{where}/uri: '{uri}' -> '{path}' is not a file")
    return path


def _cone(r: float, h: float) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Return (vertices, triangles) of a cone: base radius r at z = -h / 2, tip at +h / 2."""
    n = CONE_SEGMENTS
    phi = 2.0 * np.pi * np.arange(n) / n
    v = np.concatenate([np.c_[r * np.cos(phi), r * np.sin(phi), np.full(n, -h / 2.0)],
                        [[0.0, 0.0, h / 2.0], [0.0, 0.0, -h / 2.0]]])
    k, k1 = np.arange(n), (np.arange(n) + 1) % n
    # counter-clockwise seen from outside: the side towards the tip, the base from below
    t = np.concatenate([np.stack([k, k1, np.full(n, n)], 1),
                        np.stack([np.full(n, n + 1), k1, k], 1)])
    return v, t.astype(np.int64)


def _mesh(el: Element, where: str, base_dirs: Dirs, model_paths: Sequence[str], budget: int
          ) -> Shape:
    """Return the Shape of a <mesh>: its file, scale and submesh."""
    path = _file(el, where, base_dirs, model_paths)
    scale = _vector(el, 'scale', 3, where, '1 1 1')
    sub = el.find('submesh')
    try:
        if sub is None:
            v, t = load_mesh(path, budget)
        else:
            name = text_of(sub, 'name', f'{where}/submesh')
            names, parts = load_parts(path, budget)
            if name not in names:
                raise SdfError(f"{where}/submesh/name: '{name}' is not a submesh of "
                               f"'{path.name}' ({', '.join(names[:8])})")
            v, t = parts[names.index(name)]
            if text_of(sub, 'center', f'{where}/submesh', 'false') == 'true':
                v = v - (v.min(axis=0) + v.max(axis=0)) / 2.0
    except MeshError as exc:
        raise SdfError(f"{where}/uri: mesh '{path}' {exc}") from None
    return Shape(v * scale, t, files=(path,))


def _heightmap(el: Element, where: str, base_dirs: Dirs, model_paths: Sequence[str],
               budget: int) -> Shape:
    """Return the Shape of a <heightmap> of an 8- or 16-bit PNG (its first channel)."""
    path = _file(el, where, base_dirs, model_paths)
    size_px = image_size(path)
    if size_px is None or path.suffix.lower() != '.png':
        raise SdfError(f"{where}/uri: heightmap '{path.name}' is not a PNG (only PNG "
                       'heightmaps are read)')
    if 2 * (size_px[0] - 1) * (size_px[1] - 1) > budget:
        raise SdfError(f"{where}/uri: heightmap '{path.name}' {size_px} needs more triangles "
                       f'than the {budget} left of max_triangles')
    img = read_image(path)
    if img.ndim == 3 and img.shape[2] in (3, 4):
        img = img[:, :, 0]              # gz-common's FillHeights reads channel 0 of each pixel
    if img.ndim != 2 or img.dtype not in (np.uint8, np.uint16) or min(img.shape) < 2:
        raise SdfError(f"{where}/uri: heightmap '{path.name}' is not a grey, RGB or RGBA "
                       f'8- or 16-bit image (shape {img.shape}, {img.dtype})')
    size = _vector(el, 'size', 3, where, '1 1 1')
    pos = np.asarray(numbers(text_of(el, 'pos', where, '0 0 0'), 3, f'{where}/pos', 'pos'))
    rows, cols = img.shape
    # gz-common's image heightmap: scale z = size z / the brightest pixel, rows flipped in y
    peak = float(img.max())
    heights = img[::-1].astype(np.float64) * (size[2] / peak if peak > 0 else 0.0)
    v, t = grid(heights, 1.0)
    v[:, 0] = v[:, 0] * size[0] / (cols - 1) - size[0] / 2.0
    v[:, 1] = v[:, 1] * size[1] / (rows - 1) - size[1] / 2.0
    return Shape(v + pos, t, ground=True, files=(path,))


def _plane(el: Element, where: str) -> Shape:
    """Return the Shape of a finite plane of <size> facing <normal>."""
    size = _vector(el, 'size', 2, where, '1 1')
    normal = np.asarray(numbers(text_of(el, 'normal', where, '0 0 1'), 3, f'{where}/normal',
                                'normal'))
    if not np.linalg.norm(normal) > 0:
        raise SdfError(f'{where}/normal: the zero vector')
    z = normal / np.linalg.norm(normal)
    x = np.cross([0.0, 1.0, 0.0], z) if abs(z[1]) < 0.9 else np.cross(z, [0.0, 0.0, 1.0])
    x /= np.linalg.norm(x)
    rot = np.stack([x, np.cross(z, x), z], axis=1)
    v, t = plane(size)
    return Shape(v @ rot.T, np.asarray(t, np.int64), ground=True)


def read_geometry(geom_el: Element, where: str, base_dirs: Dirs, model_paths: Sequence[str],
                  budget: int) -> Shape | None:
    """Return the Shape of a <geometry> element (None for <empty>); SdfError for another type."""
    children = [c for c in geom_el if isinstance(c.tag, str)]
    if not children:
        raise SdfError(f'{where}: <geometry> is empty')
    el = children[0]
    where = f'{where}/{el.tag}'
    if el.tag in EMPTY:
        return None
    if el.tag == 'box':
        size = _vector(el, 'size', 3, where, '1 1 1')
        v, t = boxes([0.0, 0.0, 0.0], size)
        return Shape(v, t, KIND_BOX, size)
    if el.tag in ('sphere', 'cylinder', 'capsule'):
        r = number(el, 'radius', where, 0.5 if el.tag != 'capsule' else None)
        if el.tag == 'sphere':
            return Shape(SPHERE[0] * r, SPHERE[1], KIND_SPHERE, np.array([r, r, r]))
        h = number(el, 'length', where, 1.0 if el.tag == 'cylinder' else None)
        if el.tag == 'cylinder':
            return Shape(CYLINDER[0] * [r, r, h], CYLINDER[1], KIND_CYLINDER, np.array([r, r, h]))
        import trimesh      # only for a capsule (meshes.py says why it loads late)

        m = trimesh.creation.capsule(height=h, radius=r, count=[48, 24])
        return Shape(np.asarray(m.vertices, np.float64), np.asarray(m.faces, np.int64))
    if el.tag == 'ellipsoid':
        return Shape(SPHERE[0] * _vector(el, 'radii', 3, where), SPHERE[1])
    if el.tag == 'cone':
        return Shape(*_cone(number(el, 'radius', where, 1.0), number(el, 'length', where, 1.0)))
    if el.tag == 'plane':
        return _plane(el, where)
    if el.tag == 'mesh':
        return _mesh(el, where, base_dirs, model_paths, budget)
    if el.tag == 'heightmap':
        return _heightmap(el, where, base_dirs, model_paths, budget)
    raise SdfError(f"{where}: geometry type '{el.tag}' is not supported (supported: "
                   f"{', '.join(GEOMETRY_TYPES)})")


def place(shape: Shape, world_from: NDArray[np.float64]) -> Geometry:
    """Return the world-frame Geometry of a Shape posed by world_from (4, 4)."""
    rot, p = world_from[:3, :3], world_from[:3, 3]
    v = np.ascontiguousarray(shape.vertices @ rot.T + p)
    t = np.asarray(shape.triangles, np.int64)
    if shape.kind == KIND_BOX:
        return Geometry(v, t, KIND_BOX, True, p.copy(), frame=rot.copy(),
                        half_size_m=shape.size / 2.0)
    if shape.kind == KIND_SPHERE:
        return Geometry(v, t, KIND_SPHERE, True, p.copy(), radius_m=float(shape.size[0]))
    if shape.kind == KIND_CYLINDER:
        return Geometry(v, t, KIND_CYLINDER, True, p.copy(), rot[:, 2].copy(),
                        float(shape.size[0]), float(shape.size[2]) / 2.0, CYLINDER[2])
    return Geometry(v, t)
