"""SDF includes through every path kind, include poses, Fuel, bad input; hand-computed ranges."""

import pickle

import pytest
from sdf_helpers import box_model, down_range, load, world_sdf, write
from tolerances import f32_hit_bound_m

from ubot_lidar_sim.cli import main
from ubot_lidar_sim.core.errors import WorldError
from ubot_lidar_sim.core.world.sdf.reading import MAX_MODELS
from ubot_lidar_sim.core.world.world import World

# bound: 1 mm for a tessellated surface met off its exact shape, plus float32 hit rounding
MM = 1e-3 + f32_hit_bound_m(100.0, 1.0)
POST = box_model('post', '100 100 0.5 0 0 0', '1 1 1')      # its own pose: far away
CONFIG = '<model><name>post</name><sdf version="1.9">model.sdf</sdf></model>'


def _model_dir(root, name='post'):
    write(root, {f'{name}/model.config': CONFIG.replace('post', name),
                 f'{name}/model.sdf': f'<sdf version="1.9">{POST}</sdf>'})
    return root


def _include(uri, pose=None, name=None):
    return ('<include>' + f'<uri>{uri}</uri>' + (f'<pose>{pose}</pose>' if pose else '')
            + (f'<name>{name}</name>' if name else '') + '</include>')


@pytest.mark.parametrize('variable', ['GZ_SIM_RESOURCE_PATH', 'IGN_GAZEBO_RESOURCE_PATH',
                                      'GAZEBO_MODEL_PATH', 'model_paths'])
def test_model_uri_resolves_through_each_path(tmp_path, monkeypatch, variable):
    for v in ('GZ_SIM_RESOURCE_PATH', 'IGN_GAZEBO_RESOURCE_PATH', 'GAZEBO_MODEL_PATH'):
        monkeypatch.delenv(v, raising=False)
    models = _model_dir(tmp_path / 'models')
    kw = {}
    if variable == 'model_paths':
        kw['model_paths'] = [str(tmp_path / 'nothing'), str(models)]
    else:
        monkeypatch.setenv(variable, f'{tmp_path / "nothing"}:{models}')
    write(tmp_path, {'w.world': world_sdf(_include('model://post', '3 0 0 0 0 0', 'p1'))})
    world = load(tmp_path / 'w.world', **kw)
    assert [o.name for o in world.objects] == ['p1::l::v']
    # the include's pose (3, 0, 0) replaces the model's (100, 100, 0.5): box top at 0.5 m
    assert down_range(world, 3, 0) == pytest.approx(9.5, abs=MM)
    assert (models / 'post' / 'model.sdf') in world.files


def test_path_variables_are_searched_in_order(tmp_path, monkeypatch):
    first, second = tmp_path / 'a', tmp_path / 'b'
    write(first, {'post/model.sdf': '<sdf version="1.9">' + box_model('post', '0 0 0.5 0 0 0')
                  + '</sdf>'})
    write(second, {'post/model.sdf': '<sdf version="1.9">' + box_model('post', '0 0 1.5 0 0 0')
                   + '</sdf>'})
    monkeypatch.setenv('GZ_SIM_RESOURCE_PATH', str(first))
    monkeypatch.setenv('GAZEBO_MODEL_PATH', str(second))
    write(tmp_path, {'w.world': world_sdf(_include('model://post'))})
    assert down_range(load(tmp_path / 'w.world'), 0, 0) == pytest.approx(9.0, abs=MM)


def test_include_without_pose_keeps_the_models_own(tmp_path):
    _model_dir(tmp_path / 'models')
    write(tmp_path, {'w.world': world_sdf(_include('models/post'))})
    world = load(tmp_path / 'w.world')
    assert down_range(world, 100, 100) == pytest.approx(9.0, abs=MM)


def test_relative_file_and_package_uris(tmp_path, monkeypatch):
    _model_dir(tmp_path / 'models')
    prefix = tmp_path / 'install'
    write(prefix, {'share/ament_index/resource_index/packages/my_pkg': '',
                   'share/my_pkg/models/post/model.sdf':
                   '<sdf version="1.9">' + POST + '</sdf>'})
    monkeypatch.setenv('AMENT_PREFIX_PATH', f'{tmp_path / "other"}:{prefix}')
    body = (_include('models/post', '0 0 0 0 0 0', 'rel')
            + _include(f'file://{tmp_path}/models/post', '5 0 0 0 0 0', 'abs')
            + _include('package://my_pkg/models/post', '10 0 0 0 0 0', 'pkg'))
    write(tmp_path, {'sub/w.world': world_sdf(body.replace('models/post', '../models/post', 1))})
    world = load(tmp_path / 'sub' / 'w.world')
    assert [down_range(world, x, 0) for x in (0, 5, 10)] == pytest.approx([9.5] * 3, abs=MM)


def test_fuel_ground_plane_and_sun_need_no_cache(tmp_path, monkeypatch):
    monkeypatch.setenv('GZ_FUEL_CACHE_PATH', str(tmp_path / 'fuel'))
    body = (_include('https://fuel.gazebosim.org/1.0/OpenRobotics/models/Ground Plane')
            + _include('https://fuel.gazebosim.org/1.0/OpenRobotics/models/Sun'))
    write(tmp_path, {'w.world': world_sdf(body)})
    world = load(tmp_path / 'w.world')
    assert [o.name for o in world.objects] == ['ground_plane::link::visual']
    assert world.objects[0].ground
    assert down_range(world, 49, -49) == pytest.approx(10.0, abs=MM)     # 100 m x 100 m


def test_cached_fuel_model_is_read_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv('GZ_FUEL_CACHE_PATH', str(tmp_path / 'fuel'))
    _model_dir(tmp_path / 'fuel/fuel.gazebosim.org/openrobotics/models/post', 'x')
    cache = tmp_path / 'fuel/fuel.gazebosim.org/openrobotics/models/post'
    (cache / 'x').rename(cache / '2')
    write(tmp_path, {'w.world': world_sdf(
        _include('https://fuel.gazebosim.org/1.0/OpenRobotics/models/Post', '1 2 0 0 0 0'))})
    assert down_range(load(tmp_path / 'w.world'), 1, 2) == pytest.approx(9.5, abs=MM)


BAD = {
    'uncached fuel': (_include('https://fuel.gazebosim.org/1.0/OpenRobotics/models/Tree'),
                      r"Fuel model 'OpenRobotics/Tree' is not in a local Fuel cache .*fuel"),
    'missing model': (_include('model://nowhere'),
                      r"model 'nowhere' not found in GZ_SIM_RESOURCE_PATH"),
    'pose not six numbers': (box_model('m', '1 2 3'),
                             r"w\.world: model 'm'/pose: pose '1 2 3' is not 6 numbers"),
    'unsupported geometry': ('<model name="m"><link name="l"><visual name="v"><geometry>'
                             '<polyline><height>1</height></polyline></geometry></visual>'
                             '</link></model>',
                             r"model 'm': link 'l': visual 'v'/geometry/polyline: geometry "
                             r"type 'polyline' is not supported"),
    'mesh fails to load': ('<model name="m"><link name="l"><visual name="v"><geometry><mesh>'
                           '<uri>bad.dae</uri></mesh></geometry></visual></link></model>',
                           r"model 'm': link 'l': visual 'v'/geometry/mesh/uri: mesh .*bad\.dae"
                           r"' is not valid XML"),
    'unknown relative_to': ('<model name="m"><link name="l"><pose relative_to="nope">0 0 0 0 0 0'
                            '</pose></link></model>', r"relative_to 'nope' is not a frame"),
}


@pytest.mark.parametrize('case', sorted(BAD))
def test_bad_sdf_input_is_one_line_naming_file_model_and_element(tmp_path, monkeypatch, case):
    for v in ('GZ_SIM_RESOURCE_PATH', 'IGN_GAZEBO_RESOURCE_PATH', 'GAZEBO_MODEL_PATH'):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv('GZ_FUEL_CACHE_PATH', str(tmp_path / 'fuel'))
    body, message = BAD[case]
    write(tmp_path, {'w.world': world_sdf(body), 'bad.dae': 'not xml <'})
    with pytest.raises(WorldError, match=message) as err:
        load(tmp_path / 'w.world')
    assert '\n' not in str(err.value)


def test_entity_expansion_is_refused(tmp_path):
    bomb = ('<?xml version="1.0"?><!DOCTYPE sdf [<!ENTITY a "aaaaaaaaaa">'
            '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><sdf version="1.9"><world name="&b;">'
            '</world></sdf>')
    write(tmp_path, {'w.world': bomb})
    with pytest.raises(WorldError, match=r'w\.world: refused: a DOCTYPE \(DTDs and entities '
                       r'are not read\)'):
        load(tmp_path / 'w.world')


def test_yaml_world_includes_an_sdf_world_beside_its_objects(tmp_path):
    write(tmp_path, {'w.world': world_sdf(box_model('crate', '5 0 0.5 0 0 0')),
                     'world.yaml': 'objects:\n  - {name: ground, type: plane, size_m: [50, 50]}\n'
                     '  - {type: sdf, file: w.world, materials: {"crate*": metal_bin}}\n'})
    world = World.load(tmp_path / 'world.yaml')
    assert [o.name for o in world.objects] == ['ground', 'crate::l::v']
    assert down_range(world, 5, 0) == pytest.approx(9.0, abs=MM)
    assert down_range(world, -5, 0) == pytest.approx(10.0, abs=MM)
    assert world.sdf_report == [('crate::l::v', 'metal_bin', "pattern 'crate*'")]
    assert (tmp_path / 'w.world') in world.files
    again = pickle.loads(pickle.dumps(world))       # as sent to compute processes
    assert down_range(again, 5, 0) == pytest.approx(9.0, abs=MM)


def test_a_world_of_more_models_than_the_limit_is_refused(tmp_path):
    write(tmp_path, {'w.world': world_sdf('<model name="m"/>' * (MAX_MODELS + 1))})
    with pytest.raises(WorldError,
                       match=rf'w\.world: the world expands to more than {MAX_MODELS} models'):
        load(tmp_path / 'w.world')


def test_classic_ground_plane_and_sun_work_without_a_model_path(tmp_path, monkeypatch):
    for v in ('GZ_SIM_RESOURCE_PATH', 'IGN_GAZEBO_RESOURCE_PATH', 'GAZEBO_MODEL_PATH'):
        monkeypatch.delenv(v, raising=False)
    write(tmp_path, {'w.world': world_sdf(_include('model://ground_plane')
                                          + _include('model://sun'))})
    world = load(tmp_path / 'w.world')
    assert [o.name for o in world.objects] == ['ground_plane::link::visual']
    assert down_range(world, 0, 0) == pytest.approx(10.0, abs=MM)


def test_elements_that_draw_nothing_are_listed_once_at_debug_level(tmp_path, caplog):
    body = ('<physics type="ode"/><light name="a"/><light name="b"/><plugin name="p"/>'
            + box_model('m', '0 0 0 0 0 0', extra='<plugin name="q"/><joint name="j"/>'))
    write(tmp_path, {'w.world': world_sdf(body)})
    with caplog.at_level('DEBUG', logger='ubot_lidar_sim.core.world.sdf.build'):
        load(tmp_path / 'w.world')
    ignored = [r.getMessage().split(': <')[1].split('>')[0] for r in caplog.records
               if 'ignored' in r.getMessage()]
    assert sorted(ignored) == ['joint', 'light', 'physics', 'plugin']


def test_fuel_file_urls_with_tip_or_a_version_resolve_in_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv('GZ_FUEL_CACHE_PATH', str(tmp_path / 'fuel'))
    cache = tmp_path / 'fuel/fuel.gazebosim.org/openrobotics/models/post'
    _model_dir(cache, '3')
    url = 'https://fuel.gazebosim.org/1.0/OpenRobotics/models/Post'
    body = (_include(f'{url}/tip', '1 0 0 0 0 0', 'a') + _include(f'{url}/3', '2 0 0 0 0 0', 'b')
            + _include('https://fuel.gazebosim.org/1.0/OpenRobotics/models/Ground Plane/1'))
    write(tmp_path, {'w.world': world_sdf(body)})
    world = load(tmp_path / 'w.world')
    assert [o.name for o in world.objects] == ['a::l::v', 'b::l::v', 'ground_plane::link::visual']


def test_cli_loads_an_sdf_world_through_model_path_and_exits_2_on_a_bad_one(tmp_path, capsys):
    _model_dir(tmp_path / 'models')
    write(tmp_path, {'w.world': world_sdf(_include('model://post', '3 0 0 0 0 0')),
                     'bad.world': world_sdf(box_model('m', '1 2'))})
    out = tmp_path / 'scan.json'
    assert main(['scan', '--sensor', 'laser_scan', '--world', str(tmp_path / 'w.world'),
                 '--model-path', str(tmp_path / 'nothing'), '--model-path',
                 str(tmp_path / 'models'), '--out', str(out)]) == 0
    assert out.is_file()
    capsys.readouterr()
    assert main(['scan', '--sensor', 'laser_scan', '--world', str(tmp_path / 'bad.world'),
                 '--out', str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and "model 'm'/pose: pose '1 2' is not 6 numbers" in err
