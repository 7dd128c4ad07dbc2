"""
Tinted glass, polished metal and water: their optics are properties of the material.

Hand model (docs/physics.md, "Glass and mirrors"; config/materials.yaml). Fresnel's one-face
reflectances at incidence theta, n the material's refractive index, cos t from Snell:
R_s = ((cos i - n cos t) / (cos i + n cos t))^2, R_p = ((n cos i - cos t) / (n cos i + cos t))^2.

- tinted_glass (n 1.5, t0 0.40): a pane; tau = t0 / F(0) = 0.4333, F the two faces' mean of
  (1 - R) / (1 + R); t(theta) = F(theta) tau^(1 / cos t): 0.4000 at 0 deg, 0.3046 at 60 deg. It
  reflects the mean over s and p of R + (1 - R)^2 R T^2 / (1 - R^2 T^2), T = tau^(1 / cos t):
  0.0469 at 0 deg (the table's 0.047), 0.0971 at 60 deg, scaled to 0.047 at 0: 0.0972.
- polished_metal (a metal, n 0): 0.75 at every incidence, Bennett & Porteus's 0.89 exp(-(4 pi
  0.03 / 0.905)^2) = 0.748 of polished aluminium; no transmission.
- water (n 1.33): one face, (R_s + R_p) / 2 = 0.02006 at 0 deg (the table's 0.020), 0.05913 at
  60 deg (R_s 0.1139, R_p 0.0044), 0.3469 at 80 deg; scaled to 0.020 at 0: 0.05895, 0.3459. What
  enters is absorbed (no transmission).
"""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.labels import GHOST_CLASS
from ubot_lidar_sim.core.material_ids import MATERIAL_NAMES
from ubot_lidar_sim.core.physics import fresnel, radiometry
from ubot_lidar_sim.core.physics.return_selection import FLAG_GHOST
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.world.materials import material_index, MaterialTable
from ubot_lidar_sim.core.world.world import World

CFG = {'channels': 1, 'vertical_fov_up_deg': 0.0, 'vertical_fov_down_deg': 0.0,
       'horizontal_samples': 1, 'horizontal_fov_deg': 0.01, 'sub_rays': 1,
       'noise_enabled': False, 'motion_distortion': False, 'return_mode': 'dual_first_last',
       'calibration_elevation_std_deg': 0.0, 'calibration_azimuth_std_deg': 0.0,
       'range_walk_m': 0.0}
RHO_WALL = 0.3                     # 'other'


def faces_by_hand(theta_deg, n):
    """Return (R_s, R_p, cos t) of one face of index n at theta_deg."""
    ci = math.cos(math.radians(theta_deg))
    ct = math.sqrt(1.0 - (1.0 - ci * ci) / n ** 2)
    return ((ci - n * ct) / (ci + n * ct)) ** 2, ((n * ci - ct) / (n * ci + ct)) ** 2, ct


def pane_by_hand(theta_deg, t0, n=1.5):
    """Return (t, R) of a pane passing t0 at normal incidence, at theta_deg (unscaled)."""
    def parts(theta):
        rs, rp, ct = faces_by_hand(theta, n)
        return 0.5 * ((1 - rs) / (1 + rs) + (1 - rp) / (1 + rp)), rs, rp, ct
    tau = t0 / parts(0.0)[0]
    f, rs, rp, ct = parts(theta_deg)
    big_t = tau ** (1.0 / ct)
    refl = 0.5 * sum(r + (1 - r) ** 2 * r * big_t ** 2 / (1 - r * r * big_t ** 2)
                     for r in (rs, rp))
    return f * big_t, refl


def water_by_hand(theta_deg, n=1.33):
    """Return the unpolarised one-face reflectance (R_s + R_p) / 2 of water at theta_deg."""
    rs, rp, _ = faces_by_hand(theta_deg, n)
    return 0.5 * (rs + rp)


def test_the_hand_numbers_of_the_docstring():
    # bound: the docstring's four decimals
    assert pane_by_hand(0.0, 0.40) == pytest.approx((0.4000, 0.0469), abs=1e-4)
    assert pane_by_hand(60.0, 0.40) == pytest.approx((0.3046, 0.0971), abs=1e-4)
    assert water_by_hand(0.0) == pytest.approx(0.02006, abs=1e-5)
    # bound: the docstring's five decimals (water) and four (faces, metal at 5e-4)
    assert water_by_hand(60.0) == pytest.approx(0.05913, abs=1e-5)
    assert faces_by_hand(60.0, 1.33)[:2] == pytest.approx((0.1139, 0.0044), abs=1e-4)
    assert 0.89 * math.exp(-(4 * math.pi * 0.03 / 0.905) ** 2) == pytest.approx(0.748, abs=5e-4)


@pytest.mark.parametrize('theta_deg', [0.0, 60.0])
def test_each_new_material_reflects_and_passes_its_hand_fresnel_fraction(theta_deg):
    t = MaterialTable.load()
    cos = np.array([math.cos(math.radians(theta_deg))] * 3)
    m = np.array([material_index(x) for x in ('tinted_glass', 'polished_metal', 'water')])
    share = fresnel.specular_share(t, m, cos)
    log_gain = fresnel.pane_log_gain(t, m, cos)
    t_hand, r_hand = pane_by_hand(theta_deg, 0.40)
    # Each scaled to the table's value at normal incidence (0.047, 0.020).
    # bound: float64 Fresnel sums of the same formulas, a few ulp; 1e-12
    assert share[0] == pytest.approx(0.047 * r_hand / pane_by_hand(0.0, 0.40)[1], rel=1e-12)
    assert 0.40 * math.exp(log_gain[0]) == pytest.approx(t_hand, rel=1e-12)
    assert share[1] == 0.75 and log_gain[1] == 0.0 and t.transmission[m[1]] == 0.0
    # bound: as above, a few ulp of the same Fresnel sums; 1e-12
    assert share[2] == pytest.approx(0.020 * water_by_hand(theta_deg) / water_by_hand(0.0),
                                     rel=1e-12)
    assert log_gain[2] == 0.0 and t.transmission[m[2]] == 0.0


def test_the_table_values_at_normal_incidence_are_the_hand_formulas_rounded():
    t = MaterialTable.load()
    # bound: the table's three decimals (half a unit of the last, 5e-4)
    assert t.specular_reflectance[material_index('glass')] == pytest.approx(
        pane_by_hand(0.0, 0.83)[1], abs=5e-4)
    assert t.specular_reflectance[material_index('tinted_glass')] == pytest.approx(
        pane_by_hand(0.0, 0.40)[1], abs=5e-4)
    # bound: the table's three decimals, as above
    assert t.specular_reflectance[material_index('water')] == pytest.approx(
        water_by_hand(0.0, 1.328), abs=5e-4)


def test_what_a_material_does_to_the_beam_is_its_property_not_its_index():
    t = MaterialTable.load()
    panes = {MATERIAL_NAMES[i] for i in np.flatnonzero(t.panes)}
    folds = {MATERIAL_NAMES[i] for i in np.flatnonzero(t.folds)}
    assert panes == {'glass', 'tinted_glass'}
    assert folds == {'glass', 'tinted_glass', 'mirror', 'polished_metal', 'water'}


def _beam(world, materials, pose, **cfg):
    sim = LidarSimulator(LidarConfig(**{**CFG, **cfg}), world, materials)
    return sim, sim.scan(BodyTwist(pose), 0.0, None).points


@pytest.mark.parametrize('theta_deg', [0.0, 60.0])
def test_a_tinted_pane_passes_the_wall_behind_at_its_hand_transmission_squared(theta_deg):
    materials = MaterialTable.load(None)
    world = World.from_dict({'frame': 'map', 'objects': [
        {'name': 'pane', 'type': 'box', 'size_m': [0.01, 4, 4],
         'pose': {'xyz': [5, 0, 0], 'rpy_deg': [0, 0, theta_deg]}, 'material': 'tinted_glass'},
        {'name': 'wall', 'type': 'box', 'size_m': [0.02, 40, 40], 'pose': {'xyz': [10, 0, 0]},
         'material': 'other'}]}, materials=materials)
    _, pts = _beam(world, materials, np.eye(4))
    wall = pts[(pts['material'] == 0) & (pts['class_id'] != GHOST_CLASS)]
    pane = pts[pts['material'] == material_index('tinted_glass')]
    # bound: float32 reflectivity (1e-6) and the float32 cos of the pane hit (test_glass.py)
    assert wall['reflectivity'] == pytest.approx(
        [RHO_WALL * pane_by_hand(theta_deg, 0.40)[0] ** 2], rel=1e-5)
    # Its own glint only at normal incidence (the 0.5 deg lobe of s = 100).
    assert pane.size == (1 if theta_deg == 0.0 else 0)
    if pane.size:
        # bound: float32 reflectivity, 1e-5 relative
        assert pane['reflectivity'][0] == pytest.approx(100.0, rel=1e-5)
    # opaque: the pane is a wall; the geometric model reads it as one.
    _, opaque = _beam(world, materials, np.eye(4), glass='opaque')
    assert np.all(opaque['material'] == material_index('tinted_glass'))
    _, geo = _beam(world, materials, np.eye(4), model='geometric')
    # bound: float32 range near 10 m, ten ulp (1e-5 m)
    assert geo.size == 1 and geo['range'][0] == pytest.approx(9.99, abs=1e-5)


def _pond():
    materials = MaterialTable.load(None)
    return World.from_dict({'frame': 'map', 'objects': [
        {'name': 'pond', 'type': 'box', 'size_m': [40, 40, 0.2], 'pose': {'xyz': [0, 0, -0.1]},
         'material': 'water'},
        {'name': 'wall', 'type': 'box', 'size_m': [0.02, 40, 10], 'pose': {'xyz': [10, 0, 0]},
         'material': 'other'}]}, materials=materials), materials


def test_water_under_a_downward_beam_returns_its_specular_peak_and_no_ghost():
    world, materials = _pond()
    # The sensor 1 m above the water, its beam (+x) turned straight down (pitch 90 deg).
    _, pts = _beam(world, materials, pose_matrix_deg([0, 0, 1.0], [0, 90, 0]))
    # rho_bs = diffuse 0.02 + specular 1.7 exp(0); the mirror ray goes back up to nothing.
    # bound: float32 range and reflectivity, 1e-5
    assert pts.size == 1
    assert pts['range'][0] == pytest.approx(1.0, abs=1e-5)
    assert pts['reflectivity'][0] == pytest.approx(0.02 + 1.7, rel=1e-5)
    assert not pts['return_flags'][0] & FLAG_GHOST


@pytest.mark.parametrize('depression_deg', [10.0, 30.0])
def test_water_at_grazing_incidence_shows_the_wall_as_a_ghost_only_where_its_fresnel_allows(
        depression_deg):
    world, materials = _pond()
    sim, pts = _beam(world, materials, pose_matrix_deg([0, 0, 1.0], [0, depression_deg, 0]))
    theta = 90.0 - depression_deg                       # incidence on the water: 80, 60 deg
    e = math.radians(depression_deg)
    r_water = 1.0 / math.sin(e)                         # 5.759 m, 2 m
    # The water's own return: its diffuse 0.02 cos(theta), the 3.1 deg lobe far off.
    own = pts[pts['material'] == material_index('water')]
    # bound: float32 range and reflectivity, 1e-5
    assert own['range'] == pytest.approx([r_water], abs=1e-5)
    assert own['reflectivity'] == pytest.approx([0.02 * math.cos(math.radians(theta))], rel=1e-5)
    # The mirror ray rises at the depression angle to the wall (face 9.99 m): the ghost lies
    # along the beam at the unfolded 9.99 / cos(e), with R(theta)^2 of the wall's 0.3 cos(e).
    share = 0.020 * water_by_hand(theta) / water_by_hand(0.0)   # 0.3459 at 80, 0.0590 at 60
    rho = RHO_WALL * math.cos(e) * share ** 2
    folded = 9.99 / math.cos(e)
    # Detected when its signal rho S10 / 0.1 (R10 / R)^2 clears the model's threshold.
    detected = rho * float(radiometry.counts_per_reflectance(sim.cfg, folded)) \
        > sim.cfg.detection_threshold_counts
    assert detected == (depression_deg == 10.0)         # 0.0353 at 10 m; 9.0e-4 at 11.5 m
    ghost = pts[pts['class_id'] == GHOST_CLASS]
    assert ghost.size == int(detected)
    if detected:
        # bound: float32 casts of the water (5.8 m) and the wall (4.4 m), 1e-4 m as
        # test_mirror_ghosts.py; float32 reflectivity 1e-5
        assert ghost['range'][0] == pytest.approx(folded, abs=1e-4)
        assert ghost['reflectivity'][0] == pytest.approx(rho, rel=1e-5)
        assert ghost['return_flags'][0] & FLAG_GHOST


@pytest.mark.parametrize('name, material', [
    ('house::TintedGlass_Door::v', 'tinted_glass'), ('car::window_tinted::v', 'tinted_glass'),
    ('kitchen::chrome_tap::v', 'polished_metal'), ('lab::StainlessTable::v', 'polished_metal'),
    ('hall::PolishedSteelPanel::v', 'polished_metal'), ('yard::pond_water::v', 'water'),
    ('yard::steel_rack::v', 'metal'), ('hall::polished_wood_floor::v', 'wood')])
def test_sdf_names_map_onto_the_specular_materials(name, material):
    from xml.etree import ElementTree
    from ubot_lidar_sim.core.world.sdf.materials import choose
    assert choose(name, ElementTree.fromstring('<visual/>'), {}, 'other')[0] == material


def test_an_sdf_transparency_named_tinted_is_tinted_glass():
    from xml.etree import ElementTree
    from ubot_lidar_sim.core.world.sdf.materials import choose
    vis = ElementTree.fromstring('<visual><transparency>0.4</transparency></visual>')
    assert choose('shop::tinted_front::v', vis, {}, 'other')[0] == 'tinted_glass'
    assert choose('shop::front::v', vis, {}, 'other')[0] == 'glass'


def test_a_materials_file_makes_any_material_a_pane_by_its_properties(tmp_path):
    # An acrylic sheet (n 1.49) given to 'plastic': it passes the beam as glass does.
    f = tmp_path / 'acrylic.yaml'
    f.write_text('plastic: {transmission: 0.9, specular_reflectance: 0.08, '
                 'refractive_index: 1.49}\n')
    materials = MaterialTable.load(f)
    assert materials.panes[material_index('plastic')]
    world = World.from_dict({'frame': 'map', 'objects': [
        {'name': 'sheet', 'type': 'box', 'size_m': [0.01, 4, 4], 'pose': {'xyz': [5, 0, 0]},
         'material': 'plastic'},
        {'name': 'wall', 'type': 'box', 'size_m': [0.02, 40, 40], 'pose': {'xyz': [10, 0, 0]},
         'material': 'other'}]}, materials=materials)
    for glass, face_x in (('physical', 9.99), ('opaque', 4.995)):
        _, pts = _beam(world, materials, np.eye(4), model='geometric', glass=glass)
        # bound: float32 range near 10 m, ten ulp (1e-5 m)
        assert pts['range'] == pytest.approx([face_x], abs=1e-5)
