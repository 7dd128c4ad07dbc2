"""
Mesh files (core/world/meshes.py): COLLADA units, axes and transforms as gz-common, glTF.

Also the on-disk cache keyed by contents, and YAML mesh objects of every format.
"""

import numpy as np
import pytest
from sdf_helpers import down_range, load, world_sdf, write
from tolerances import f32_hit_bound_m
import trimesh

from ubot_lidar_sim.core.errors import WorldError
from ubot_lidar_sim.core.world import meshes
from ubot_lidar_sim.core.world.world import World
from ubot_lidar_sim.dataset.inputs import input_files

# bound: 1 mm for a tessellated surface met off its exact shape, plus float32 hit rounding
MM = 1e-3 + f32_hit_bound_m(100.0, 1.0)


def dae(meter=1.0, up_axis='Z_UP', translate='0 0 0', z=1.0, half=1.0):
    """Return a COLLADA square of side 2 half at height z (file units) under a translated node."""
    h = half
    pos = f'{-h} {-h} {z} {h} {-h} {z} {h} {h} {z} {-h} {h} {z}'
    return f"""<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
 <asset><unit name="u" meter="{meter}"/><up_axis>{up_axis}</up_axis></asset>
 <library_geometries><geometry id="g" name="g"><mesh>
  <source id="p"><float_array id="pa" count="12">{pos}</float_array>
   <technique_common><accessor source="#pa" count="4" stride="3">
    <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
   </accessor></technique_common></source>
  <vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
  <triangles count="2"><input semantic="VERTEX" source="#v" offset="0"/><p>0 1 2 0 2 3</p>
  </triangles></mesh></geometry></library_geometries>
 <library_visual_scenes><visual_scene id="s"><node id="n" name="quad">
  <translate>{translate}</translate><instance_geometry url="#g"/></node></visual_scene>
 </library_visual_scenes><scene><instance_visual_scene url="#s"/></scene>
</COLLADA>"""


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv('UBOT_LIDAR_SIM_MESH_CACHE', str(tmp_path / 'cache'))


def _mesh_world(tmp_path, name, scale='1 1 1'):
    return world_sdf(f'<model name="m"><link name="l"><visual name="v"><geometry><mesh>'
                     f'<uri>{name}</uri><scale>{scale}</scale></mesh></geometry></visual>'
                     '</link></model>')


@pytest.mark.parametrize('up_axis', ['Z_UP', 'Y_UP', 'X_UP'])
def test_collada_unit_and_node_transform_scale_the_mesh_up_axis_is_not_applied(tmp_path,
                                                                               up_axis):
    # centimetres: the square at z 100 cm under a node raised 50 cm -> z = 1.5 m, 2 m wide;
    # gz-common's ColladaLoader scales by <unit meter> and does not read <up_axis>
    write(tmp_path, {'m.dae': dae(0.01, up_axis, '0 0 50', z=100.0, half=100.0),
                     'w.world': _mesh_world(tmp_path, 'm.dae')})
    world = load(tmp_path / 'w.world')
    assert down_range(world, 0.9, -0.9) == pytest.approx(8.5, abs=MM)
    assert np.isnan(down_range(world, 1.1, 0))


def test_sdf_mesh_scale_and_submesh(tmp_path):
    write(tmp_path, {'m.dae': dae(1.0, 'Z_UP', '0 0 0', z=1.0),
                     'w.world': _mesh_world(tmp_path, 'm.dae', '2 2 3')})
    world = load(tmp_path / 'w.world')
    assert down_range(world, 1.9, 0) == pytest.approx(7.0, abs=MM)       # z 1 x 3, 4 m wide
    sub = world_sdf('<model name="m"><link name="l"><visual name="v"><geometry><mesh>'
                    '<uri>m.dae</uri><submesh><name>quad</name><center>true</center></submesh>'
                    '</mesh></geometry></visual></link></model>')
    write(tmp_path, {'w2.world': sub})
    assert down_range(load(tmp_path / 'w2.world'), 0, 0) == pytest.approx(10.0, abs=MM)


def test_gltf_and_glb_keep_their_node_transforms(tmp_path):
    box = trimesh.creation.box(extents=[2, 2, 2])
    scene = trimesh.Scene()
    scene.add_geometry(box, node_name='crate', transform=trimesh.transformations
                       .translation_matrix([0, 0, 1]))
    write(tmp_path, {'c.glb': scene.export(file_type='glb'),
                     'w.world': _mesh_world(tmp_path, 'c.glb')})
    world = load(tmp_path / 'w.world')
    assert down_range(world, 0, 0) == pytest.approx(8.0, abs=MM)         # top at z = 2 m
    files = scene.export(file_type='gltf')
    write(tmp_path, dict(files))
    write(tmp_path, {'w2.world': _mesh_world(tmp_path, 'model.gltf')})
    assert down_range(load(tmp_path / 'w2.world'), 0, 0) == pytest.approx(8.0, abs=MM)


def test_warm_load_reads_the_cache_keyed_by_contents(tmp_path, monkeypatch):
    write(tmp_path, {'m.dae': dae(), 'w.world': _mesh_world(tmp_path, 'm.dae')})
    load(tmp_path / 'w.world')
    assert len(list((tmp_path / 'cache').glob('*.npz'))) == 1
    calls = []
    monkeypatch.setattr(meshes, '_read', lambda path: calls.append(path))
    assert down_range(load(tmp_path / 'w.world'), 0, 0) == pytest.approx(9.0, abs=MM)
    assert calls == []                                   # same bytes: no parse
    write(tmp_path, {'m.dae': dae(z=2.0)})
    with pytest.raises(TypeError):                       # new bytes: parsed again
        load(tmp_path / 'w.world')
    assert len(calls) == 1


@pytest.mark.parametrize('suffix', ['dae', 'glb', 'obj', 'stl', 'ply'])
def test_yaml_mesh_objects_read_every_format(tmp_path, suffix):
    box = trimesh.creation.box(extents=[2, 2, 2])
    data = dae(z=1.0) if suffix == 'dae' else box.export(file_type=suffix)
    write(tmp_path, {f'm.{suffix}': data, 'world.yaml':
                     f'objects:\n  - {{name: m, type: mesh, file: m.{suffix}, scale: 2}}\n'})
    world = World.load(tmp_path / 'world.yaml')
    assert down_range(world, 0, 0) == pytest.approx(8.0, abs=MM)        # z 1 x 2 either way


def test_collada_with_entities_is_refused(tmp_path):
    bomb = dae().replace('<?xml version="1.0"?>',
                         '<?xml version="1.0"?><!DOCTYPE C [<!ENTITY a "1">]>')
    write(tmp_path, {'m.dae': bomb, 'w.world': _mesh_world(tmp_path, 'm.dae')})
    with pytest.raises(WorldError, match=r"mesh .*m\.dae' is refused: EntitiesForbidden"):
        load(tmp_path / 'w.world')


def test_mesh_over_the_triangle_budget_is_refused_before_reading(tmp_path):
    write(tmp_path, {'m.dae': dae().replace('triangles count="2"', 'triangles count="200000000"'),
                     'w.world': _mesh_world(tmp_path, 'm.dae')})
    with pytest.raises(WorldError, match=r'has about 200000000 triangles, more than the '):
        load(tmp_path / 'w.world')


def test_world_files_hold_the_sdf_its_models_and_meshes(tmp_path):
    write(tmp_path, {'m.dae': dae(), 'w.world': _mesh_world(tmp_path, 'm.dae')})
    world = load(tmp_path / 'w.world')
    assert world.files == (tmp_path / 'w.world', tmp_path / 'm.dae')
    assert {str(tmp_path / 'w.world'), str(tmp_path / 'm.dae')} <= set(map(str, input_files(
        world, [], [])))
