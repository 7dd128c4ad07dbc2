"""Hostile SDF structure refused in one line: include cycles, deep nests, doubling trees, 1e300."""

import os
import threading

import pytest
from sdf_helpers import box_model, down_range, load, world_sdf, write

from ubot_lidar_sim.cli import main
from ubot_lidar_sim.core.errors import WorldError
from ubot_lidar_sim.core.world.sdf.expansion import MAX_NESTING
from ubot_lidar_sim.core.world.sdf.reading import MAX_MODELS


def _model_file(body):
    return f'<sdf version="1.9"><model name="m">{body}</model></sdf>'


def _inc(uri, name=''):
    return f'<include><uri>{uri}</uri><name>{name}</name></include>'


def _refused(path, pattern):
    with pytest.raises(WorldError, match=pattern) as err:
        load(path)
    assert '\n' not in str(err.value)
    return str(err.value)


def test_model_that_includes_itself_is_a_one_line_cycle(tmp_path, capsys):
    write(tmp_path, {'self/model.sdf': _model_file(_inc('../self')),
                     'w.world': world_sdf(_inc('self'))})
    message = _refused(tmp_path / 'w.world', r'include cycle: .*self/model\.sdf -> .*self/'
                       r'model\.sdf$')
    assert 'RecursionError' not in message
    assert main(['scan', '--sensor', 'laser_scan', '--world', str(tmp_path / 'w.world'),
                 '--out', str(tmp_path / 'o.json')]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'include cycle' in err


def test_a_b_a_include_cycle_names_both_files(tmp_path):
    write(tmp_path, {'a/model.sdf': _model_file(_inc('../b')),
                     'b/model.sdf': _model_file(_inc('../a')),
                     'w.world': world_sdf(_inc('a'))})
    _refused(tmp_path / 'w.world', r'include cycle: .*a/model\.sdf -> .*b/model\.sdf -> '
             r'.*a/model\.sdf$')


def test_a_3000_deep_inline_nest_is_refused_without_recursion(tmp_path):
    nest = '<model name="n">' * 3000 + '</model>' * 3000
    write(tmp_path, {'w.world': world_sdf(nest)})
    _refused(tmp_path / 'w.world', rf'models nest deeper than {MAX_NESTING} levels')


def test_nesting_at_the_limit_loads(tmp_path):
    inner = box_model('leaf', '0 0 0 0 0 0')
    nest = '<model name="n">' * (MAX_NESTING - 1) + inner + '</model>' * (MAX_NESTING - 1)
    write(tmp_path, {'w.world': world_sdf(nest)})
    world = load(tmp_path / 'w.world')
    assert world.objects[0].name == 'n::' * (MAX_NESTING - 1) + 'leaf::l::v'


def test_a_tree_of_doubling_includes_is_refused_before_it_is_built(tmp_path):
    # level k includes level k + 1 twice: 2^40 models from 41 small files, counted in 41 steps
    files = {f'l{k}/model.sdf': _model_file(_inc(f'../l{k + 1}') * 2) for k in range(40)}
    files['l40/model.sdf'] = _model_file('')
    write(tmp_path, {**files, 'w.world': world_sdf(_inc('l0'))})
    _refused(tmp_path / 'w.world', rf'the world expands to more than {MAX_MODELS} models')


def test_repeated_includes_up_to_the_limit_count_each_model(tmp_path):
    # 2^5 = 32 copies of a one-box model through a doubling tree: every copy is built
    files = {f'l{k}/model.sdf': _model_file(_inc(f'../l{k + 1}', 'a') + _inc(f'../l{k + 1}', 'b'))
             for k in range(5)}
    files['l5/model.sdf'] = '<sdf version="1.9">' + box_model('b', '0 0 0 0 0 0') + '</sdf>'
    write(tmp_path, {**files, 'w.world': world_sdf(_inc('l0'))})
    assert len(load(tmp_path / 'w.world').objects) == 32


ACTOR = ('<actor name="a"><script><trajectory id="0" type="walk">'
         '<waypoint><time>0</time><pose>{} 0 0 0 0 0</pose></waypoint>'
         '<waypoint><time>1</time><pose>0 0 0 0 0 0</pose></waypoint></trajectory></script>'
         '</actor>')


@pytest.mark.parametrize('x', ['1e300', '2e6'])
def test_actor_beyond_the_world_extent_is_refused_like_a_yaml_actor(tmp_path, x):
    write(tmp_path, {'w.world': world_sdf(ACTOR.format(x))})
    _refused(tmp_path / 'w.world', r"actor 'a'.*(beyond the 1e\+06|pose '.*' is beyond)")


def test_actor_at_the_extent_loads(tmp_path):
    write(tmp_path, {'w.world': world_sdf(ACTOR.format('1e6'))})
    assert [a.name for a in load(tmp_path / 'w.world').actors] == ['a']


@pytest.mark.parametrize('pose', ['0 0 0 1e300 0 0 1', '0 0 0 0 0 1e300 1e300',
                                  '1e300 0 0 0 0 0 1'])
def test_quaternion_of_1e300_is_refused_not_made_identity(tmp_path, pose):
    model = box_model('m', pose).replace('<pose>', '<pose rotation_format="quat_xyzw">')
    write(tmp_path, {'w.world': world_sdf(model)})
    _refused(tmp_path / 'w.world', r"model 'm'/pose: pose .* is beyond the 1e\+06 allowed")


@pytest.mark.parametrize('scale', ['0 1 1', '1 -1 1', '1 1 nan'])
def test_mesh_scale_zero_negative_or_nan_is_refused(tmp_path, scale):
    write(tmp_path, {'p.obj': 'v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n',
                     'w.world': world_sdf(
                         '<model name="m"><link name="l"><visual name="v"><geometry><mesh>'
                         f'<uri>p.obj</uri><scale>{scale}</scale></mesh></geometry></visual>'
                         '</link></model>')})
    _refused(tmp_path / 'w.world', r"visual 'v'/geometry/mesh/scale: .*(> 0|not 3 numbers)")


def test_a_chain_of_3000_relative_frames_resolves_without_recursion(tmp_path):
    # frame k is 0.001 m above frame k - 1: the last one 3 m above the model
    frames = '<frame name="f0"/>' + ''.join(
        f'<frame name="f{k}"><pose relative_to="f{k - 1}">0 0 0.001 0 0 0</pose></frame>'
        for k in range(1, 3000))
    model = ('<model name="m">' + frames + '<link name="l"><pose relative_to="f2999">0 0 0 0 0 0'
             '</pose><visual name="v"><geometry><box><size>1 1 1</size></box></geometry>'
             '</visual></link></model>')
    write(tmp_path, {'w.world': world_sdf(model)})
    # top of the box at 2.999 + 0.5 m; bound: 3000 float64 additions of 0.001 (< 1e-12 m)
    # within float32 hit rounding at 10 m (< 1e-5 m)
    assert down_range(load(tmp_path / 'w.world'), 0, 0) == pytest.approx(10 - 3.499, abs=1e-5)


def test_gltf_whose_buffer_is_a_fifo_is_refused_without_opening_it(tmp_path, monkeypatch):
    import trimesh

    monkeypatch.setenv('UBOT_LIDAR_SIM_MESH_CACHE', str(tmp_path / 'cache'))
    files = trimesh.exchange.gltf.export_gltf(trimesh.Scene(trimesh.creation.box()))
    write(tmp_path, {'m/box.gltf': files['model.gltf'],
                     'm/gltf_buffer_1.bin': files['gltf_buffer_1.bin'],
                     'w.world': world_sdf('<model name="m"><link name="l"><visual name="v">'
                                          '<geometry><mesh><uri>m/box.gltf</uri></mesh>'
                                          '</geometry></visual></link></model>')})
    fifo = tmp_path / 'm' / 'gltf_buffer_0.bin'
    os.mkfifo(fifo)
    # a writer that ends a reader's wait (before the check the load opened the FIFO and hung)
    writer = threading.Thread(target=lambda: os.close(os.open(fifo, os.O_WRONLY)), daemon=True)
    writer.start()
    try:
        _refused(tmp_path / 'w.world', r"mesh '.*box\.gltf' names 'gltf_buffer_0\.bin', which is "
                 r'not a regular file \(a FIFO\)')
    finally:
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))      # lets the writer finish
        writer.join(5.0)
