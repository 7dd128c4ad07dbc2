"""SDF elements: population, experimental:params, cone, joint frames, RGB heightmaps; by hand."""

import math
import xml.etree.ElementTree as ET

import numpy as np
import open3d as o3d
import pytest
from sdf_helpers import box_model, down_range, load, world_sdf, write
from tolerances import f32_hit_bound_m

from ubot_lidar_sim.core.world.sdf.population import clone_positions

# bound: boxes, heightmap grids and a cone met on one of its edges are exact triangles;
# float32 hit rounding only
MM = f32_hit_bound_m(100.0, 1.0)
CAN = box_model('can', '7 7 7 0 0 0')       # its own pose: replaced by each clone's


def _population(body):
    return f'<population name="p">{body}{CAN}</population>'


def test_grid_population_of_ten_boxes_is_classics_exact_layout(tmp_path):
    # Population::ParseSdf centres a 2 x 5 grid of step 2 on the pose: x -4..4, y -1, 1
    body = ('<pose>0 0 0 0 0 0</pose><distribution><type>grid</type><rows>2</rows>'
            '<cols>5</cols><step>2 2 0</step></distribution>')
    write(tmp_path, {'w.world': world_sdf(_population(body))})
    world = load(tmp_path / 'w.world')
    assert [o.name for o in world.objects] == [f'can_clone_{i}::l::v' for i in range(10)]
    for x in (-4, -2, 0, 2, 4):
        for y in (-1, 1):       # each clone at z 0 (no rotation): its top at 0.5 m
            assert down_range(world, x, y) == pytest.approx(9.5, abs=MM)
    assert math.isnan(down_range(world, 1, 0)) and math.isnan(down_range(world, 0, 2))


def test_linear_x_population_places_the_ith_at_size_i_over_n(tmp_path):
    # box region 10 x 2 x 2 centred on (20, 0, 1): corner (15, -1, 0); clone i at x 15 + i,
    # y and z at half the size: (15 + i, 0, 1), its top at 1.5 m
    body = ('<pose>20 0 1 0 0 0</pose><model_count>10</model_count><box><size>10 2 2</size>'
            '</box><distribution><type>linear-x</type></distribution>')
    write(tmp_path, {'w.world': world_sdf(_population(body))})
    world = load(tmp_path / 'w.world')
    assert len(world.objects) == 10
    for i in range(10):
        assert down_range(world, 15 + i, 0) == pytest.approx(8.5, abs=MM)
    assert math.isnan(down_range(world, 14, 0))


@pytest.mark.parametrize('region, kind', [('box', 'random'), ('cylinder', 'random'),
                                          ('box', 'uniform'), ('cylinder', 'uniform')])
def test_random_and_uniform_populations_stay_in_their_region_and_repeat(region, kind):
    shape = ('<box><size>4 6 1</size></box>' if region == 'box'
             else '<cylinder><radius>2</radius><length>1</length></cylinder>')
    el = ET.fromstring(f'<population><pose>10 20 0 0 0 0</pose><model_count>10</model_count>'
                       f'{shape}<distribution><type>{kind}</type></distribution>{CAN}'
                       '</population>')
    _, p = clone_positions(el, 0, 'w')
    _, again = clone_positions(el, 0, 'w')
    assert p.shape == (10, 3) and np.array_equal(p, again)
    d = p - [10, 20, 0]
    if region == 'box':     # centred on the pose, as ParseSdf moves the origin
        assert np.all(np.abs(d) <= [2, 3, 0.5])
    else:                   # the cylinder's base centre at the pose
        assert np.all(np.hypot(d[:, 0], d[:, 1]) <= 2) and np.all((d[:, 2] >= 0) & (d[:, 2] <= 1))
    assert len(np.unique(np.round(p, 6), axis=0)) == 10


TWO_VISUALS = ('<sdf version="1.9"><model name="depot"><link name="main">'
               '<visual name="floor"><geometry><box><size>1 1 1</size></box></geometry></visual>'
               '<visual name="ceiling"><pose>3 0 0 0 0 0</pose><geometry><box><size>1 1 1</size>'
               '</box></geometry></visual></link></model></sdf>')


def test_experimental_params_remove_modify_and_add_as_sdformat(tmp_path):
    params = ('<experimental:params>'
              '<visual element_id="main::ceiling" action="remove"/>'
              '<visual element_id="main::floor" action="modify"><geometry><box><size>1 1 3'
              '</size></box></geometry></visual>'
              '<visual element_id="main" action="add" name="added"><pose>0 5 0 0 0 0</pose>'
              '<geometry><box><size>1 1 1</size></box></geometry></visual>'
              '<visual element_id="main::nowhere" action="remove"/>'
              '</experimental:params>')
    write(tmp_path, {'depot/model.sdf': TWO_VISUALS,
                     'w.world': world_sdf('<include><uri>depot</uri><pose>0 0 0 0 0 0</pose>'
                                          f'{params}</include><include><uri>depot</uri>'
                                          '<name>plain</name><pose>0 20 0 0 0 0</pose>'
                                          '</include>')})
    world = load(tmp_path / 'w.world')
    assert [o.name for o in world.objects] == ['depot::main::floor', 'depot::main::added',
                                               'plain::main::floor', 'plain::main::ceiling']
    assert math.isnan(down_range(world, 3, 0))                      # removed
    assert down_range(world, 0, 0) == pytest.approx(8.5, abs=MM)    # 3 m tall: top at 1.5
    assert down_range(world, 0, 5) == pytest.approx(9.5, abs=MM)    # added
    # the other include of the same file keeps the model as written
    assert down_range(world, 0, 20) == pytest.approx(9.5, abs=MM)
    assert down_range(world, 3, 20) == pytest.approx(9.5, abs=MM)


def test_cone_has_its_base_at_minus_half_length_and_tip_at_plus(tmp_path):
    # radius 1, length 2, centred at z 1: base at z 0, tip at z 2; at r 0.5 the side is at 1
    write(tmp_path, {'w.world': world_sdf(
        '<model name="c"><pose>0 0 1 0 0 0</pose><link name="l"><visual name="v"><geometry>'
        '<cone><radius>1</radius><length>2</length></cone></geometry></visual></link></model>')})
    world = load(tmp_path / 'w.world')
    assert down_range(world, 0, 0) == pytest.approx(8.0, abs=MM)
    assert down_range(world, 0.5, 0) == pytest.approx(9.0, abs=MM)     # on the edge to phi 0
    assert math.isnan(down_range(world, 1.01, 0))


def test_joint_is_a_frame_posed_in_its_child_link(tmp_path):
    # joint j: (0, 0, 1) in link 'child' at (5, 0, 0): the frame (5, 0, 1); a link relative to
    # it holds a 1 m box whose top is then at 1.5 m
    model = ('<model name="m"><link name="base"/><link name="child"><pose>5 0 0 0 0 0</pose>'
             '</link><joint name="j" type="fixed"><parent>base</parent><child>child</child>'
             '<pose>0 0 1 0 0 0</pose></joint><link name="marker"><pose relative_to="j">'
             '0 0 0 0 0 0</pose><visual name="v"><geometry><box><size>1 1 1</size></box>'
             '</geometry></visual></link></model>')
    write(tmp_path, {'w.world': world_sdf(model)})
    assert down_range(load(tmp_path / 'w.world'), 5, 0) == pytest.approx(8.5, abs=MM)


@pytest.mark.parametrize('channels', [3, 4])
def test_rgb_and_rgba_heightmaps_read_their_first_channel(tmp_path, channels):
    pixels = np.zeros((4, 4, channels), np.uint8)
    pixels[..., 0] = 50
    pixels[:2, :2, 0] = 100     # the image's top-left cell: x -5 to -1.7, y 1.7 to 5
    pixels[..., 1:] = 255       # other channels brighter: read, they would change the scale
    assert o3d.io.write_image(str(tmp_path / 'h.png'), o3d.geometry.Image(pixels))
    write(tmp_path, {'w.world': world_sdf(
        '<model name="h"><link name="l"><visual name="v"><geometry><heightmap><uri>h.png</uri>'
        '<size>10 10 2</size><pos>0 0 0</pos></heightmap></geometry></visual></link></model>')})
    world = load(tmp_path / 'w.world')
    assert down_range(world, -3.3, 3.3) == pytest.approx(8.0, abs=MM)    # 100 -> 2 m
    assert down_range(world, 3.3, -3.3) == pytest.approx(9.0, abs=MM)    # 50 -> 1 m
