"""
The world of CONTRACT §5: objects from a YAML file (or a built-in world) traced by rays.

``World.load('demo' | 'flat' | path)`` validates the file (yaml.safe_load only), turns every
object into world-frame triangles and hands them to ``raycast.Tracer``; bad input raises one-line
WorldErrors that name the file, the key and the problem.

Geometry: a plane of size_m [x, y] faces +z; box, sphere and cylinder (axis z) are centred on
pose.xyz; a mesh or heightfield is placed by its own origin. Heightfield sample [i, j] sits at
(j cell_m, i cell_m, h) before the pose (rows along +y); a 16-bit PNG gives
h = pixel / 65535 * height_scale_m. An occupancy map puts its lower-left pixel at the map origin
(Nav2 map_server semantics, origin yaw included) and extrudes occupied cells (occupancy
(255 - p) / 255 > occupied_thresh, or p / 255 with negate) from z = 0 to wall_height_m, one box per
run of occupied cells in a row.
"""

from dataclasses import dataclass
import math
from pathlib import Path

import numpy as np
import open3d as o3d

from ubot_lidar_sim.core.errors import ConfigError, WorldError
from ubot_lidar_sim.core.raycast.geometry import Geometry, KIND_CYLINDER, KIND_SPHERE
from ubot_lidar_sim.core.raycast.open3d_caster import Open3dCaster
from ubot_lidar_sim.core.raycast.smoke import smoke_entry
from ubot_lidar_sim.core.raycast.tracer import check_rays, Tracer
from ubot_lidar_sim.core.world.builtin import build as build_builtin, BUILTIN_WORLDS
from ubot_lidar_sim.core.world.materials import FOLIAGE_MATERIALS, MATERIAL_NAMES, MaterialTable

MAX_TRIANGLES = 5_000_000
_COMMON = {'name', 'type', 'material', 'class_id', 'foliage', 'ground', 'pose'}
_TYPE_KEYS = {
    'plane': {'size_m'}, 'box': {'size_m'}, 'sphere': {'radius_m'},
    'cylinder': {'radius_m', 'height_m'}, 'mesh': {'file', 'scale'},
    'heightfield': {'file', 'cell_m', 'height_scale_m'},
    'occupancy_map': {'file', 'wall_height_m'},
}
_MESH_MIN_BYTES = {'.obj': (8, b'\nf '), '.stl': (90, b'endfacet')}   # bytes per face, face token


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


def _short(value):
    """Return repr(value) cut to one short line for an error message."""
    text = repr(value).replace('\n', ' ')
    return text if len(text) <= 60 else text[:57] + '...'


class _Ctx:
    """Where an object comes from (file name, directory for relative paths) and the budget."""

    def __init__(self, source, base_dir, max_triangles):
        self.source, self.base_dir, self.budget = source, base_dir, max_triangles

    def error(self, where, problem):
        return WorldError(f'{self.source}: {where}: {problem}')

    def number(self, obj, key, where, default=None, positive=True):
        value = obj.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or (positive and value <= 0):
            need = 'a number > 0' if positive else 'a finite number'
            raise self.error(f'{where}.{key}', f'expected {need}, got {_short(value)}')
        return float(value)

    def vector(self, obj, key, where, n, default=None, positive=False):
        value = obj.get(key, default)
        ok = isinstance(value, (list, tuple)) and len(value) == n and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            and (v > 0 or not positive) for v in value)
        if not ok:
            need = 'numbers > 0' if positive else 'numbers'
            raise self.error(f'{where}.{key}',
                             f'expected a list of {n} {need}, got {_short(value)}')
        return np.asarray(value, np.float64)

    def path(self, obj, where):
        value = obj.get('file')
        if not isinstance(value, str) or not value:
            raise self.error(f'{where}.file', f'expected a file path, got {_short(value)}')
        path = Path(value)
        if not path.is_absolute() and self.base_dir is not None:
            path = self.base_dir / path
        if not path.is_file():
            raise self.error(f'{where}.file', f"file '{path}' not found")
        return path


def _rotation(rpy_deg):
    """Return R = Rz(yaw) Ry(pitch) Rx(roll) (3, 3) from [roll, pitch, yaw] degrees."""
    r, p, y = np.radians(rpy_deg)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _outward(vertices, triangles):
    """Flip triangles of a convex template (centred at 0) whose normal points inwards."""
    a, b, c = (vertices[triangles[:, k]] for k in range(3))
    inward = np.sum(np.cross(b - a, c - a) * (a + b + c), axis=1) < 0.0
    triangles[inward] = triangles[inward][:, ::-1]
    return triangles


def _sphere_template(n_lon=48, n_lat=24):
    """Return a unit UV sphere: vertices (V, 3), outward triangles (T, 3)."""
    theta = np.pi * np.arange(1, n_lat) / n_lat
    phi = 2.0 * np.pi * np.arange(n_lon) / n_lon
    th, ph = np.meshgrid(theta, phi, indexing='ij')
    ring = np.stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)], -1)
    v = np.concatenate([[[0, 0, 1]], ring.reshape(-1, 3), [[0, 0, -1]]])
    k = np.arange(n_lon)
    k1 = (k + 1) % n_lon
    south = v.shape[0] - 1
    tris = [np.stack([np.zeros(n_lon, int), 1 + k, 1 + k1], 1),
            np.stack([np.full(n_lon, south), 1 + (n_lat - 2) * n_lon + k,
                      1 + (n_lat - 2) * n_lon + k1], 1)]
    row = 1 + n_lon * np.arange(n_lat - 2)[:, None]
    a, b, c, d = row + k, row + k1, row + n_lon + k, row + n_lon + k1
    tris += [np.stack([a, b, d], -1).reshape(-1, 3), np.stack([a, d, c], -1).reshape(-1, 3)]
    return v, _outward(v, np.concatenate(tris).astype(np.int64))


def _cylinder_template(n=48):
    """Cylinder of radius 1, height 1 centred at 0: vertices, triangles (side ones first)."""
    phi = 2.0 * np.pi * np.arange(n) / n
    ring = np.stack([np.cos(phi), np.sin(phi)], 1)
    v = np.concatenate([np.c_[ring, np.full(n, -0.5)], np.c_[ring, np.full(n, 0.5)],
                        [[0, 0, -0.5], [0, 0, 0.5]]])
    k = np.arange(n)
    k1 = (k + 1) % n
    side = np.concatenate([np.stack([k, k1, n + k1], 1), np.stack([k, n + k1, n + k], 1)])
    caps = np.concatenate([np.stack([np.full(n, 2 * n), k1, k], 1),
                           np.stack([np.full(n, 2 * n + 1), n + k, n + k1], 1)])
    return v, _outward(v, np.concatenate([side, caps]).astype(np.int64)), 2 * n


_BOX_V = np.array([[(i & 1) - 0.5, ((i >> 1) & 1) - 0.5, ((i >> 2) & 1) - 0.5] for i in range(8)])
_BOX_T = _outward(_BOX_V, np.array([[0, 1, 3], [0, 3, 2], [4, 5, 7], [4, 7, 6], [0, 1, 5],
                                    [0, 5, 4], [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4],
                                    [1, 3, 7], [1, 7, 5]]))
_SPHERE = _sphere_template()
_CYLINDER = _cylinder_template()


def boxes(centers, sizes):
    """Triangles of B axis-aligned boxes: vertices (8B, 3), triangles (12B, 3) int64."""
    centers = np.asarray(centers, float).reshape(-1, 3)
    sizes = np.asarray(sizes, float).reshape(-1, 3)
    v = centers[:, None, :] + sizes[:, None, :] * _BOX_V[None]
    t = _BOX_T[None] + 8 * np.arange(centers.shape[0])[:, None, None]
    return v.reshape(-1, 3), t.reshape(-1, 3)


def _grid(heights, cell_m):
    """Heightfield grid (rows along +y, columns along +x): vertices, upward triangles."""
    rows, cols = heights.shape
    jj, ii = np.meshgrid(np.arange(cols), np.arange(rows))
    v = np.stack([jj * cell_m, ii * cell_m, heights], -1).reshape(-1, 3)
    a = (np.arange(rows - 1)[:, None] * cols + np.arange(cols - 1)).ravel()
    t = np.concatenate([np.stack([a, a + 1, a + cols + 1], 1),
                        np.stack([a, a + cols + 1, a + cols], 1)])
    return v, t.astype(np.int64)


def _count_token(path, token):
    """Count occurrences of a byte token in a file, streaming 8 MB at a time."""
    count, tail = 0, b'\n'
    with open(path, 'rb') as f:
        while chunk := f.read(1 << 23):
            data = tail + chunk
            count += data.count(token)
            tail = data[-(len(token) - 1):]
            count -= tail.count(token)          # a token fully inside the tail is counted again
    return count


def _mesh_face_estimate(path, budget):
    """
    Return a cheap face count of a mesh file (header, size, face lines); None: bad PLY header.

    OBJ and ASCII STL files smaller than budget faces of the shortest possible size give 0.
    """
    suffix = path.suffix.lower()
    size = path.stat().st_size
    with open(path, 'rb') as f:
        head = f.read(65536)
    if suffix == '.ply':
        end = head.find(b'end_header')
        if not head.startswith(b'ply') or end < 0:
            return None
        faces, element, xyz = 0, None, set()
        for line in head[:end].decode('ascii', 'replace').splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[0] == 'element':
                element = parts[1]
                if element == 'face':
                    faces = int(parts[2]) if parts[2].isdigit() else -1
            elif len(parts) == 3 and parts[0] == 'property' and element == 'vertex':
                xyz.add(parts[2])
        return faces if faces >= 0 and {'x', 'y', 'z'} <= xyz else None
    if suffix == '.stl' and len(head) >= 84:
        n = int.from_bytes(head[80:84], 'little')
        if size == 84 + 50 * n:
            return n
    min_bytes, token = _MESH_MIN_BYTES[suffix]
    # A file too small to hold more than budget faces is not scanned; a bigger one is streamed.
    return 0 if size // min_bytes <= budget else _count_token(path, token)


def _mesh(obj, where, ctx, budget):
    """Read a PLY / OBJ / STL mesh and scale it; returns vertices (object frame), triangles."""
    path = ctx.path(obj, where)
    if path.suffix.lower() not in ('.ply', '.obj', '.stl'):
        raise ctx.error(f'{where}.file',
                        f"unsupported mesh format '{path.suffix}' (ply, obj, stl)")
    estimate = _mesh_face_estimate(path, budget)
    if estimate is None:
        raise ctx.error(f'{where}.file', f"'{path.name}' is not a valid PLY file (corrupt header)")
    if estimate > budget:
        raise ctx.error(f'{where}.file', f"'{path.name}' has about {estimate} triangles, more "
                        f'than the {budget} left of max_triangles {ctx.budget}')
    with o3d.utility.VerbosityContextManager(o3d.utility.VerbosityLevel.Error):
        mesh = o3d.io.read_triangle_mesh(str(path))
    v, t = np.asarray(mesh.vertices, np.float64), np.asarray(mesh.triangles, np.int64)
    if v.shape[0] == 0:
        raise ctx.error(f'{where}.file', f"'{path.name}' cannot be read as a mesh (corrupt file)")
    if path.suffix.lower() == '.ply' and t.shape[0] < estimate:
        raise ctx.error(f'{where}.file', f"'{path.name}' cannot be read as a mesh (corrupt file)")
    if t.shape[0] == 0:
        raise ctx.error(f'{where}.file', f"mesh '{path.name}' has no triangles")
    if not np.all(np.isfinite(v)):
        raise ctx.error(f'{where}.file', f"mesh '{path.name}' has non-finite vertices")
    scale = obj.get('scale', 1.0)
    if isinstance(scale, (list, tuple)):
        scale = ctx.vector(obj, 'scale', where, 3, positive=True)
    else:
        scale = ctx.number(obj, 'scale', where, 1.0)
    return v * scale, t


def _heightfield(obj, where, ctx, budget):
    """Read a heightfield (.npy float array or 16-bit PNG) into grid triangles."""
    path = ctx.path(obj, where)
    cell_m = ctx.number(obj, 'cell_m', where)
    suffix = path.suffix.lower()
    try:
        if suffix == '.npy':
            heights = np.load(path, mmap_mode='r', allow_pickle=False)
        elif suffix == '.png':
            if 'height_scale_m' not in obj:
                raise ctx.error(f'{where}.height_scale_m', 'required for a PNG heightfield')
            with o3d.utility.VerbosityContextManager(o3d.utility.VerbosityLevel.Error):
                heights = np.asarray(o3d.io.read_image(str(path)))
            if heights.dtype != np.uint16 or heights.ndim != 2:
                raise ctx.error(f'{where}.file', f"'{path.name}' is not a 16-bit grey PNG")
        else:
            raise ctx.error(f'{where}.file',
                            f"unsupported heightfield format '{suffix}' (npy, png)")
    except (ValueError, OSError) as exc:
        raise ctx.error(f'{where}.file', f"'{path.name}' cannot be read ({exc})") from exc
    if heights.ndim != 2 or min(heights.shape) < 2:
        raise ctx.error(f'{where}.file', f"'{path.name}' has shape {heights.shape}, expected a "
                        '2-D array of at least 2 x 2')
    if 2 * (heights.shape[0] - 1) * (heights.shape[1] - 1) > budget:
        raise ctx.error(f'{where}.file', f"'{path.name}' {heights.shape} needs more triangles "
                        f'than the {budget} left of max_triangles {ctx.budget}')
    if heights.dtype == np.uint16:
        heights = heights / 65535.0 * ctx.number(obj, 'height_scale_m', where)
    elif not np.issubdtype(heights.dtype, np.number):
        raise ctx.error(f'{where}.file', f"'{path.name}' holds {heights.dtype}, not numbers")
    heights = np.asarray(heights, np.float64)
    if not np.all(np.isfinite(heights)):
        raise ctx.error(f'{where}.file', f"'{path.name}' has non-finite heights")
    return _grid(heights, cell_m)


def _read_pgm(path):
    """Read a binary (P5) or ASCII (P2) PGM as a float array in [0, 1]; None if it is not one."""
    data = path.read_bytes()
    tokens, pos = [], 0
    while len(tokens) < 4:
        while pos < len(data) and data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b'#':
            pos = data.find(b'\n', pos) + 1 or len(data)
            continue
        end = pos
        while end < len(data) and not data[end:end + 1].isspace():
            end += 1
        if end == pos:
            return None
        tokens.append(data[pos:end])
        pos = end
    magic, width, height, maxval = tokens[0], *(int(t) if t.isdigit() else -1 for t in tokens[1:])
    if magic not in (b'P5', b'P2') or min(width, height, maxval) <= 0:
        return None
    if magic == b'P2':
        pixels = np.array(data[pos:].split()[:width * height], np.float64)
    else:
        dtype = np.dtype('>u2' if maxval > 255 else 'u1')
        pixels = np.frombuffer(data, dtype, width * height, pos + 1) \
            if len(data) >= pos + 1 + width * height * dtype.itemsize else np.zeros(0)
    if pixels.size != width * height:
        return None
    return pixels.reshape(height, width) / float(maxval)


def _occupancy_map(obj, where, ctx, budget):
    """Extrude the occupied cells of a Nav2 map_server map into boxes, merged along rows."""
    path = ctx.path(obj, where)
    wall_m = ctx.number(obj, 'wall_height_m', where, 2.0)
    meta = _read_yaml(path, WorldError)
    mctx = _Ctx(f'{path} (map of {ctx.source} {where})', path.parent, ctx.budget)
    if not isinstance(meta, dict):
        raise mctx.error('map', 'expected a mapping (Nav2 map_server YAML)')
    if 'image' not in meta:
        raise mctx.error('image', 'missing (Nav2 map YAML needs image, resolution, origin)')
    res = mctx.number(meta, 'resolution', 'map')
    origin = mctx.vector(meta, 'origin', 'map', 3)
    negate = meta.get('negate', 0)
    if negate not in (0, 1):
        raise mctx.error('negate', f'expected 0 or 1, got {_short(negate)}')
    thresh = mctx.number(meta, 'occupied_thresh', 'map', 0.65)
    image = mctx.path({'file': meta['image']}, 'image')
    if image.suffix.lower() in ('.pgm', '.pnm'):
        grey = _read_pgm(image)
    else:
        with o3d.utility.VerbosityContextManager(o3d.utility.VerbosityLevel.Error):
            pixels = np.asarray(o3d.io.read_image(str(image)))
        grey = None if pixels.size == 0 else pixels.astype(np.float64) / np.iinfo(pixels.dtype).max
        if grey is not None and grey.ndim == 3:
            grey = grey[:, :, :3].mean(axis=2)      # Nav2 averages the colour channels
    if grey is None:
        raise mctx.error('image', f"'{image.name}' cannot be read as a map image")
    occupied = (grey if negate else 1.0 - grey) > thresh
    rows = occupied.shape[0]
    edges = np.diff(np.pad(occupied, ((0, 0), (1, 1))).astype(np.int8), axis=1)
    r0, c0 = np.nonzero(edges == 1)                 # run starts, row-major like the ends
    c1 = np.nonzero(edges == -1)[1]
    if 12 * r0.size > budget:
        raise mctx.error('image', f'{r0.size} wall runs need more triangles than the {budget} '
                         f'left of max_triangles {ctx.budget}')
    centers = np.stack([(c0 + c1) * 0.5 * res, (rows - 0.5 - r0) * res,
                        np.full(r0.size, wall_m / 2)], 1)
    sizes = np.stack([(c1 - c0) * res, np.full(r0.size, res), np.full(r0.size, wall_m)], 1)
    v, t = boxes(centers, sizes)
    return v @ _rotation([0.0, 0.0, math.degrees(origin[2])]).T + [origin[0], origin[1], 0.0], t


def _object(obj, index, ctx, budget):
    """Validate one object mapping; returns (WorldObject without triangles, Geometry)."""
    where = f'objects[{index}]'
    if not isinstance(obj, dict):
        raise ctx.error(where, f'expected a mapping, got {_short(obj)}')
    kind = obj.get('type')
    if kind not in _TYPE_KEYS:
        raise ctx.error(f'{where}.type', f'unknown type {_short(kind)}, allowed '
                        + ', '.join(_TYPE_KEYS))
    name = obj.get('name', f'{kind}_{index}')
    if not isinstance(name, str) or not name:
        raise ctx.error(f'{where}.name', f'expected a non-empty string, got {_short(name)}')
    where = f"objects[{index}] '{name}'"
    unknown = sorted(set(obj) - _COMMON - _TYPE_KEYS[kind])
    if unknown:
        raise ctx.error(f'{where}.{unknown[0]}', f'unknown key for a {kind}, allowed '
                        + ', '.join(sorted(_COMMON | _TYPE_KEYS[kind])))
    material = obj.get('material', 'other')
    if material not in MATERIAL_NAMES:
        raise ctx.error(f'{where}.material', f'unknown material {_short(material)}, allowed '
                        + ', '.join(MATERIAL_NAMES))
    mat = MATERIAL_NAMES.index(material)
    class_id = obj.get('class_id', mat)
    if isinstance(class_id, bool) or not isinstance(class_id, int) or not 0 <= class_id <= 255:
        raise ctx.error(f'{where}.class_id', f'expected an int 0-255, got {_short(class_id)}')
    flags = {}
    for key, default in (('foliage', material in FOLIAGE_MATERIALS),
                         ('ground', kind in ('plane', 'heightfield'))):
        flags[key] = obj.get(key, default)
        if not isinstance(flags[key], bool):
            raise ctx.error(f'{where}.{key}', f'expected true or false, got {_short(flags[key])}')
    pose = obj.get('pose', {})
    if not isinstance(pose, dict) or set(pose) - {'xyz', 'rpy_deg'}:
        bad = sorted(set(pose) - {'xyz', 'rpy_deg'}) if isinstance(pose, dict) else None
        raise ctx.error(f'{where}.pose' + (f'.{bad[0]}' if bad else ''),
                        'unknown key, allowed xyz, rpy_deg' if bad else 'expected a mapping')
    xyz = ctx.vector(pose, 'xyz', f'{where}.pose', 3, [0.0, 0.0, 0.0])
    rot = _rotation(ctx.vector(pose, 'rpy_deg', f'{where}.pose', 3, [0.0, 0.0, 0.0]))
    extra = {}
    if kind == 'plane':
        sx, sy = ctx.vector(obj, 'size_m', where, 2, positive=True)
        v = np.array([[-sx, -sy, 0], [sx, -sy, 0], [sx, sy, 0], [-sx, sy, 0]]) / 2.0
        t = np.array([[0, 1, 2], [0, 2, 3]])
    elif kind == 'box':
        v, t = boxes([0.0, 0.0, 0.0], ctx.vector(obj, 'size_m', where, 3, positive=True))
        extra = {'closed': True}
    elif kind == 'sphere':
        r = ctx.number(obj, 'radius_m', where)
        v, t = _SPHERE[0] * r, _SPHERE[1]
        extra = {'closed': True, 'kind': KIND_SPHERE, 'center': xyz, 'radius_m': r}
    elif kind == 'cylinder':
        r, h = ctx.number(obj, 'radius_m', where), ctx.number(obj, 'height_m', where)
        v, t = _CYLINDER[0] * [r, r, h], _CYLINDER[1]
        extra = {'closed': True, 'kind': KIND_CYLINDER, 'center': xyz, 'axis': rot[:, 2],
                 'radius_m': r, 'half_height_m': h / 2.0, 'n_side': _CYLINDER[2]}
    else:
        build = {'mesh': _mesh, 'heightfield': _heightfield, 'occupancy_map': _occupancy_map}[kind]
        v, t = build(obj, where, ctx, budget)
    geometry = Geometry(np.ascontiguousarray(v @ rot.T + xyz), np.asarray(t, np.int64), **extra)
    return WorldObject(name, kind, mat, class_id, flags['foliage'], flags['ground'],
                       int(t.shape[0])), geometry


def _smoke(entries, ctx):
    """Validate the static smoke list; returns cells (K, 4) and densities (K,)."""
    if not isinstance(entries, list):
        raise ctx.error('smoke', f'expected a list, got {_short(entries)}')
    cells, dens = [], []
    for k, cell in enumerate(entries):
        where = f'smoke[{k}]'
        if not isinstance(cell, dict):
            raise ctx.error(where, f'expected a mapping, got {_short(cell)}')
        unknown = sorted(set(cell) - {'center', 'radius_m', 'density'})
        if unknown:
            raise ctx.error(f'{where}.{unknown[0]}',
                            'unknown key, allowed center, radius_m, density')
        density = ctx.number(cell, 'density', where, positive=False)
        if not 0.0 <= density <= 1.0:
            raise ctx.error(f'{where}.density', f'expected 0-1, got {density}')
        cells.append([*ctx.vector(cell, 'center', where, 3), ctx.number(cell, 'radius_m', where)])
        dens.append(density)
    return np.asarray(cells, np.float64).reshape(-1, 4), np.asarray(dens, np.float64)


def _read_yaml(path, error=WorldError):
    """Read a YAML text file with yaml.safe_load; one-line WorldError on any problem."""
    # Imported here: flake8's google order without application names would put yaml after us.
    import yaml
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise error(f'{path}: file: cannot be read ({exc.strerror})') from exc
    if not data.strip():
        raise error(f'{path}: file: the file is empty')
    if b'\0' in data:
        raise error(f'{path}: file: binary content, expected a YAML text file')
    try:
        return yaml.safe_load(data.decode('utf-8'))
    except UnicodeDecodeError as exc:
        raise error(f'{path}: file: not UTF-8 text, expected a YAML text file') from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        line = f'line {mark.line + 1}' if mark is not None else 'file'
        problem = getattr(exc, 'problem', None) or str(exc).splitlines()[0]
        raise error(f'{path}: {line}: YAML syntax error: {problem}') from exc


class World:
    """Objects of one world in a ray-casting scene; built once, traced per scan."""

    def __init__(self, frame, objects, geometries, smoke, smoke_density, materials=None,
                 caster=None):
        """
        Use World.load or World.from_dict; attributes follow docs/core-interfaces.md.

        caster: a backend.CasterFactory built once from the geometries (default Open3dCaster).
        """
        self.frame = frame
        self.objects = list(objects)
        self.smoke = smoke
        self.smoke_density = smoke_density
        self.materials = materials
        self._names = {o.name: i for i, o in enumerate(self.objects)}
        self._caster_factory = Open3dCaster if caster is None else caster
        self._tracer = Tracer(geometries, [o.material for o in objects],
                              [o.class_id for o in objects], [o.foliage for o in objects],
                              [o.ground for o in objects], self._caster_factory(geometries))

    def __reduce__(self):
        """Pickle as the parts the world is built from (a caster's scenes need not pickle)."""
        return (World, (self.frame, self.objects, self._tracer.geometries, self.smoke,
                        self.smoke_density, self.materials, self._caster_factory))

    @property
    def n_triangles(self):
        """Total triangle count of the scene."""
        return self._tracer.n_triangles

    @property
    def caster(self):
        """
        Return the world's ray-casting backend (a raycast.backend.Caster) for a bare cast.

        ``world.caster.cast_rays(rays (M, 6) float32)``: object indices follow ``objects``.
        """
        return self._tracer.caster

    @classmethod
    def load(cls, spec, materials=None, max_triangles=MAX_TRIANGLES, caster=None):
        """
        Load 'demo', 'flat' or a world YAML path.

        materials: the MaterialTable whose reflectivity_sd / micro_slope_deg texture the ground
        (None loads the default table); max_triangles caps the whole world; caster: the
        backend.CasterFactory (None: open3d).
        """
        materials = MaterialTable.load() if materials is None else materials
        if isinstance(spec, str) and spec in BUILTIN_WORLDS:
            return cls.from_dict(build_builtin(spec), f'<{spec}>', None, materials,
                                 max_triangles, caster)
        path = Path(spec)
        return cls.from_dict(_read_yaml(path), str(path), path.parent, materials, max_triangles,
                             caster)

    @classmethod
    def from_dict(cls, data, source='<dict>', base_dir=None, materials=None,
                  max_triangles=MAX_TRIANGLES, caster=None):
        """Build a world from the parsed YAML mapping; relative files resolve against base_dir."""
        ctx = _Ctx(source, base_dir, max_triangles)
        if not isinstance(data, dict):
            raise ctx.error('file', f'expected a mapping with frame, objects, smoke; got '
                            f'{type(data).__name__}')
        unknown = sorted(set(data) - {'frame', 'objects', 'smoke'})
        if unknown:
            raise ctx.error(unknown[0], 'unknown key, allowed frame, objects, smoke')
        frame = data.get('frame', 'map')
        if not isinstance(frame, str) or not frame:
            raise ctx.error('frame', f'expected a non-empty string, got {_short(frame)}')
        entries = data.get('objects', [])
        if not isinstance(entries, list):
            raise ctx.error('objects', f'expected a list, got {_short(entries)}')
        objects, geoms, used = [], [], 0
        for index, entry in enumerate(entries):
            obj, geom = _object(entry, index, ctx, max_triangles - used)
            if any(o.name == obj.name for o in objects):
                raise ctx.error(f'objects[{index}].name', f"duplicate name '{obj.name}'")
            used += obj.n_triangles
            if used > max_triangles:
                raise ctx.error(f"objects[{index}] '{obj.name}'", f'world exceeds max_triangles '
                                f'{max_triangles} ({used} triangles so far)')
            objects.append(obj)
            geoms.append(geom)
        smoke, density = _smoke(data.get('smoke', []) or [], ctx)
        return cls(frame, objects, geoms, smoke, density, materials, caster)

    def _texture(self, materials, sd, slope):
        """Return per-material (17,) reflectivity_sd and micro_slope_deg arrays (None = off)."""
        materials = self.materials if materials is None else materials
        if materials is not None:
            sd = materials.reflectivity_sd if sd is None else sd
            slope = materials.micro_slope_deg if slope is None else slope
        return (None if sd is None else np.asarray(sd, np.float64),
                None if slope is None else np.asarray(slope, np.float64))

    def _ignored(self, ignored):
        """Map ignored object names to a frozenset of object indices."""
        if isinstance(ignored, str):
            ignored = (ignored,)
        out = set()
        for name in ignored:
            if name not in self._names:
                names = ', '.join(list(self._names)[:8])
                names += ', ...' if len(self._names) > 8 else ''
                raise ConfigError('ignored_objects', name, f'names of world objects ({names})')
            out.add(self._names[name])
        return frozenset(out)

    def trace(self, origins, dirs, max_range_m, max_hits=4, continue_step_m=0.25, ignored=(),
              smoke=None, smoke_radius_scale=1.0, smoke_density_threshold=0.05, smoke_density=None,
              smoke_enabled=True, materials=None, reflectivity_sd=None, micro_slope_deg=None,
              with_points=True, with_normals=True):
        """
        Trace rays through foliage and smoke; returns Hits sorted by (ray, range).

        origins (N, 3), dirs (N, 3) unit, world frame; max_range_m scalar or (N,). A foliage hit
        lets the ray go on from hit + continue_step_m, up to max_hits (1-8) hits; a solid hit
        stops it. smoke: per-scan cells (K, 4) x, y, z, radius_m with smoke_density (K,), or
        (K, 5) with the density last; they join the world's static smoke unless smoke_enabled is
        False. A cell whose effective density (density x (1 - (b / r)^2), b the ray's closest
        approach, r = radius_m x smoke_radius_scale) is >= smoke_density_threshold ends the ray
        with a smoke hit at its entry point. Texture: reflectivity_sd / micro_slope_deg (17,)
        arrays override those of ``materials`` (a MaterialTable; default the world's).
        with_points / with_normals False skip Hits.point / Hits.normal (left None): a caller
        that needs neither (the LiDAR without pulse stretching) saves two passes over the hits.
        """
        o, d, rng = check_rays(origins, dirs, max_range_m)
        if isinstance(max_hits, bool) or not isinstance(max_hits, (int, np.integer)) \
                or not 1 <= max_hits <= 8:
            raise ConfigError('max_hits', max_hits, 'an int in [1, 8]')
        if not continue_step_m > 0.0:
            raise ConfigError('continue_step_m', continue_step_m, '> 0')
        if not smoke_radius_scale >= 0.01:
            raise ConfigError('smoke_radius_scale', smoke_radius_scale, '>= 0.01')
        if not 0.0 <= smoke_density_threshold <= 1.0:
            raise ConfigError('smoke_density_threshold', smoke_density_threshold, '0-1')
        smoke_range = None
        if smoke_enabled:
            cells, dens = self.smoke, self.smoke_density
            if smoke is not None and len(smoke):
                extra = np.asarray(smoke, np.float64)
                if extra.ndim == 2 and extra.shape[1] == 5 and smoke_density is None:
                    extra, extra_d = extra[:, :4], extra[:, 4]
                else:
                    extra_d = np.asarray(smoke_density, np.float64).reshape(-1)
                if extra.ndim != 2 or extra.shape[1] != 4 or extra_d.shape != extra.shape[:1]:
                    raise ConfigError('smoke', extra.shape,
                                      '(K, 4) with smoke_density (K,), or (K, 5)')
                cells, dens = np.concatenate([cells, extra]), np.concatenate([dens, extra_d])
            if len(cells):
                smoke_range = smoke_entry(o, d, cells, dens, smoke_radius_scale,
                                          smoke_density_threshold, rng)
        sd, slope = self._texture(materials, reflectivity_sd, micro_slope_deg)
        return self._tracer.trace(o, d, rng, int(max_hits), float(continue_step_m),
                                  self._ignored(ignored), smoke_range, True, sd, slope,
                                  bool(with_points), bool(with_normals))

    def cast(self, origins, dirs, max_range_m, ignored=(), materials=None, reflectivity_sd=None,
             micro_slope_deg=None):
        """Return the first hit of each ray (no foliage continuation, no smoke), <= N Hits rows."""
        o, d, rng = check_rays(origins, dirs, max_range_m)
        sd, slope = self._texture(materials, reflectivity_sd, micro_slope_deg)
        return self._tracer.trace(o, d, rng, 1, 1.0, self._ignored(ignored), None, False, sd,
                                  slope)
