"""
Nav2 occupancy maps as walls: a map_server YAML + image extruded into boxes.

The lower-left pixel sits at the map origin (Nav2 map_server semantics, origin yaw included).
Occupied cells (occupancy (255 - p) / 255 > occupied_thresh, or p / 255 with negate) are extruded
from z = 0 to wall_height_m, one box per run of occupied cells in a row.

Memory stays bounded: the image's size is read from its header (PNG, JPEG, PGM) and a map of more
than MAX_MAP_PIXELS is refused before it is decoded; the decoded image (1 byte per pixel for a
grey 8-bit map, a PGM is mapped from the file) is then turned into runs a band of rows at a time,
and the triangle budget is checked as the runs accumulate.
"""

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.poses import rotation_rpy
from ubot_lidar_sim.core.world.loaders import image_size, read_image
from ubot_lidar_sim.core.world.schema import Context, short
from ubot_lidar_sim.core.world.shapes import boxes
from ubot_lidar_sim.core.yaml_io import read_yaml

MAX_MAP_PIXELS = 100_000_000        # 10000 x 10000: 500 m square at 5 cm
BAND_PIXELS = 1 << 20               # pixels turned into runs at a time
#: (magic, width, height, maxval, data offset) of a PGM file.
PgmHeader = tuple[bytes, int, int, int, int]


def _pgm_header(path: Path) -> PgmHeader | None:
    """Return (magic, width, height, maxval, data offset) of a PGM file; None if not one."""
    with open(path, 'rb') as f:
        data = f.read(4096)
    tokens: list[bytes] = []
    pos = 0
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
    magic = tokens[0]
    width, height, maxval = (int(t) if t.isdigit() else -1 for t in tokens[1:])
    if magic not in (b'P5', b'P2') or min(width, height, maxval) <= 0:
        return None
    return magic, width, height, maxval, pos + 1


def _read_pgm(path: Path, header: PgmHeader) -> tuple[NDArray[Any] | None, int]:
    """Return the pixels (H, W) of a PGM (mapped from the file for P5) or None, and maxval."""
    magic, width, height, maxval, offset = header
    pixels: NDArray[Any]
    if magic == b'P2':
        pixels = np.array(path.read_bytes()[offset - 1:].split()[:width * height], np.float64)
    else:
        dtype = np.dtype('>u2' if maxval > 255 else 'u1')
        if path.stat().st_size < offset + width * height * dtype.itemsize:
            return None, maxval
        pixels = np.memmap(path, dtype, 'r', offset, (width * height,))
    if pixels.size != width * height:
        return None, maxval
    return pixels.reshape(height, width), maxval


def _runs(pixels: NDArray[Any], maxval: float, negate: int, thresh: float, budget: int,
          fail: Callable[[int], NoReturn]) -> list[NDArray[np.int64]]:
    """Return the runs (row, first column, end column) of occupied cells, band by band."""
    rows, cols = pixels.shape[:2]
    band = max(1, BAND_PIXELS // cols)
    found: list[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]] = []
    count = 0
    for r in range(0, rows, band):
        grey = pixels[r:r + band].astype(np.float64) / maxval
        if grey.ndim == 3:
            grey = grey[:, :, :3].mean(axis=2)      # Nav2 averages the colour channels
        occupied = (grey if negate else 1.0 - grey) > thresh
        edges = np.diff(np.pad(occupied, ((0, 0), (1, 1))).astype(np.int8), axis=1)
        r0, c0 = np.nonzero(edges == 1)             # run starts, row-major like the ends
        c1 = np.nonzero(edges == -1)[1]
        count += r0.size
        if 12 * count > budget:
            fail(count)
        found.append((r0 + r, c0, c1))
    return [np.concatenate(parts) for parts in zip(*found)]


def occupancy_map(obj: Mapping[str, Any], where: str, ctx: Context, budget: int
                  ) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """
    Extrude the occupied cells of a Nav2 map_server map into boxes, merged along rows.

    Arguments as loaders.mesh; returns vertices (V, 3) before the pose and triangles (T, 3).
    """
    path = ctx.path(obj, where)
    wall_m = ctx.number(obj, 'wall_height_m', where, 2.0)
    meta = read_yaml(path)
    mctx = Context(f'{path} (map of {ctx.source} {where})', path.parent, ctx.budget)
    mctx.files = ctx.files          # the image is a file of the world too
    if not isinstance(meta, dict):
        raise mctx.error('map', 'expected a mapping (Nav2 map_server YAML)')
    if 'image' not in meta:
        raise mctx.error('image', 'missing (Nav2 map YAML needs image, resolution, origin)')
    res = mctx.number(meta, 'resolution', 'map')
    origin = mctx.vector(meta, 'origin', 'map', 3)
    negate = meta.get('negate', 0)
    if negate not in (0, 1):
        raise mctx.error('negate', f'expected 0 or 1, got {short(negate)}')
    thresh = mctx.number(meta, 'occupied_thresh', 'map', 0.65)
    image = mctx.path({'file': meta['image']}, 'image')
    pgm = _pgm_header(image) if image.suffix.lower() in ('.pgm', '.pnm') else None
    size = pgm[1:3] if pgm is not None else image_size(image)
    if size is not None and size[0] * size[1] > MAX_MAP_PIXELS:
        raise mctx.error('image', f"'{image.name}' is {size[0]} x {size[1]} pixels, more than "
                         f'the {MAX_MAP_PIXELS} a map may have')
    pixels: NDArray[Any] | None = None
    maxval = 1
    if pgm is not None:
        pixels, maxval = _read_pgm(image, pgm)
    elif image.suffix.lower() not in ('.pgm', '.pnm'):
        pixels = read_image(image)
        maxval = int(np.iinfo(pixels.dtype).max) if pixels.size else 1
        pixels = pixels if pixels.size else None
    if pixels is None:
        raise mctx.error('image', f"'{image.name}' cannot be read as a map image")

    def fail(runs: int) -> NoReturn:
        raise mctx.error('image', f'{runs} wall runs need more triangles than the {budget} '
                         f'left of max_triangles {ctx.budget}')
    r0, c0, c1 = _runs(pixels, maxval, negate, thresh, budget, fail)
    rows = pixels.shape[0]
    centers = np.stack([(c0 + c1) * 0.5 * res, (rows - 0.5 - r0) * res,
                        np.full(r0.size, wall_m / 2)], 1)
    sizes = np.stack([(c1 - c0) * res, np.full(r0.size, res), np.full(r0.size, wall_m)], 1)
    v, t = boxes(centers, sizes)
    return v @ rotation_rpy(0.0, 0.0, origin[2]).T + [origin[0], origin[1], 0.0], t
