"""
A sensor inside smoke sees the smoke around it and, attenuated, the targets beyond.

Hand model (docs/physics.md, "Smoke"): inside a cell of effective density d the extinction is
alpha = d x 3.912 / smoke_visibility_m (5 m by default; Kim's q is 0 below 500 m), so a target
beyond the cell's exit X returns exp(-2 alpha X) of its clear-air power, and the smoke's own echo
is the hard-target law of 'other' (rho 0.3, cos 1) at the range R* where rho (R10 / R)^2 O(R)
exp(-2 alpha R) is largest between min_range_m and X.
"""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.labels import SMOKE_CLASS
from ubot_lidar_sim.core.physics import smoke_inside
from ubot_lidar_sim.core.poses import BodyTwist
from ubot_lidar_sim.core.raycast.smoke import smoke_entry
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World

#: A wall whose near face is 9.99 m ahead along +x, and a smoke cell of radius 2 m at the origin.
WORLD = """frame: map
objects:
  - {name: wall, type: box, size_m: [0.02, 40, 40], pose: {xyz: [10, 0, 0]}, material: other}
smoke:
  - {center: [0, 0, 0], radius_m: 2.0, density: 0.5}
"""
#: One pencil beam along +x, noise and imperfections off; first and last echo reported.
CFG = {'channels': 1, 'vertical_fov_up_deg': 0.0, 'vertical_fov_down_deg': 0.0,
       'horizontal_samples': 1, 'horizontal_fov_deg': 0.01, 'sub_rays': 1,
       'noise_enabled': False, 'motion_distortion': False, 'return_mode': 'dual_first_last',
       'calibration_elevation_std_deg': 0.0, 'calibration_azimuth_std_deg': 0.0,
       'range_walk_m': 0.0}
ALPHA = 0.5 * 3.912 / 5.0          # 1/m: density 0.5 on the cell's centre line
RHO = 0.3                          # 'other' in config/materials.yaml


def _points(tmp_path, x_m=0.0, **overrides):
    (tmp_path / 'w.yaml').write_text(WORLD)
    materials = MaterialTable.load(None)
    world = World.load(str(tmp_path / 'w.yaml'), materials)
    pose = np.eye(4)
    pose[0, 3] = x_m
    return LidarSimulator(LidarConfig(**{**CFG, **overrides}), world, materials).scan(
        BodyTwist(pose), 0.0, None).points


def test_a_wall_beyond_the_smoke_around_the_sensor_is_attenuated_by_its_two_way_depth(tmp_path):
    pts = _points(tmp_path)
    wall = pts[pts['class_id'] != SMOKE_CLASS]
    clear = _points(tmp_path, smoke_enabled=False)
    assert wall.size == 1 and clear.size == 1
    # bound: float32 reflectivity fields (relative 1e-6)
    assert wall['reflectivity'][0] / clear['reflectivity'][0] == pytest.approx(
        math.exp(-2.0 * ALPHA * 2.0), rel=1e-5)
    assert wall['range'][0] == pytest.approx(9.99, abs=1e-5)


def test_the_smoke_around_the_sensor_returns_at_its_strongest_range_by_the_hard_target_law(
        tmp_path):
    # Form factor exponent 2: O(R) / R^2 falls everywhere, so the echo is at min_range_m.
    pts = _points(tmp_path)
    smoke = pts[pts['class_id'] == SMOKE_CLASS]
    assert smoke.size == 1
    r_min = LidarConfig(**CFG).min_range_m
    # bound: float32 range and reflectivity (relative 1e-6)
    assert smoke['range'][0] == pytest.approx(r_min, rel=1e-6)
    assert smoke['reflectivity'][0] == pytest.approx(RHO * math.exp(-2.0 * ALPHA * r_min),
                                                     rel=1e-5)


def test_with_a_steep_form_factor_the_smoke_echo_moves_out_to_where_overlap_and_loss_balance(
        tmp_path):
    pts = _points(tmp_path, overlap_range_m=1.0, overlap_exponent=4.0)
    smoke = pts[pts['class_id'] == SMOKE_CLASS]
    r = np.arange(0.1, 2.0, 1e-5)
    ref = r[np.argmax((1.0 - np.exp(-r ** 4)) / r ** 2 * np.exp(-2.0 * ALPHA * r))]
    assert 0.5 < ref < 1.5          # the case is not the interval's end
    # bound: the model's grid of 256 points over at most [0.1, 2] m (0.0075 m)
    assert smoke['range'][0] == pytest.approx(ref, abs=0.0075)
    assert smoke['reflectivity'][0] == pytest.approx(
        RHO * math.exp(-2.0 * ALPHA * smoke['range'][0]), rel=1e-5)


def test_from_outside_the_smoke_still_stops_the_beam_at_its_entry(tmp_path):
    pts = _points(tmp_path, x_m=-5.0)
    assert pts.size == 1 and pts['class_id'][0] == SMOKE_CLASS
    # bound: float32 range; entry 5 - 2 m ahead, rho 0.3 seen in full
    assert pts['range'][0] == pytest.approx(3.0, abs=1e-5)
    assert pts['reflectivity'][0] == pytest.approx(RHO, rel=1e-5)


def test_the_path_in_a_cell_is_its_chord_from_the_origin_and_its_density_the_entry_rule():
    cells, dens = np.array([[0.0, 0.0, 0.0, 2.0]]), np.array([0.8])
    o = np.tile([1.0, 0.0, 0.0], (3, 1))
    d = np.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    eff, exit_m = smoke_inside.smoke_inside(o, d, cells, dens, 1.0, 0.05)
    # Along the centre line d = 0.8 and X = 1 m / 3 m; across at b = 1 m: 0.8 (1 - 1/4), sqrt 3.
    # bound: small integer inputs make oc2, tc, b2 and r2 exact; eff and exit are then 1-3
    # float64 roundings of values <= 3 (< 1e-15), far under 1e-12
    assert eff[:, 0] == pytest.approx([0.8, 0.8, 0.6], abs=1e-12)
    assert exit_m[:, 0] == pytest.approx([1.0, 3.0, math.sqrt(3.0)], abs=1e-12)
    # The cell around the origin does not stop these rays.
    assert np.all(np.isinf(smoke_entry(o, d, cells, dens, 1.0, 0.05, 100.0)))
    # Optical depth at 0.5 m and beyond the exit: alpha min(R, X).
    cfg = LidarConfig()
    alpha = smoke_inside.extinction_per_m(cfg.optics, cfg.atmosphere, eff)
    tau = smoke_inside.optical_depth(alpha, exit_m, np.array([0, 0, 2]), np.array([0.5, 9.0, 9.0]))
    a = 0.8 * 3.912 / 5.0
    # bound: alpha is 0.8 x 3.912 / 5 x (905 / 550)^-0 (pow(x, 0) is exactly 1: Kim's q is 0),
    # tau alpha x min(R, X): each side a few float64 roundings, ~1e-15 relative, under 1e-12
    assert tau == pytest.approx([a * 0.5, a * 1.0, 0.75 * a * math.sqrt(3.0)], rel=1e-12)


def test_a_sensor_outside_every_cell_has_no_smoke_path():
    eff, exit_m = smoke_inside.smoke_inside(np.array([[5.0, 0.0, 0.0]]), np.array([[1.0, 0, 0]]),
                                            np.array([[0.0, 0.0, 0.0, 2.0]]), np.array([0.8]),
                                            1.0, 0.05)
    assert eff.shape == (1, 0) and exit_m.shape == (1, 0)
