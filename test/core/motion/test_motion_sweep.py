"""base_sim's collision swept over the whole step: thin posts at every lateral offset."""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.motion.base import BaseSim
from ubot_lidar_sim.core.motion.config import BaseSimConfig, footprint_outline
from ubot_lidar_sim.core.motion.sweep import TriangleSweep
from ubot_lidar_sim.core.world.world import World

POST_X = 3.0
OFFSETS = np.round(np.linspace(-0.35, 0.35, 141), 6)      # 5 mm apart, across the footprint
DT = 0.02


def _post_world(size_m, y):
    """Return a plane and one square post of side size_m, 1 m high, at (POST_X, y)."""
    return World.from_dict({'frame': 'map', 'objects': [
        {'name': 'ground', 'type': 'plane', 'size_m': [20, 20], 'material': 'grass'},
        {'name': 'post', 'type': 'box', 'size_m': [size_m, size_m, 1.0],
         'pose': {'xyz': [POST_X, y, 0.5]}, 'material': 'metal_bin'}]})


def _front_x(poly, y_lo, y_hi):
    """Return the largest x of the convex polygon (P, 2) over the band y_lo <= y <= y_hi."""
    a, b = poly, np.roll(poly, -1, axis=0)
    ys = np.r_[y_lo, y_hi, poly[(poly[:, 1] >= y_lo) & (poly[:, 1] <= y_hi), 1]]
    best = -np.inf
    for y in ys:            # a few heights: the edges crossing each, as arrays
        cross = (np.minimum(a[:, 1], b[:, 1]) <= y) & (np.maximum(a[:, 1], b[:, 1]) >= y)
        dy = b[:, 1] - a[:, 1]
        with np.errstate(divide='ignore', invalid='ignore'):
            x = np.where(np.abs(dy) > 0, a[:, 0] + (y - a[:, 1]) * (b[:, 0] - a[:, 0]) / dy,
                         np.maximum(a[:, 0], b[:, 0]))
        if cross.any():
            best = max(best, float(x[cross].max()))
    return best


@pytest.mark.parametrize('size_m', [0.01, 0.005], ids=['1cm', '5mm'])
def test_a_0_3_m_base_at_3_m_s_stops_before_a_thin_post_at_every_lateral_offset(size_m):
    cfg = BaseSimConfig(footprint_radius_m=0.3, max_linear_m_s=3.0, max_linear_accel_m_s2=1000.0,
                        contact_margin_m=0.02, follow_ground=False)
    poly = footprint_outline(cfg)
    reach_y = float(np.abs(poly[:, 1]).max())
    half = size_m / 2.0
    start = POST_X - half - float(poly[:, 0].max()) - 0.5       # 0.5 m before touching
    world = _post_world(size_m, 0.0)
    for y in OFFSETS:               # the post at y in the base's frame: the base at -y
        base = BaseSim(BaseSimConfig(**{**cfg.__dict__, 'initial_pose': (start, -y, 0.0)}),
                       world)
        for k in range(16):         # 0.32 s at 3 m/s: 0.93 m, past the post if not stopped
            base.command((3.0, 0.0, 0.0), (k + 1) * DT)
            base.step((k + 1) * DT, DT)
        x = base.pose[0]
        if abs(y) - half < reach_y:     # the footprint's band holds part of the post
            assert base.counts['contacts'] == 1, f'no contact at offset {y} m'
            front = x + _front_x(poly, y - half, y + half)
            # Stopped before the post, by the 2 cm margin less one step's rounding (1e-9 m).
            assert front <= POST_X - half - 0.02 + 1e-9, f'offset {y} m: front {front}'
        else:
            assert base.counts['contacts'] == 0 and x > POST_X, f'offset {y} m: stopped'


def test_the_sweep_finds_the_first_contact_of_a_square_by_hand():
    # A unit square moving +x by 2 m, 0.5 m from the post's near face: t = 0.25.
    world = _post_world(0.01, 0.2)
    sweep = TriangleSweep(world, ('ground',))
    square = np.array([[0.5, -0.5], [0.5, 0.5], [-0.5, 0.5], [-0.5, -0.5]])
    shifted = square + [POST_X - 0.005 - 1.0, 0.0]
    t = sweep.first_contact(shifted, (2.0, 0.0), 0.05, 0.5)
    # bound: float64 vertices and corners <= 3.5 m: a few roundings of 4.4e-16 m in the 2D
    # crosses, over |d| = 2 m: t within ~1e-15
    assert t == pytest.approx(0.25, abs=1e-12)
    # Above the slab (a post from z 0 to 1 m against a slab from 1.1 m up): no contact.
    assert sweep.first_contact(shifted, (2.0, 0.0), 1.1, 1.5) == math.inf
    # At rest with the post inside the square: overlaps, though no edge crosses it.
    assert sweep.overlaps(square + [POST_X, 0.2], 0.05, 0.5)
    assert not sweep.overlaps(square, 0.05, 0.5)
