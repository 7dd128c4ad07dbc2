"""
Round 5: hostile mesh files and mesh cache entries (core/world/meshes.py, core/file_checks.py).

The cache is written as outputs are (no link followed, unpredictable temporaries) and an entry
is checked as a fresh parse on every load: a bad one is parsed again with one warning. A FIFO,
a huge sparse file or malformed glTF JSON is refused with one line, never read or waited on.
"""

import contextlib
import json
import logging
import os
import signal

import numpy as np
import pytest
from sdf_helpers import down_range, load, world_sdf, write
from test_meshes import dae, MM
import trimesh

from ubot_lidar_sim.core.errors import WorldError
from ubot_lidar_sim.core.world import meshes
from ubot_lidar_sim.core.world.world import World

HANG_S = 20     # a FIFO that is opened blocks forever; everything here takes < 1 s


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv('UBOT_LIDAR_SIM_MESH_CACHE', str(tmp_path / 'cache'))


@contextlib.contextmanager
def _no_hang():
    """Fail (instead of blocking the suite) when the block takes more than HANG_S."""
    def expired(*_):
        raise TimeoutError(f'still blocked after {HANG_S} s')
    before = signal.signal(signal.SIGALRM, expired)
    signal.alarm(HANG_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)


def _dae_world(tmp_path):
    """Write a COLLADA square at z 1 m and its SDF world; return (world path, cache entry)."""
    write(tmp_path, {'m.dae': dae(), 'w.world': world_sdf(
        '<model name="m"><link name="l"><visual name="v"><geometry><mesh><uri>m.dae</uri>'
        '</mesh></geometry></visual></link></model>')})
    (tmp_path / 'cache').mkdir(exist_ok=True)
    return tmp_path / 'w.world', tmp_path / 'cache' / f'{meshes._key(tmp_path / "m.dae")}.npz'


def test_links_planted_at_the_old_temporary_name_and_at_the_entry_are_not_written_through(
        tmp_path):
    world, entry = _dae_world(tmp_path)
    outside = tmp_path / 'outside'
    outside.write_text('keep')
    # the writer's temporary was <sha>.<pid>.tmp.npz: a name anyone could plant beforehand
    os.symlink(outside, entry.parent / f'{entry.stem}.{os.getpid()}.tmp.npz')
    os.symlink(outside, entry)
    # bound: MM (test_meshes): 1 mm plus f32_hit_bound_m of a 100 m hit at normal incidence
    assert down_range(load(world), 0, 0) == pytest.approx(9.0, abs=MM)
    assert outside.read_text() == 'keep'
    assert entry.is_file() and not entry.is_symlink()
    with np.load(entry) as z:
        assert z['t'].shape == (2, 3)


def _bad_entry(v, t, offsets=(0, 2)):
    return {'v': np.asarray(v, float), 't': np.asarray(t, np.int64),
            'offsets': np.asarray(offsets, np.int64), 'names': np.asarray(['quad'])}


GOOD_V = [[-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]]


@pytest.mark.parametrize('arrays, why', [
    (_bad_entry([[np.nan, 0, 0]] + GOOD_V[1:], [[0, 1, 2], [0, 2, 3]]), 'non-finite vertices'),
    (_bad_entry(GOOD_V, [[0, 1, 2], [0, 2, 1 << 40]]), 'triangle index 1099511627776 outside'),
    (_bad_entry(GOOD_V, [[0, 1, 2], [0, 2, -1]]), 'triangle index -1 outside'),
    (_bad_entry(GOOD_V, [[0, 1, 2], [0, 2, 3]], (0, 5)), 'part offsets'),
    (_bad_entry(GOOD_V, np.zeros((0, 3))), 'triangles of shape (0, 3)'),
    ('truncated', 'BadZipFile'),
    ('empty', 'EOFError'),
    ('fifo', 'not a regular file (a FIFO)'),
    ('link', 'Too many levels of symbolic links'),
], ids=['nan', 'index-2^40', 'index-negative', 'offsets', 'no-triangles', 'truncated', 'empty',
        'fifo', 'link'])
def test_a_bad_cache_entry_is_parsed_again_with_one_warning(tmp_path, caplog, arrays, why):
    world, entry = _dae_world(tmp_path)
    load(world)                                 # a good entry first
    good = entry.read_bytes()
    entry.unlink()
    if arrays == 'truncated':
        entry.write_bytes(good[:len(good) // 2])
    elif arrays == 'empty':
        entry.write_bytes(b'')
    elif arrays == 'fifo':
        os.mkfifo(entry)
    elif arrays == 'link':
        (tmp_path / 'elsewhere.npz').write_bytes(good)
        os.symlink(tmp_path / 'elsewhere.npz', entry)
    else:
        np.savez(entry, **arrays)
    with caplog.at_level(logging.WARNING, logger=meshes.__name__), _no_hang():
        # bound: MM (test_meshes): 1 mm plus f32_hit_bound_m of a 100 m hit at normal incidence
        assert down_range(load(world), 0, 0) == pytest.approx(9.0, abs=MM)
    warnings = [r.getMessage() for r in caplog.records if r.name == meshes.__name__]
    assert len(warnings) == 1 and why in warnings[0] and 'parsed' in warnings[0], warnings
    assert entry.is_file() and not entry.is_symlink() and entry.read_bytes() == good
    caplog.clear()
    load(world)                                 # rebuilt: no warning the second time
    assert not [r for r in caplog.records if r.name == meshes.__name__]


def test_a_fresh_mesh_with_a_triangle_index_outside_its_vertices_is_refused(tmp_path):
    write(tmp_path, {'m.obj': 'v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n', 'w.world': world_sdf(
        '<model name="m"><link name="l"><visual name="v"><geometry><mesh><uri>m.obj</uri>'
        '</mesh></geometry></visual></link></model>')})
    parts = meshes._read(tmp_path / 'm.obj')
    bad = (parts[0], parts[1], np.asarray([[0, 1, 7]]), parts[3])
    with pytest.raises(meshes.MeshError, match='triangle index 7 outside its 3 vertices'):
        meshes._validate(*bad)


@pytest.mark.parametrize('suffix', ['stl', 'obj'])
@pytest.mark.parametrize('world', ['yaml', 'sdf'])
def test_a_2_gb_sparse_mesh_is_refused_from_its_size_before_it_is_read(tmp_path, suffix, world):
    mesh = tmp_path / f'big.{suffix}'
    with open(mesh, 'wb') as f:
        f.truncate(2 << 30)                     # 2 GiB of holes: costs no disk
    write(tmp_path, {'w.yaml': f'objects:\n  - {{name: m, type: mesh, file: big.{suffix}}}\n',
                     'w.world': world_sdf(
                         f'<model name="m"><link name="l"><visual name="v"><geometry><mesh>'
                         f'<uri>big.{suffix}</uri></mesh></geometry></visual></link></model>')})
    with _no_hang(), pytest.raises(WorldError) as err:
        World.load(tmp_path / ('w.yaml' if world == 'yaml' else 'w.world'))
    assert '2147483648 bytes, larger than the 512 MiB allowed' in str(err.value)
    assert '\n' not in str(err.value)


def _gltf(tmp_path, doc=None, buffer='fifo'):
    """Write model.gltf (doc, else a box whose buffer file is a FIFO); return its world."""
    if doc is None:
        files = trimesh.Scene(trimesh.creation.box()).export(file_type='gltf')
        doc = json.loads(files['model.gltf'])
        name = doc['buffers'][0]['uri']
        if buffer == 'fifo':
            os.mkfifo(tmp_path / name)
        else:
            write(tmp_path, {name: files[name]})
    write(tmp_path, {'model.gltf': json.dumps(doc), 'w.world': world_sdf(
        '<model name="m"><link name="l"><visual name="v"><geometry><mesh><uri>model.gltf'
        '</uri></mesh></geometry></visual></link></model>')})
    return tmp_path / 'w.world'


def test_a_gltf_whose_buffer_is_a_fifo_is_refused_without_waiting(tmp_path):
    with _no_hang(), pytest.raises(WorldError, match=r"names '.*\.bin', which is not a regular "
                                   r'file \(a FIFO\)'):
        load(_gltf(tmp_path))


@pytest.mark.parametrize('doc, says', [
    ([1, 2, 3], 'is not a glTF document (its JSON is list, expected an object)'),
    ({'asset': {'version': '2.0'}, 'accessors': [3, 4], 'meshes': [
        {'primitives': [{'attributes': {'POSITION': 0}}]}]},
     '"accessors" is not a list of objects'),
    ({'asset': {'version': '2.0'}, 'meshes': 7}, '"meshes" is not a list of objects'),
    ({'asset': {'version': '2.0'}, 'buffers': [{'uri': 5}], 'meshes': [{'primitives': 1}]},
     'a mesh: "primitives" is not a list of objects'),
], ids=['top-level-list', 'integer-accessors', 'meshes-number', 'primitives-number'])
def test_malformed_gltf_json_is_one_line(tmp_path, doc, says):
    with pytest.raises(WorldError) as err:
        load(_gltf(tmp_path, doc))
    assert says in str(err.value) and '\n' not in str(err.value), str(err.value)
