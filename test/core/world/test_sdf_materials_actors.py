"""SDF materials (patterns, Gazebo scripts, default, the report) and scripted SDF actors."""

import pickle

import numpy as np
import pytest
from sdf_helpers import box_model, first_range, load, world_sdf, write
from tolerances import f32_hit_bound_m

from ubot_lidar_sim.core.errors import WorldError
from ubot_lidar_sim.core.raycast.actor_casting import one_instant
from ubot_lidar_sim.core.world.materials import material_index
from ubot_lidar_sim.core.world.world import World

# bound: 1 mm for a tessellated surface met off its exact shape, plus float32 hit rounding
MM = 1e-3 + f32_hit_bound_m(100.0, 1.0)


def _scripted(name, pose, script):
    return box_model(name, pose).replace(
        '</geometry></visual>', '</geometry><material><script><name>' + script
        + '</name></script></material></visual>')


def test_material_comes_from_pattern_then_gazebo_script_then_default(tmp_path):
    body = (box_model('Shelf_01', '0 0 0 0 0 0') + _scripted('grass_patch', '3 0 0 0 0 0',
                                                             'Gazebo/Grass')
            + _scripted('pallet', '6 0 0 0 0 0', 'Gazebo/Wood')
            + _scripted('thing', '9 0 0 0 0 0', 'Gazebo/Purple'))
    write(tmp_path, {'w.world': world_sdf(body),
                     'w.materials.yaml': '"*Shelf*": metal_bin\n"pallet": concrete\n'})
    world = load(tmp_path / 'w.world')
    assert world.sdf_report == [
        ('Shelf_01::l::v', 'metal_bin', "pattern '*Shelf*'"),
        ('grass_patch::l::v', 'grass', "Gazebo material 'Gazebo/Grass'"),
        ('pallet::l::v', 'concrete', "pattern 'pallet'"),      # the pattern wins over the script
        ('thing::l::v', 'other', "default (Gazebo material 'Gazebo/Purple' unmapped)")]
    assert [o.material for o in world.objects] == [material_index(m) for m in
                                                   ('metal_bin', 'grass', 'concrete', 'other')]
    assert tmp_path / 'w.materials.yaml' in world.files


def test_sidecar_with_an_unknown_material_is_refused(tmp_path):
    write(tmp_path, {'w.world': world_sdf(box_model('a', '0 0 0 0 0 0')),
                     'w.materials.yaml': '"*": unobtainium\n'})
    with pytest.raises(WorldError,
                       match=r"w\.materials\.yaml\.\*: unknown material 'unobtainium'"):
        load(tmp_path / 'w.world')


ACTOR = """<actor name="walker"><pose>0 0 0 0 0 0</pose><skin><filename>walk.dae</filename></skin>
<script><loop>true</loop><delay_start>0</delay_start><trajectory id="0" type="walking">
<waypoint><time>0</time><pose>10 -5 1 0 0 1.5707963</pose></waypoint>
<waypoint><time>10</time><pose>10 5 1 0 0 1.5707963</pose></waypoint>
</trajectory></script></actor>"""


def test_sdf_actor_walks_its_scripted_trajectory(tmp_path):
    write(tmp_path, {'w.world': world_sdf(ACTOR)})
    world = load(tmp_path / 'w.world')
    assert [a.name for a in world.actors] == ['walker']
    walker = world.actors[0]
    # at t = 5 s half way: (10, 0, 1); the 0.25 m person seen from the origin at hip height
    pose = walker.trajectory(np.array([5.0]))[0]
    # bound: linear interpolation of float64 waypoints; 1e-9 m is rounding only
    np.testing.assert_allclose(pose[:3, 3], [10.0, 0.0, 1.0], atol=1e-9)
    hits = world.cast(np.array([[0.0, 0.0, 1.0]]), np.array([[1.0, 0.0, 0.0]]), 50.0,
                      times=one_instant(1, 5.0))
    assert float(hits.range_m[0]) == pytest.approx(10.0 - 0.25, abs=MM)
    assert int(hits.instance_id[0]) == 1
    # t = 15 s loops to 5 s; t = 0 s it stands at y = -5: the ray at y = 0 misses
    assert np.allclose(walker.trajectory(np.array([15.0]))[0][:3, 3], [10, 0, 1])   # bound: same
    miss = world.cast(np.array([[0.0, 0.0, 1.0]]), np.array([[1.0, 0.0, 0.0]]), 50.0,
                      times=one_instant(1, 0.0))
    assert len(miss.range_m) == 0


def test_actor_without_a_trajectory_is_not_drawn(tmp_path):
    write(tmp_path, {'w.world': world_sdf('<actor name="idle"><skin><filename>x.dae</filename>'
                                          '</skin></actor>' + box_model('b', '5 0 0 0 0 0'))})
    world = load(tmp_path / 'w.world')
    assert world.actors == [] and first_range(world, (0, 0, 0), (1, 0, 0))[1] == 'b::l::v'


def test_sdf_actor_follows_the_yaml_actors_and_pickles(tmp_path):
    write(tmp_path, {'w.world': world_sdf(ACTOR), 'world.yaml':
                     'objects:\n  - {type: sdf, file: w.world}\nactors:\n'
                     '  - {name: cart, type: box, size_m: [1, 1, 1], motion: {frame: cart}}\n'})
    world = pickle.loads(pickle.dumps(World.load(tmp_path / 'world.yaml')))
    assert [a.name for a in world.actors] == ['cart', 'walker']     # instance ids 1, 2
    hits = world.cast(np.array([[0.0, 0.0, 1.0]]), np.array([[1.0, 0.0, 0.0]]), 50.0,
                      times=one_instant(1, 5.0))
    assert int(hits.instance_id[0]) == 2
    assert float(hits.range_m[0]) == pytest.approx(10.0 - 0.25, abs=MM)
