"""
Issue 42: mixed pixels at depth edges (the echo model of docs/physics.md, "Echoes").

A beam straddling two surfaces whose echoes overlap within the pulse (closer than
min_separation_m) returns one range between them, the power-weighted mean; surfaces farther
apart give two echoes and no range between them.
"""

import numpy as np
import pytest

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.poses import BodyTwist
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World

#: A wall whose face is at x = 10 m and, in front of it for y >= 0, a box face at x = 10 - gap.
WORLD = """frame: map
objects:
  - {name: wall, type: box, size_m: [0.2, 40, 40], pose: {xyz: [10.1, 0, 0]}, material: other}
  - {name: step, type: box, size_m: [0.2, 20, 40], pose: {xyz: [%.3f, 10, 0]}, material: other}
"""
#: One ring at elevation 0, beams every 0.01 deg over +/-1 deg (a 3 mrad beam spans ~17 of them
#: at 10 m), the whole footprint traced, no noise.
CFG = {'channels': 1, 'vertical_fov_up_deg': 0.0, 'vertical_fov_down_deg': 0.0,
       'horizontal_samples': 201, 'horizontal_fov_deg': 2.0, 'sub_rays': 7,
       'footprint': 'exhaustive', 'noise_enabled': False, 'motion_distortion': False,
       'return_mode': 'dual_strongest_last', 'imperfections': False}


def _ranges(tmp_path, gap_m):
    path = tmp_path / f'w{gap_m:g}.yaml'
    path.write_text(WORLD % (10.0 - gap_m + 0.1))
    (tmp_path / 'm.yaml').write_text('other: {reflectivity: 0.5}\n')
    materials = MaterialTable.load(str(tmp_path / 'm.yaml'))
    world = World.load(str(path), materials)
    res = LidarSimulator(LidarConfig(**CFG), world, materials).scan(
        BodyTwist(np.eye(4)), 0.0, None)
    return res.points['range'].astype(np.float64), res.beam


@pytest.mark.parametrize('gap_m', [0.3, 0.5])
def test_a_beam_across_an_edge_closer_than_the_pulse_reads_a_range_between_the_surfaces(
        tmp_path, gap_m):
    r, beam = _ranges(tmp_path, gap_m)
    near, far = 10.0 - gap_m, 10.0
    # Far from the edge each beam sees one surface (within the 1 / cos of +/-1 deg, 1.5 mm).
    # bound: 1 / cos(1 deg) - 1 = 1.5e-4 of 10 m, plus float32 rounding
    on_surface = (np.abs(r - near) < 0.003) | (np.abs(r - far) < 0.003)
    mixed = ~on_surface
    assert mixed.sum() >= 3, r
    # bound: the mixed ranges lie strictly between the two surfaces (1.5 mm cosine margin)
    assert np.all((r[mixed] > near + 0.003) & (r[mixed] < far - 0.003)), r[mixed]
    # One point per beam: the echoes merged.
    assert np.unique(beam).size == beam.size


def test_surfaces_farther_apart_than_the_pulse_give_two_echoes_and_no_mixed_range(tmp_path):
    r, beam = _ranges(tmp_path, 1.0)
    # bound: as above
    on_surface = (np.abs(r - 9.0) < 0.003) | (np.abs(r - 10.0) < 0.003)
    assert np.all(on_surface), r[~on_surface]
    # The beams across the edge report both surfaces (dual return).
    assert beam.size > np.unique(beam).size
