"""SDF worlds: every geometry type, nested models and frames, visual vs collision; hand ranges."""

import math

import numpy as np
import open3d as o3d
import pytest
from sdf_helpers import box_model, down_range, first_range, load, world_sdf, write
from tolerances import f32_hit_bound_m

# bound: 1 mm; boxes, planes, grids are exact triangles, spheres and cylinders are moved onto
# their analytic surface, and a ray meeting a capsule or ellipsoid at a tessellation vertex
# (48 around, 24 down: the rays below do) is exact up to float32 vertices (< 0.01 mm at 30 m).
# bound: 1 mm for a tessellated surface met off its exact shape, plus float32 hit rounding
MM = 1e-3 + f32_hit_bound_m(100.0, 1.0)


def _geometry(name, pose, geometry):
    return (f'<model name="{name}"><static>true</static><pose>{pose}</pose><link name="l">'
            f'<visual name="v"><geometry>{geometry}</geometry></visual></link></model>')


def _png(path, pixels):
    assert o3d.io.write_image(str(path), o3d.geometry.Image(pixels))


def test_every_geometry_type_at_its_hand_computed_range(tmp_path):
    models = ''.join([
        _geometry('box', '10 0 1 0 0 0', '<box><size>1 4 2</size></box>'),
        _geometry('sphere', '0 10 1 0 0 0', '<sphere><radius>1</radius></sphere>'),
        _geometry('cylinder', '-10 0 1 0 0 0',
                  '<cylinder><radius>0.5</radius><length>2</length></cylinder>'),
        _geometry('capsule', '0 -10 1 0 0 0',
                  '<capsule><radius>0.5</radius><length>1</length></capsule>'),
        _geometry('ellipsoid', '30 10 1 0 0 0', '<ellipsoid><radii>1 2 3</radii></ellipsoid>'),
        _geometry('plane', '40 0 0 0 0 0',
                  '<plane><normal>0 0 1</normal><size>4 4</size></plane>'),
        _geometry('hills', '0 40 0 0 0 0', '<heightmap><uri>h.png</uri><size>10 10 2</size>'
                  '<pos>0 0 0</pos></heightmap>'),
    ])
    write(tmp_path, {'w.world': world_sdf(models)})
    pixels = np.full((4, 4), 50, np.uint8)
    pixels[:2, :2] = 100           # the image's top-left cell: x -5 to -1.7, y 1.7 to 5
    _png(tmp_path / 'h.png', pixels)
    world = load(tmp_path / 'w.world')
    assert first_range(world, (0, 0, 1), (1, 0, 0)) == pytest.approx((9.5, 'box::l::v'), abs=MM)
    assert first_range(world, (0, 0, 1), (0, 1, 0))[0] == pytest.approx(9.0, abs=MM)
    assert first_range(world, (0, 0, 1), (-1, 0, 0))[0] == pytest.approx(9.5, abs=MM)
    # the capsule's cylinder part at z 0.5-1.5, its caps above and below
    assert first_range(world, (0, 0, 1), (0, -1, 0))[0] == pytest.approx(9.5, abs=MM)
    assert down_range(world, 0, -10) == pytest.approx(10.0 - (1 + 0.5 + 0.5), abs=MM)
    # ellipsoid: y half-axis 2 m from (30, 0, 1); z half-axis 3 m from above
    assert first_range(world, (30, 0, 1), (0, 1, 0))[0] == pytest.approx(8.0, abs=MM)
    assert down_range(world, 30, 10) == pytest.approx(10.0 - 4.0, abs=MM)
    assert down_range(world, 40, 0) == pytest.approx(10.0, abs=MM)
    assert math.isnan(down_range(world, 40, 2.5))         # the plane is 4 m wide
    # the brightest pixel is size z (gz-common: scale z = size z / max elevation): 100 -> 2 m
    assert down_range(world, -3.3, 43.3) == pytest.approx(8.0, abs=MM)
    assert down_range(world, 3.3, 36.7) == pytest.approx(9.0, abs=MM)     # 50 -> 1 m
    assert math.isnan(down_range(world, 0, 45.5))
    ground = {o.name: o.ground for o in world.objects}
    assert ground['plane::l::v'] and ground['hills::l::v'] and not ground['box::l::v']


def test_nested_models_compose_their_poses(tmp_path):
    inner = box_model('inner', '0 2 0 0 0 0')
    outer = (f'<model name="outer"><pose>5 0 0 0 0 {math.pi / 2}</pose>{inner}</model>')
    write(tmp_path, {'w.world': world_sdf(outer)})
    world = load(tmp_path / 'w.world')
    # inner origin: (5, 0, 0) + Rz(90 deg) (0, 2, 0) = (3, 0, 0); box top at z = 0.5
    assert down_range(world, 3, 0) == pytest.approx(9.5, abs=MM)
    assert [o.name for o in world.objects] == ['outer::inner::l::v']


def test_relative_to_places_a_link_and_a_visual_in_another_frame(tmp_path):
    model = ('<model name="m"><pose>10 0 0 0 0 0</pose>'
             '<frame name="f"><pose>0 5 0 0 0 0</pose></frame>'
             '<link name="a"><pose relative_to="f">1 0 0 0 0 0</pose>'
             '<visual name="v"><geometry><box><size>1 1 1</size></box></geometry></visual>'
             '</link>'
             '<link name="b"><visual name="v"><pose relative_to="a">0 0 2 0 0 0</pose>'
             '<geometry><box><size>1 1 1</size></box></geometry></visual></link></model>')
    write(tmp_path, {'w.world': world_sdf(model)})
    world = load(tmp_path / 'w.world')
    # a at (10, 0, 0) + (0, 5, 0) + (1, 0, 0) = (11, 5, 0); b's visual 2 m above a: top 2.5 m
    rng, name = first_range(world, (11, 5, 10), (0, 0, -1))
    assert rng == pytest.approx(7.5, abs=MM) and name == 'm::b::v'


def test_degrees_and_quaternion_poses(tmp_path):
    q = math.sqrt(0.5)
    models = ('<model name="d"><pose degrees="true">0 0 0 0 0 90</pose><link name="l">'
              '<pose>4 0 0 0 0 0</pose><visual name="v"><geometry><box><size>1 1 1</size>'
              '</box></geometry></visual></link></model>'
              f'<model name="q"><pose rotation_format="quat_xyzw">0 0 0 0 0 {q} {q}</pose>'
              '<link name="l"><pose>8 0 0 0 0 0</pose><visual name="v"><geometry><box>'
              '<size>1 1 1</size></box></geometry></visual></link></model>')
    write(tmp_path, {'w.world': world_sdf(models)})
    world = load(tmp_path / 'w.world')
    assert down_range(world, 0, 4) == pytest.approx(9.5, abs=MM)
    assert down_range(world, 0, 8) == pytest.approx(9.5, abs=MM)


def _two_kinds(name, pose, only=None):
    visual = '<visual name="v"><geometry><box><size>2 2 2</size></box></geometry></visual>'
    collision = '<collision name="c"><geometry><box><size>1 1 1</size></box></geometry>' \
                '</collision>'
    body = {'visual': visual, 'collision': collision}.get(only, visual + collision)
    return f'<model name="{name}"><pose>{pose}</pose><link name="l">{body}</link></model>'


@pytest.mark.parametrize('use, top_m', [('visual', 1.0), ('collision', 0.5)])
def test_sdf_geometry_picks_visual_or_collision(tmp_path, use, top_m):
    write(tmp_path, {'w.world': world_sdf(_two_kinds('both', '0 0 0 0 0 0')
                                          + _two_kinds('conly', '10 0 0 0 0 0', 'collision')
                                          + _two_kinds('vonly', '20 0 0 0 0 0', 'visual'))})
    world = load(tmp_path / 'w.world', sdf_geometry=use)
    assert down_range(world, 0, 0) == pytest.approx(10.0 - top_m, abs=MM)
    assert down_range(world, 10, 0) == pytest.approx(9.5, abs=MM)     # only a collision
    assert down_range(world, 20, 0) == pytest.approx(9.0, abs=MM)     # only a visual
