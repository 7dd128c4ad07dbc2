"""
Glass panes: a specular return only near normal incidence, and the targets behind attenuated.

Hand model (docs/physics.md, "Glass and mirrors"; config/materials.yaml glass): a clear pane has
no diffuse term and a specular lobe of peak s = 100 and width w = 0.5 deg, so its own return is
rho = 100 exp(-(theta / 0.5 deg)^2): 100 at 0 deg, 77.9 at 0.25 deg, below 1e-170 from 10 deg
on (no signal). With glass: physical it passes t(theta) each way, so a wall of rho 0.3 behind
it reads 0.3 t(theta)^2; t(0) = 0.83 (6 mm clear float glass at 905 nm) and Fresnel's equations
(n = 1.5, unpolarised) lower it with incidence: t(theta) = F(theta) tau^(1 / cos theta_t), F the
mean over s and p of (1 - R) / (1 + R), tau = 0.83 / F(0) the bulk's internal transmittance
(t_by_hand below: 0.8300, 0.8300, 0.8294, 0.8226, 0.7446 at 0, 0.25, 10, 30, 60 deg). With
glass: opaque the pane stops the beam and nothing behind it is seen.
"""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.config import LaserScanConfig, LidarConfig
from ubot_lidar_sim.core.poses import BodyTwist
from ubot_lidar_sim.core.sensors.laser import LaserScanner
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World

#: One pencil beam along +x, noise and imperfections off; first and last echo reported.
CFG = {'channels': 1, 'vertical_fov_up_deg': 0.0, 'vertical_fov_down_deg': 0.0,
       'horizontal_samples': 1, 'horizontal_fov_deg': 0.01, 'sub_rays': 1,
       'noise_enabled': False, 'motion_distortion': False, 'return_mode': 'dual_first_last',
       'calibration_elevation_std_deg': 0.0, 'calibration_azimuth_std_deg': 0.0,
       'range_walk_m': 0.0}
T_GLASS = 0.83
RHO_WALL = 0.3                     # 'other'
N_GLASS = 1.5


def t_by_hand(theta_deg):
    """Return the pane's t(theta): Fresnel's R_s, R_p at n = 1.5, the bulk over its path."""
    ci = math.cos(math.radians(theta_deg))
    ct = math.sqrt(1.0 - (1.0 - ci * ci) / N_GLASS ** 2)

    def faces(ci, ct):
        rs = ((ci - N_GLASS * ct) / (ci + N_GLASS * ct)) ** 2
        rp = ((N_GLASS * ci - ct) / (N_GLASS * ci + ct)) ** 2
        return 0.5 * ((1 - rs) / (1 + rs) + (1 - rp) / (1 + rp))
    return faces(ci, ct) * (T_GLASS / faces(1.0, 1.0)) ** (1.0 / ct)


def test_the_hand_transmission_falls_from_0_83_at_normal_incidence_to_0_745_at_60_deg():
    # Numbers worked on paper: R_s(60) = 0.1766, R_p(60) = 0.0018, cos theta_t = 0.8165.
    # bound: 0.83 / F(0) x F(0) in float64 (a few ulp); the paper figure 0.7446 to 4 digits
    assert t_by_hand(0.0) == pytest.approx(0.83, abs=1e-12)
    assert t_by_hand(60.0) == pytest.approx(0.7446, abs=1e-4)


def _pane_world(theta_deg, materials):
    """Return a 1 cm pane 5 m ahead turned by theta about z, a wall (face 9.99 m) behind."""
    return World.from_dict({'frame': 'map', 'objects': [
        {'name': 'pane', 'type': 'box', 'size_m': [0.01, 4, 4],
         'pose': {'xyz': [5, 0, 0], 'rpy_deg': [0, 0, theta_deg]}, 'material': 'glass'},
        {'name': 'wall', 'type': 'box', 'size_m': [0.02, 40, 40], 'pose': {'xyz': [10, 0, 0]},
         'material': 'other'}]}, materials=materials)


def _beam(theta_deg, glass):
    materials = MaterialTable.load(None)
    cfg = LidarConfig(**CFG, glass=glass)
    return LidarSimulator(cfg, _pane_world(theta_deg, materials), materials).scan(
        BodyTwist(np.eye(4)), 0.0, None).points


@pytest.mark.parametrize('theta_deg, pane_rho', [
    (0.0, 100.0), (0.25, 100.0 * math.exp(-0.25)), (10.0, None), (30.0, None), (60.0, None)])
def test_a_pane_returns_only_inside_its_specular_cone_and_passes_the_wall_behind_attenuated(
        theta_deg, pane_rho):
    pts = _beam(theta_deg, 'physical')
    wall = pts[pts['material'] == 0]
    pane = pts[pts['material'] == 18]
    assert wall.size == 1
    # bound: float32 reflectivity (relative 1e-6) and the float32 cos of the pane hit
    # (Hits.cos_inc, 2 ulp = 1.2e-7), which moves t by |dt/dcos| 1.2e-7 < 1e-6 relative
    assert wall['reflectivity'][0] == pytest.approx(RHO_WALL * t_by_hand(theta_deg) ** 2,
                                                    rel=1e-5)
    # bound: a float32 range near 10 m has an ulp of 9.5e-7 m; 1e-5 m is ten of them
    assert wall['range'][0] == pytest.approx(9.99, abs=1e-5)
    if pane_rho is None:
        assert pane.size == 0
    else:
        assert pane.size == 1
        # bound: cos(theta) is float32 (Hits.cos_inc): 2 ulp = 1.2e-7 moves theta by 1.2e-7 /
        # sin(theta) (2.7e-5 rad at 0.25 deg) and rho by 2 theta dtheta / w^2, 0.63 %
        tol = 0.0063 if theta_deg else 1e-5
        assert pane['reflectivity'][0] == pytest.approx(pane_rho, rel=tol)
        # The front face 5 m - 5 mm / cos(theta) ahead (bound: float32 range, 1e-5 m).
        assert pane['range'][0] == pytest.approx(
            5.0 - 0.005 / math.cos(math.radians(theta_deg)), abs=1e-5)


@pytest.mark.parametrize('theta_deg', [0.0, 10.0, 30.0, 60.0])
def test_an_opaque_pane_hides_the_wall_and_returns_only_its_own_specular_glint(theta_deg):
    pts = _beam(theta_deg, 'opaque')
    assert np.all(pts['material'] == 18)
    assert pts.size == (1 if theta_deg == 0.0 else 0)


def _door_scan(glass, pane='glass'):
    """Return a geometric 2D scan of a wall 3 m ahead whose 1 m wide door is a pane."""
    materials = MaterialTable.load(None)
    world = World.from_dict({'frame': 'map', 'objects': [
        {'name': 'left', 'type': 'box', 'size_m': [0.2, 3, 2], 'pose': {'xyz': [3.1, 2, 1]},
         'material': 'concrete'},
        {'name': 'right', 'type': 'box', 'size_m': [0.2, 3, 2], 'pose': {'xyz': [3.1, -2, 1]},
         'material': 'concrete'},
        {'name': 'door', 'type': 'box', 'size_m': [0.01, 1, 2], 'pose': {'xyz': [3.005, 0, 1]},
         'material': pane},
        {'name': 'back', 'type': 'box', 'size_m': [0.2, 20, 2], 'pose': {'xyz': [8.1, 0, 1]},
         'material': 'concrete'}]}, materials=materials)
    cfg = LaserScanConfig(fov_deg=60.0, resolution_deg=1.0, glass=glass)
    pose = np.eye(4)
    pose[2, 3] = 1.0
    scan = LaserScanner(cfg, world, materials).scan(BodyTwist(pose), 0.0)
    angle = scan.angle_min + np.arange(scan.ranges.size) * scan.angle_increment
    return angle, scan.ranges.astype(np.float64)


@pytest.mark.parametrize('pane', ['glass', 'tinted_glass'])
def test_a_glass_door_is_a_wall_when_opaque_and_open_to_the_room_behind_when_physical(pane):
    # A costmap marks each reading's end point: the door's cells (x = 3 m, |y| < 0.5 m) are
    # marked with opaque glass and free (the back wall 8 m away marked) with physical glass.
    # A tinted pane is a pane too (MaterialTable.panes): the same for the 2D scanner.
    for glass, door_x in (('opaque', 3.0), ('physical', 8.0)):
        angle, ranges = _door_scan(glass, pane)
        through = np.abs(3.0 * np.tan(angle)) < 0.45            # rays through the door
        assert through.sum() >= 15                              # about -8.5 .. 8.5 deg
        # bound: float32 ranges of float32 triangle casts, 1e-4 m
        np.testing.assert_allclose(ranges[through] * np.cos(angle[through]), door_x, atol=1e-4)
        walls = np.abs(3.0 * np.tan(angle)) > 0.55
        np.testing.assert_allclose(ranges[walls] * np.cos(angle[walls]), 3.0, atol=1e-4)


def test_sdf_transparency_and_glass_or_mirror_names_map_onto_the_pane_materials():
    from xml.etree import ElementTree
    from ubot_lidar_sim.core.world.sdf.materials import choose

    def visual(xml):
        return ElementTree.fromstring(f'<visual>{xml}</visual>')
    assert choose('house::window::v', visual('<transparency>0.6</transparency>'), {},
                  'other')[0] == 'glass'
    assert choose('house::Bathroom_Mirror::v', visual(''), {}, 'other')[0] == 'mirror'
    assert choose('shop::door::v', visual('<material><script><name>Custom/GlassBlue</name>'
                                          '</script></material>'), {}, 'other')[0] == 'glass'
    # Opaque and named by no rule (sdf/name_rules.py): the default; a pattern still wins.
    assert choose('x::thing_7::v', visual('<transparency>0</transparency>'), {},
                  'other')[0] == 'other'
    assert choose('house::window::v', visual('<transparency>0.6</transparency>'),
                  {'window': 'concrete'}, 'other')[0] == 'concrete'


@pytest.mark.parametrize('pane', ['glass', 'tinted_glass'])
def test_the_terrain_sensor_body_ray_passes_a_glass_door_when_physical_and_stops_when_opaque(
        pane):
    from ubot_lidar_sim.core.config import TerrainConfig
    from ubot_lidar_sim.core.poses import pose_matrix_deg
    from ubot_lidar_sim.core.sensors.terrain import TerrainSensor
    world = World.from_dict({'frame': 'map', 'objects': [
        {'name': 'door', 'type': 'box', 'size_m': [0.02, 2, 3], 'pose': {'xyz': [2.01, 0, 1.5]},
         'material': pane},
        {'name': 'wall', 'type': 'box', 'size_m': [0.2, 10, 3], 'pose': {'xyz': [4.1, 0, 1.5]},
         'material': 'concrete'}]}, materials=MaterialTable.load(None))
    pose = pose_matrix_deg([0, 0, 1.0], [0, 0, 0])
    for glass, face_x in (('physical', 4.0), ('opaque', 2.0)):
        res = TerrainSensor(TerrainConfig(glass=glass), world).sample(pose)
        assert res.hit_flg[0] == 1
        # bound: faces of exact float32 vertices (test_terrain.py's FLAT note), 1e-5 m
        np.testing.assert_allclose(res.hit_loc[0], [face_x, 0.0, 1.0], atol=1e-5)
