"""
A mirror at 45 deg: the wall it shows is reported behind it, at the folded range, flagged.

Hand model (docs/physics.md, "Glass and mirrors"): a beam along +x meets a mirror turned 45 deg
about z (its front face 5 m - 5 mm x sqrt 2 = 4.99293 m ahead) and goes on along -y to a wall
whose near face is 4 m away: the sensor reports that wall along +x at 4.99293 + 4 = 8.99293 m
with R_s^2 = 0.9^2 of its reflectance 0.3 (0.243), class ghost and FLAG_GHOST. The mirror
itself returns its diffuse 0.02 cos 45 deg = 0.01414 (its specular lobe is 45 deg off).
A polished-metal panel in its place folds the beam the same way with its own reflectance: the
wall at 0.3 x 0.75^2 = 0.16875 (a metal's R does not change with incidence), the panel's diffuse
0.14 cos 45 deg = 0.09899.
"""

import math

import numpy as np
import pytest
from ubot_lidar_sim.core.class_ids import MATERIAL_CLASS

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.labels import GHOST_CLASS
from ubot_lidar_sim.core.physics.return_selection import FLAG_GHOST
from ubot_lidar_sim.core.poses import BodyTwist
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World

CFG = {'channels': 1, 'vertical_fov_up_deg': 0.0, 'vertical_fov_down_deg': 0.0,
       'horizontal_samples': 1, 'horizontal_fov_deg': 0.01, 'sub_rays': 1,
       'noise_enabled': False, 'motion_distortion': False, 'return_mode': 'dual_first_last',
       'calibration_elevation_std_deg': 0.0, 'calibration_azimuth_std_deg': 0.0,
       'range_walk_m': 0.0}
MIRROR_M = 5.0 - 0.005 * math.sqrt(2.0)


def _points(material='mirror', **overrides):
    materials = MaterialTable.load(None)
    world = World.from_dict({'frame': 'map', 'objects': [
        {'name': 'mirror', 'type': 'box', 'size_m': [0.01, 2, 2],
         'pose': {'xyz': [5, 0, 0], 'rpy_deg': [0, 0, 45]}, 'material': material},
        {'name': 'wall', 'type': 'box', 'size_m': [10, 0.02, 4], 'pose': {'xyz': [5, -4.01, 0]},
         'material': 'other'}]}, materials=materials)
    return LidarSimulator(LidarConfig(**{**CFG, **overrides}), world, materials).scan(
        BodyTwist(np.eye(4)), 0.0, None).points


@pytest.mark.parametrize('footprint', [{}, {'sub_rays': 7, 'footprint': 'adaptive'},
                                       {'sub_rays': 7, 'footprint': 'exhaustive'}])
def test_a_mirror_at_45_deg_shows_the_wall_beside_it_at_the_folded_range_flagged_as_ghost(
        footprint):
    pts = _points(**footprint)
    assert pts.size == 2
    mirror, ghost = pts[np.argsort(pts['range'])]
    # bound: float32 ranges of float32 triangle casts (1e-4 m); float32 reflectivity (1e-5)
    assert mirror['range'] == pytest.approx(MIRROR_M, abs=1e-4)
    assert mirror['reflectivity'] == pytest.approx(0.02 * math.cos(math.radians(45)), rel=1e-4)
    assert mirror['class_id'] == MATERIAL_CLASS['mirror']
    assert not mirror['return_flags'] & FLAG_GHOST
    # bound: two float32 casts, f32_hit_bound_m(5 m, cos 45 deg, 6 m lever) 1.5e-5 m on the
    # mirror, (4 m, normal, 7 m lever) 1e-5 m on the wall; a sub-ray 1.5 mrad off axis (half the
    # 3 mrad divergence) folds 9 m / cos, 1e-5 m longer: 3.5e-5 m in all, under 1e-4 m
    assert ghost['range'] == pytest.approx(MIRROR_M + 4.0, abs=1e-4)
    # bound: rho R_s^2 at normal incidence on the wall in a float32 field (6e-8 relative); a
    # sub-ray 1.5 mrad off the normal loses 1 - cos = 1.1e-6: far under 1e-4
    assert ghost['reflectivity'] == pytest.approx(0.3 * 0.9 ** 2, rel=1e-4)
    assert ghost['class_id'] == GHOST_CLASS and ghost['return_flags'] & FLAG_GHOST
    # Along the beam (+x), behind the mirror, where no surface is.
    # bound: x = range cos(az 0) cos(el 0): the folded range's bound above (1e-4 m)
    assert ghost['x'] == pytest.approx(MIRROR_M + 4.0, abs=1e-4) and abs(ghost['y']) < 1e-3


def test_filtering_the_ghost_flag_leaves_no_point_behind_the_mirror():
    pts = _points()
    kept = pts[(pts['return_flags'] & FLAG_GHOST) == 0]
    assert kept.size == 1 and np.all(kept['range'] < 5.0)
    assert not np.any(kept['class_id'] == GHOST_CLASS)


def test_the_geometric_model_has_no_ghosts():
    pts = _points(model='geometric')
    # bound: one float32 cast, f32_hit_bound_m(5 m, cos 45 deg, 6 m lever) 1.5e-5 m < 1e-4 m
    assert pts.size == 1 and pts['range'][0] == pytest.approx(MIRROR_M, abs=1e-4)


def test_a_polished_metal_panel_at_45_deg_folds_the_beam_with_its_own_reflectance():
    pts = _points('polished_metal')
    assert pts.size == 2
    panel, ghost = pts[np.argsort(pts['range'])]
    # bound: as in the mirror's test above: float32 ranges of float32 casts (1e-4 m)
    assert panel['range'] == pytest.approx(MIRROR_M, abs=1e-4)
    # bound: as in the mirror's test above: float32 reflectivities (1e-4 relative)
    assert panel['reflectivity'] == pytest.approx(0.14 * math.cos(math.radians(45)), rel=1e-4)
    assert panel['class_id'] == MATERIAL_CLASS['polished_metal']
    # bound: as above, the folded range of two float32 casts (1e-4 m)
    assert ghost['range'] == pytest.approx(MIRROR_M + 4.0, abs=1e-4)
    # bound: as above, float32 reflectivities (1e-4 relative)
    assert ghost['reflectivity'] == pytest.approx(0.3 * 0.75 ** 2, rel=1e-4)
    assert ghost['class_id'] == GHOST_CLASS and ghost['return_flags'] & FLAG_GHOST
    kept = pts[(pts['return_flags'] & FLAG_GHOST) == 0]
    assert kept.size == 1 and kept['range'][0] < 5.0
