"""
Nav2 occupancy maps as walls: a map_server YAML + image extruded into boxes.

The lower-left pixel sits at the map origin (Nav2 map_server semantics, origin yaw included).
Occupied cells (occupancy (255 - p) / 255 > occupied_thresh, or p / 255 with negate) are extruded
from z = 0 to wall_height_m, one box per run of occupied cells in a row.
"""

import numpy as np

from ubot_lidar_sim.core.poses import rotation_rpy
from ubot_lidar_sim.core.world.loaders import read_image
from ubot_lidar_sim.core.world.schema import Context, short
from ubot_lidar_sim.core.world.shapes import boxes
from ubot_lidar_sim.core.yaml_io import read_yaml


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


def occupancy_map(obj, where, ctx, budget):
    """
    Extrude the occupied cells of a Nav2 map_server map into boxes, merged along rows.

    Arguments as loaders.mesh; returns vertices (V, 3) before the pose and triangles (T, 3).
    """
    path = ctx.path(obj, where)
    wall_m = ctx.number(obj, 'wall_height_m', where, 2.0)
    meta = read_yaml(path)
    mctx = Context(f'{path} (map of {ctx.source} {where})', path.parent, ctx.budget)
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
    if image.suffix.lower() in ('.pgm', '.pnm'):
        grey = _read_pgm(image)
    else:
        pixels = read_image(image)
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
    return v @ rotation_rpy(0.0, 0.0, origin[2]).T + [origin[0], origin[1], 0.0], t
