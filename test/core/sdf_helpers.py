"""Helpers of the SDF world tests: write files, wrap models in a world, first-hit ranges."""

import numpy as np

from ubot_lidar_sim.core.world.world import World


def write(tmp_path, files):
    """Write {relative name: text or bytes} under tmp_path; returns tmp_path."""
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return tmp_path


def world_sdf(body, version='1.9'):
    """Return an SDF world file holding body."""
    return f'<?xml version="1.0"?>\n<sdf version="{version}"><world name="w">{body}' \
           '</world></sdf>\n'


def box_model(name, pose, size='1 1 1', extra=''):
    """Return a model of one link with one box visual."""
    return (f'<model name="{name}"><pose>{pose}</pose><link name="l"><visual name="v">'
            f'<geometry><box><size>{size}</size></box></geometry></visual></link>{extra}'
            '</model>')


def first_range(world, origin, direction, max_range_m=100.0):
    """Range (m) of the first hit of one ray (nan if none) and the object's name."""
    hits = world.cast(np.asarray([origin], float), np.asarray([direction], float), max_range_m)
    if len(hits.range_m) == 0:
        return float('nan'), None
    return float(hits.range_m[0]), world.objects[int(hits.obj[0])].name


def down_range(world, x, y, z=10.0):
    """Range of a vertical ray down from (x, y, z)."""
    return first_range(world, (x, y, z), (0.0, 0.0, -1.0))[0]


def load(path, **kw):
    """World.load of an SDF path."""
    return World.load(path, **kw)
