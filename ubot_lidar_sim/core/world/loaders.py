"""
Geometry from files: PLY / OBJ / STL meshes and heightfields (.npy or 16-bit PNG).

A file's triangle count is estimated from its header or size before it is read, so a file
beyond the world's max_triangles is refused without allocating it (images: ``image_size``).
"""

from collections.abc import Mapping, Sequence
from pathlib import Path
import struct
from typing import Any

import numpy as np
from numpy.typing import NDArray
import open3d as o3d

from ubot_lidar_sim.core.file_checks import check_regular_file, FileRefused, MESH_MAX_BYTES
from ubot_lidar_sim.core.world.schema import Context
from ubot_lidar_sim.core.world.shapes import grid

_MESH_MIN_BYTES = {'.obj': (8, b'\nf '), '.stl': (90, b'endfacet')}   # bytes per face, face token


def _quiet() -> Any:
    """Silence open3d's reader warnings: a bad file is reported as one WorldError instead."""
    return o3d.utility.VerbosityContextManager(o3d.utility.VerbosityLevel.Error)


def read_image(path: str | Path) -> NDArray[Any]:
    """Read an image file (PNG, ...) as a numpy array (empty if it cannot be read)."""
    with _quiet():
        return np.asarray(o3d.io.read_image(Path(path)))


def image_size(path: str | Path) -> tuple[int, int] | None:
    """Return (width, height) from a PNG or JPEG file's header, None for another file."""
    with open(path, 'rb') as f:
        head = f.read(1 << 18)
    if head[:8] == b'\x89PNG\r\n\x1a\n' and head[12:16] == b'IHDR':
        w, h = struct.unpack('>II', head[16:24])
        return int(w), int(h)
    pos = 2 if head[:2] == b'\xff\xd8' else len(head)     # JPEG: walk to a start of frame
    while pos + 9 <= len(head) and head[pos] == 0xFF:
        marker, length = head[pos + 1], struct.unpack('>H', head[pos + 2:pos + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack('>HH', head[pos + 5:pos + 9])
            return int(width), int(height)
        pos += 2 + length
    return None


def _count_token(path: Path, token: bytes) -> int:
    """Count occurrences of a byte token in a file, streaming 8 MB at a time."""
    count, tail = 0, b'\n'
    with open(path, 'rb') as f:
        while chunk := f.read(1 << 23):
            data = tail + chunk
            count += data.count(token)
            tail = data[-(len(token) - 1):]
            count -= tail.count(token)          # a token fully inside the tail is counted again
    return count


def _mesh_face_estimate(path: Path, budget: int) -> int | None:
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


def mesh(obj: Mapping[str, Any], where: str, ctx: Context,
         budget: int) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """
    Read a PLY / OBJ / STL mesh and scale it; returns vertices (object frame), triangles.

    obj is the checked world-file entry, where its key path in errors, ctx the schema.Context
    and budget the triangles left of max_triangles (checked from the file before reading it).
    """
    path = ctx.path(obj, where)
    if path.suffix.lower() not in ('.ply', '.obj', '.stl'):
        raise ctx.error(f'{where}.file', f"unsupported mesh format '{path.suffix}' "
                        '(dae, gltf, glb, obj, stl, ply)')
    try:
        check_regular_file(path, MESH_MAX_BYTES)    # before a byte is read (a sparse 2 GB file)
    except FileRefused as exc:
        raise ctx.error(f'{where}.file', f"'{path.name}' is {exc.strerror}") from None
    estimate = _mesh_face_estimate(path, budget)
    if estimate is None:
        raise ctx.error(f'{where}.file', f"'{path.name}' is not a valid PLY file (corrupt header)")
    if estimate > budget:
        raise ctx.error(f'{where}.file', f"'{path.name}' has about {estimate} triangles, more "
                        f'than the {budget} left of max_triangles {ctx.budget}')
    with _quiet():
        loaded = o3d.io.read_triangle_mesh(path)
    v, t = np.asarray(loaded.vertices, np.float64), np.asarray(loaded.triangles, np.int64)
    if v.shape[0] == 0:
        raise ctx.error(f'{where}.file', f"'{path.name}' cannot be read as a mesh (corrupt file)")
    if path.suffix.lower() == '.ply' and t.shape[0] < estimate:
        raise ctx.error(f'{where}.file', f"'{path.name}' cannot be read as a mesh (corrupt file)")
    if t.shape[0] == 0:
        raise ctx.error(f'{where}.file', f"mesh '{path.name}' has no triangles")
    if not np.all(np.isfinite(v)):
        raise ctx.error(f'{where}.file', f"mesh '{path.name}' has non-finite vertices")
    return v * mesh_scale(obj, where, ctx), t


def mesh_scale(obj: Mapping[str, Any], where: str, ctx: Context) -> float | NDArray[np.float64]:
    """Return a mesh object's ``scale``: one number, or a positive (x, y, z) vector."""
    if isinstance(obj.get('scale', 1.0), (list, tuple)):
        return ctx.vector(obj, 'scale', where, 3, positive=True)
    return ctx.number(obj, 'scale', where, 1.0)


def _check_grid(path: Path, shape: Sequence[int], where: str, ctx: Context, budget: int
                ) -> None:
    """Refuse a heightfield of shape (rows, columns) whose grid exceeds the budget."""
    if 2 * (shape[0] - 1) * (shape[1] - 1) > budget:
        raise ctx.error(f'{where}.file', f"'{path.name}' {tuple(shape)} needs more triangles "
                        f'than the {budget} left of max_triangles {ctx.budget}')


def heightfield(obj: Mapping[str, Any], where: str, ctx: Context, budget: int
                ) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """
    Read a heightfield file (.npy float array or 16-bit PNG) into grid triangles (as ``mesh``).

    Sample [i, j] sits at (j cell_m, i cell_m, h), rows along +y; a 16-bit PNG gives
    h = pixel / 65535 * height_scale_m.
    """
    path = ctx.path(obj, where)
    cell_m = ctx.number(obj, 'cell_m', where)
    suffix = path.suffix.lower()
    try:
        if suffix == '.npy':
            heights = np.load(path, mmap_mode='r', allow_pickle=False)
        elif suffix == '.png':
            if 'height_scale_m' not in obj:
                raise ctx.error(f'{where}.height_scale_m', 'required for a PNG heightfield')
            size = image_size(path)
            if size is not None:                # before decoding: (rows, columns)
                _check_grid(path, size[::-1], where, ctx, budget)
            heights = read_image(path)
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
    _check_grid(path, heights.shape, where, ctx, budget)
    if heights.dtype == np.uint16:
        heights = heights / 65535.0 * ctx.number(obj, 'height_scale_m', where)
    elif not np.issubdtype(heights.dtype, np.number):
        raise ctx.error(f'{where}.file', f"'{path.name}' holds {heights.dtype}, not numbers")
    heights = np.asarray(heights, np.float64)
    if not np.all(np.isfinite(heights)):
        raise ctx.error(f'{where}.file', f"'{path.name}' has non-finite heights")
    return grid(heights, cell_m)
