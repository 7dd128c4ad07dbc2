"""
Bad files at the library entrances: each gets a typed error whose message names the file.

World, mesh, materials and parameter files (empty, truncated, binary, hostile YAML tags, meshes
too large or corrupt); docs/reliability.md lists every case with what it gets.
"""

import math
import resource
import struct
import time

import numpy as np
import pytest

from ubot_lidar_sim.core.config.params_file import read_params_file
from ubot_lidar_sim.core.errors import ConfigError, WorldError
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World

PLY_HEADER = ('ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\n'
              'property float y\nproperty float z\nelement face {faces}\n'
              'property list uchar int vertex_indices\nend_header\n')
EVIL = "!!python/object/apply:os.system ['touch {marker}']"


def _world_file(tmp_path, text, name='world.yaml'):
    path = tmp_path / name
    path.write_text(text, encoding='utf-8')
    return path


def _mesh_world(tmp_path, mesh_name, ground=False):
    lines = ['frame: map', 'objects:']
    if ground:
        lines.append('  - {name: ground, type: plane, size_m: [10, 10], material: grass}')
    lines.append(f'  - {{name: barn, type: mesh, file: {mesh_name}, material: building}}')
    return _world_file(tmp_path, '\n'.join(lines) + '\n')


def _maxrss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def test_empty_world_file_is_refused(tmp_path):
    path = _world_file(tmp_path, '')
    with pytest.raises(WorldError, match=f'{path}: file: the file is empty'):
        World.load(str(path))


def test_whitespace_only_world_file_is_refused_as_empty(tmp_path):
    path = _world_file(tmp_path, '\n   \n\t\n')
    with pytest.raises(WorldError, match='the file is empty'):
        World.load(str(path))


def test_truncated_world_file_is_a_yaml_syntax_error_with_its_line(tmp_path):
    path = _world_file(tmp_path, 'frame: map\nobjects:\n  - {name: wall, type: box, size_m: [1, ')
    with pytest.raises(WorldError, match=f'{path}: line [34]: YAML syntax error'):
        World.load(str(path))


def test_binary_world_file_is_refused(tmp_path):
    path = tmp_path / 'world.yaml'
    path.write_bytes(bytes(np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8)))
    with pytest.raises(WorldError, match='binary content, expected a YAML text file'):
        World.load(str(path))


def test_non_utf8_world_file_is_refused(tmp_path):
    path = tmp_path / 'world.yaml'
    path.write_bytes('frame: m\xe4p\n'.encode('latin-1'))
    with pytest.raises(WorldError, match='not UTF-8 text'):
        World.load(str(path))


def test_world_file_that_is_a_list_is_refused(tmp_path):
    path = _world_file(tmp_path, '- a\n- b\n')
    with pytest.raises(WorldError, match='expected a mapping with frame, objects, smoke; got '
                       'list'):
        World.load(str(path))


def test_world_object_of_unknown_type_is_refused_by_name(tmp_path):
    path = _world_file(tmp_path, 'objects:\n  - {name: ufo, type: saucer, material: metal_bin}\n')
    with pytest.raises(WorldError, match=r"objects\[0\]\.type: unknown type 'saucer'"):
        World.load(str(path))


def test_world_object_with_nan_size_is_refused(tmp_path):
    path = _world_file(tmp_path, 'objects:\n  - {name: b, type: box, size_m: [1, .nan, 1], '
                       'material: concrete}\n')
    with pytest.raises(WorldError, match=r"objects\[0\] 'b'\.size_m: expected a list of 3 "
                       r'numbers > 0, got \[1, nan, 1\]'):
        World.load(str(path))


def test_world_yaml_with_a_python_object_tag_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / 'PWNED'
    path = _world_file(tmp_path, 'frame: ' + EVIL.format(marker=marker) + '\n')
    with pytest.raises(WorldError, match='could not determine a constructor for the tag '
                       "'tag:yaml.org,2002:python/object/apply:os.system'"):
        World.load(str(path))
    assert not marker.exists()


def test_materials_file_with_a_python_object_tag_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / 'PWNED'
    path = _world_file(tmp_path, 'other: ' + EVIL.format(marker=marker) + '\n', 'mat.yaml')
    with pytest.raises(ConfigError,
                       match=r'materials_file: got .*mat\.yaml.*not determine a constructor'):
        MaterialTable.load(str(path))
    assert not marker.exists()


def test_parameter_file_with_a_python_object_tag_is_refused_and_nothing_runs(tmp_path):
    import yaml

    marker = tmp_path / 'PWNED'
    path = _world_file(tmp_path, 'lidar_3d:\n  ros__parameters:\n    channels: '
                       + EVIL.format(marker=marker) + '\n', 'params.yaml')
    with pytest.raises(yaml.constructor.ConstructorError, match='python/object/apply'):
        read_params_file(str(path), ('lidar_3d',))
    assert not marker.exists()


def test_mesh_of_5m_triangles_is_refused_with_a_size_message_without_loading_it(tmp_path):
    (tmp_path / 'big.ply').write_text(PLY_HEADER.format(faces=5_000_000), encoding='ascii')
    path = _mesh_world(tmp_path, 'big.ply', ground=True)
    rss0, t0 = _maxrss_mb(), time.monotonic()
    with pytest.raises(WorldError, match=r"'big\.ply' has about 5000000 triangles, more than the "
                       r'4999998 left of max_triangles 5000000'):
        World.load(str(path))
    assert time.monotonic() - t0 < 2.0
    assert _maxrss_mb() - rss0 < 50.0      # the header is read, not 5 M faces


def test_mesh_of_6m_triangles_alone_is_refused_with_a_size_message(tmp_path):
    (tmp_path / 'big.ply').write_text(PLY_HEADER.format(faces=6_000_000), encoding='ascii')
    with pytest.raises(WorldError, match='has about 6000000 triangles, more than the 5000000'):
        World.load(str(_mesh_world(tmp_path, 'big.ply')))


def test_truncated_ply_mesh_is_refused_as_corrupt(tmp_path):
    (tmp_path / 'cut.ply').write_bytes(PLY_HEADER.format(faces=12).encode() + b'\0' * 20)
    with pytest.raises(WorldError, match=r"'cut\.ply' cannot be read as a mesh \(corrupt file\)"):
        World.load(str(_mesh_world(tmp_path, 'cut.ply')))


def test_ply_claiming_5m_faces_with_no_data_is_refused_without_allocating(tmp_path):
    (tmp_path / 'hollow.ply').write_text(PLY_HEADER.format(faces=5_000_000), encoding='ascii')
    rss0 = _maxrss_mb()
    with pytest.raises(WorldError, match='corrupt file'):
        World.load(str(_mesh_world(tmp_path, 'hollow.ply')))
    assert _maxrss_mb() - rss0 < 50.0


def test_ply_with_a_garbage_header_is_refused(tmp_path):
    (tmp_path / 'bad.ply').write_bytes(b'plx\x00\x01garbage' * 10)
    with pytest.raises(WorldError, match=r"'bad\.ply' is not a valid PLY file \(corrupt header\)"):
        World.load(str(_mesh_world(tmp_path, 'bad.ply')))


def test_binary_stl_claiming_5m_triangles_but_truncated_is_refused(tmp_path):
    (tmp_path / 'big.stl').write_bytes(b'\0' * 80 + struct.pack('<I', 5_000_000) + b'\0' * 100)
    rss0 = _maxrss_mb()
    with pytest.raises(WorldError, match=r"'big\.stl' cannot be read as a mesh"):
        World.load(str(_mesh_world(tmp_path, 'big.stl')))
    assert _maxrss_mb() - rss0 < 50.0


def test_missing_mesh_file_is_refused_with_its_path(tmp_path):
    with pytest.raises(WorldError, match=r"objects\[0\] 'barn'\.file: file '.*nope\.ply' not "
                       'found'):
        World.load(str(_mesh_world(tmp_path, 'nope.ply')))


def test_heightfield_with_nan_heights_is_refused(tmp_path):
    heights = np.zeros((4, 4))
    heights[1, 2] = math.nan
    np.save(tmp_path / 'hills.npy', heights)
    path = _world_file(tmp_path, 'objects:\n  - {name: hills, type: heightfield, file: '
                       'hills.npy, cell_m: 1.0, material: soil}\n')
    with pytest.raises(WorldError, match="'hills.npy' has non-finite heights"):
        World.load(str(path))
