"""
Built-in worlds generated in code, as world-file mappings (docs/worlds.md) for World.from_dict.

'flat': a 200 m x 200 m grass plane at z = 0. 'demo': a 64 m x 64 m farm yard centred on the origin
with every material (docs/worlds.md), laid out from a fixed numpy seed. The ring 9-15 m from the
origin holds only ground (a mud patch, a puddle) so a robot can drive a loop of radius ~12 m.
Ground patches are planes a few millimetres above the grass so the nearest patch wins.
"""

from collections.abc import Sequence
from typing import Any

import numpy as np

BUILTIN_WORLDS = ('demo', 'flat')
DEMO_SEED = 20240611
PUDDLES = ((0.0, 12.0, 1.0), (-12.0, -2.0, 1.2), (3.0, 4.0, 0.7), (-23.0, -8.0, 0.9))  # x, y, r


def build(name: str) -> dict[str, Any]:
    """Return the world mapping of a built-in world ('demo' or 'flat')."""
    return {'demo': demo, 'flat': flat}[name]()


def flat() -> dict[str, Any]:
    """Return 'flat': a 200 m x 200 m grass plane at z = 0 in frame map."""
    return {'frame': 'map', 'objects': [
        {'name': 'ground', 'type': 'plane', 'size_m': [200.0, 200.0], 'material': 'grass'}]}


def _pose(x: float, y: float, z: float, rpy_deg: Sequence[float] = (0.0, 0.0, 0.0)
          ) -> dict[str, Any]:
    return {'xyz': [float(x), float(y), float(z)], 'rpy_deg': [float(a) for a in rpy_deg]}


def _patch(name: str, material: str, x0: float, x1: float, y0: float, y1: float, z: float
           ) -> dict[str, Any]:
    """Return a ground plane over [x0, x1] x [y0, y1] lifted z metres above the grass."""
    return {'name': name, 'type': 'plane', 'material': material, 'size_m': [x1 - x0, y1 - y0],
            'pose': _pose((x0 + x1) / 2, (y0 + y1) / 2, z)}


def _ground() -> list[dict[str, Any]]:
    return [
        _patch('grass', 'grass', -32, 32, -32, 32, 0.0),
        _patch('yard_gravel', 'gravel', -7, 7, -7, 7, 0.003),
        _patch('parking_asphalt', 'asphalt', -29, -19, -11, 3, 0.004),
        _patch('road_asphalt', 'asphalt', -32, 32, -30, -26, 0.004),
        _patch('field_soil', 'soil', 17, 30, -26, 26, 0.004),
        _patch('apron_concrete', 'concrete', -28, -16, 11, 16, 0.005),
        _patch('mud_track', 'mud', 10.5, 13.5, -5, -2, 0.006),
        _patch('mud_gate', 'mud', 16, 18, -1.5, 1.5, 0.007),
    ] + [{'name': f'puddle_{k}', 'type': 'cylinder', 'material': 'water', 'ground': True,
          'radius_m': r, 'height_m': 0.01, 'pose': _pose(x, y, 0.005)}
         for k, (x, y, r) in enumerate(PUDDLES)]


def _crops(rng: np.random.Generator) -> list[dict[str, Any]]:
    """Crop rows along y on the soil field: corn (north), soybean (middle), potato (south)."""
    out: list[dict[str, Any]] = []
    blocks = [('corn', 'corn_leaf', 10, 25, 0.3, (2.0, 2.4)),
              ('soybean', 'soybean_leaf', -6, 7, 0.45, (0.7, 0.9)),
              ('potato', 'potato_leaf', -25, -9, 0.55, (0.5, 0.65))]
    xs = 17.6 + 0.76 * np.arange(16)
    for crop, material, y0, y1, width, (h0, h1) in blocks:
        heights = rng.uniform(h0, h1, xs.size)
        for k, (x, h) in enumerate(zip(xs, heights)):
            out.append({'name': f'{crop}_row_{k:02d}', 'type': 'box', 'material': material,
                        'size_m': [width, y1 - y0, float(h)],
                        'pose': _pose(x, (y0 + y1) / 2, h / 2)})
    return out


def _trees_and_shrubs(rng: np.random.Generator) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    sites = [(-10, -19), (-2, -20), (6, -19), (13, -18), (-6, 20), (2, 21), (10, 19)]
    for k, site in enumerate(sites):
        x, y = np.array(site) + rng.uniform(-0.5, 0.5, 2)
        trunk_r, trunk_h = rng.uniform(0.18, 0.3), rng.uniform(3.0, 4.0)
        crown_r = rng.uniform(2.0, 2.7)
        # The trunk reaches into the crown, as a real stem does: a foliage ray can still hit it.
        out.append({'name': f'tree_{k}_trunk', 'type': 'cylinder', 'material': 'bark',
                    'radius_m': float(trunk_r), 'height_m': float(trunk_h + crown_r),
                    'pose': _pose(x, y, (trunk_h + crown_r) / 2)})
        out.append({'name': f'tree_{k}_crown', 'type': 'sphere', 'material': 'tree_foliage',
                    'radius_m': float(crown_r), 'pose': _pose(x, y, trunk_h + 0.8 * crown_r)})
    shrubs = [(5, -16), (-14, -13), (-16, 8), (15.5, 15.5), (-3, 2), (1.5, -5), (-17, -20),
              (8, 17)]
    for k, (x, y) in enumerate(shrubs):
        r = float(rng.uniform(0.6, 1.0))
        out.append({'name': f'shrub_{k}', 'type': 'sphere', 'material': 'shrub', 'radius_m': r,
                    'pose': _pose(x, y, 0.6 * r)})
    return out


def _buildings() -> list[dict[str, Any]]:
    wall = {'type': 'box', 'material': 'building'}
    out: list[dict[str, Any]]
    out = [dict(wall, name='barn_wall_s', size_m=[12, 0.3, 5], pose=_pose(-22, 17.15, 2.5)),
           dict(wall, name='barn_wall_n', size_m=[12, 0.3, 5], pose=_pose(-22, 26.85, 2.5)),
           dict(wall, name='barn_wall_w', size_m=[0.3, 9.4, 5], pose=_pose(-27.85, 22, 2.5)),
           dict(wall, name='barn_wall_e', size_m=[0.3, 9.4, 5], pose=_pose(-16.15, 22, 2.5)),
           dict(wall, name='barn_roof', size_m=[12.6, 10.6, 0.3], pose=_pose(-22, 22, 5.15)),
           {'name': 'low_wall', 'type': 'box', 'material': 'concrete', 'size_m': [8, 0.25, 1.0],
            'pose': _pose(-4, -23.5, 0.5)}]
    bins = [(-14.5, 18.0), (-13.5, 19.2), (-12.8, 17.6), (3.0, -3.0)]
    out += [{'name': f'bin_{k}', 'type': 'cylinder', 'material': 'metal_bin', 'radius_m': 0.45,
             'height_m': 1.2, 'pose': _pose(x, y, 0.6)} for k, (x, y) in enumerate(bins)]
    out.append({'name': 'silo', 'type': 'cylinder', 'material': 'metal_bin', 'radius_m': 2.2,
                'height_m': 7.0, 'pose': _pose(-10, 27, 3.5)})
    out += [{'name': f'crate_{k}', 'type': 'box', 'material': 'other', 'size_m': [1, 1, 1],
             'pose': _pose(x, y, z)} for k, (x, y, z) in
            enumerate([(-18, 12.5, 0.5), (-18, 13.6, 0.5), (-17.9, 13.05, 1.5)])]
    return out


def _vehicle(x: float = -24.0, y: float = -4.0) -> list[dict[str, Any]]:
    """Return a parked pickup on the asphalt, nose north: body, cabin and four wheels."""
    car = {'material': 'vehicle'}
    out: list[dict[str, Any]]
    out = [dict(car, name='vehicle_body', type='box', size_m=[1.8, 4.4, 0.9],
                pose=_pose(x, y, 0.8)),
           dict(car, name='vehicle_cabin', type='box', size_m=[1.6, 2.2, 0.7],
                pose=_pose(x, y - 0.3, 1.6))]
    out += [dict(car, name=f'vehicle_wheel_{k}', type='cylinder', radius_m=0.36, height_m=0.26,
                 pose=_pose(x + sx * 0.95, y + sy * 1.4, 0.36, (0, 90, 0)))
            for k, (sx, sy) in enumerate([(-1, 1), (1, 1), (-1, -1), (1, -1)])]
    return out


def demo(seed: int = DEMO_SEED) -> dict[str, Any]:
    """Return the demo farm yard (deterministic for a given seed)."""
    rng = np.random.default_rng(seed)
    objects = _ground() + _crops(rng) + _trees_and_shrubs(rng) + _buildings() + _vehicle()
    return {'frame': 'map', 'objects': objects, 'smoke': []}
