"""World files: every object type, Nav2 maps, heightfields, meshes, built-in worlds, bad input."""

from pathlib import Path
import time

import numpy as np
import open3d as o3d
import pytest
from tolerances import f32_hit_bound_m

from ubot_lidar_sim.core.config import LidarConfig, TerrainConfig
from ubot_lidar_sim.core.errors import ConfigError, WorldError
from ubot_lidar_sim.core.material_ids import MATERIAL_NAMES
from ubot_lidar_sim.core.world.materials import MaterialTable, PROPERTIES
from ubot_lidar_sim.core.world.world import load_for_config, materials_for_config, World

PLAIN = MaterialTable.from_values({p: np.zeros(17) for p in PROPERTIES})
WORLDS = Path(__file__).resolve().parents[3] / 'config' / 'worlds'
DOWN = np.array([0.0, 0.0, -1.0])


def _down(xy, z=10.0):
    """Vertical rays from height z over the points xy (N, 2)."""
    xy = np.asarray(xy, float).reshape(-1, 2)
    return np.c_[xy, np.full(len(xy), z)], np.tile(DOWN, (len(xy), 1))


def _write(tmp_path, files):
    for name, content in files.items():
        path = tmp_path / name
        if isinstance(content, np.ndarray):
            np.save(path, content)
        else:
            path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return tmp_path / 'world.yaml'


def _pgm(pixels):
    h, w = pixels.shape
    return f'P5\n{w} {h}\n255\n'.encode() + pixels.astype(np.uint8).tobytes()


def test_example_world_uses_every_object_type():
    world = World.load(WORLDS / 'example.yaml', PLAIN)
    types = {o.type for o in world.objects}
    assert types == {'plane', 'box', 'sphere', 'cylinder', 'mesh', 'heightfield', 'occupancy_map'}
    # bound: float64 values read from YAML; default rtol 1e-7 absorbs only parsing rounding
    np.testing.assert_allclose(world.smoke, [[5, -2, 1, 1.5]])
    np.testing.assert_allclose(world.smoke_density, [0.6])
    names = [o.name for o in world.objects]
    # shed ridge (3.3 m), the map's pillar (2 m walls at y 14.5-15.5) and a hill sample
    hits = world.cast(*_down([[15, -8], [0, 15], [-25.5, -26.5]]), 20.0)
    # bound: 1 mm, far below the sensors' 2 cm noise
    np.testing.assert_allclose(hits.point[:, 2], [3.3, 2.0, 0.748], atol=1e-3)
    assert [names[i] for i in hits.obj] == ['shed', 'yard', 'hills']
    assert world.objects[names.index('bin')].class_id == 99     # SemanticKITTI other-object
    assert World.load(WORLDS / 'smoke_yard.yaml', PLAIN).smoke.shape == (2, 4)


def test_object_defaults_follow_the_material():
    # class: each material's SemanticKITTI class (core/class_ids.py MATERIAL_CLASS): soil 72
    # terrain, corn_leaf 70 vegetation, vehicle 10 car; a class_id given is kept.
    world = World.from_dict({'objects': [
        {'name': 'g', 'type': 'plane', 'size_m': [10, 10], 'material': 'soil'},
        {'name': 'c', 'type': 'sphere', 'radius_m': 1, 'material': 'corn_leaf'},
        {'name': 'b', 'type': 'box', 'size_m': [1, 1, 1], 'material': 'vehicle'},
        {'name': 'p', 'type': 'box', 'size_m': [1, 1, 1], 'material': 'water', 'ground': True,
         'foliage': True, 'class_id': 256}]}, materials=PLAIN)
    flags = [(o.material, o.class_id, o.foliage, o.ground) for o in world.objects]
    assert flags == [(1, 72, False, True), (7, 70, True, False), (14, 10, False, False),
                     (6, 256, True, True)]
    assert world.frame == 'map' and world.n_triangles == 2 + 2208 + 12 + 12


def test_occupancy_map_extrudes_walls_where_the_map_has_occupied_pixels(tmp_path):
    occ = np.array([[1, 1, 1, 0, 0, 1],
                    [0, 0, 0, 0, 0, 0],
                    [0, 1, 0, 1, 1, 0],
                    [1, 1, 1, 1, 1, 1]], bool)
    pixels = np.where(occ, 0, 254)
    pixels[1, 2] = 205                                   # unknown is not a wall
    world_path = _write(tmp_path, {
        'm.pgm': _pgm(pixels),
        'm.yaml': 'image: m.pgm\nresolution: 0.5\norigin: [1.0, 2.0, 0.0]\nnegate: 0\n'
                  'occupied_thresh: 0.65\nfree_thresh: 0.196\n',
        'world.yaml': 'objects:\n  - {name: map, type: occupancy_map, file: m.yaml, '
                      'wall_height_m: 1.5, material: concrete}\n'})
    world = World.load(world_path, PLAIN)
    assert world.objects[0].n_triangles == 12 * 5        # runs merged along rows
    rows, cols = np.meshgrid(np.arange(4), np.arange(6), indexing='ij')
    centers = np.stack([1.0 + (cols + 0.5) * 0.5, 2.0 + (3.5 - rows) * 0.5], -1).reshape(-1, 2)
    hits = world.cast(*_down(centers), 20.0)
    np.testing.assert_array_equal(np.sort(hits.ray), np.flatnonzero(occ.ravel()))
    # bound: vertical rays on faces z = 1.5 of exact vertices, f32 hit bound 2e-5 m << 1e-4
    np.testing.assert_allclose(hits.range_m, 8.5, atol=1e-4)


def test_occupancy_map_origin_yaw_turns_the_map_about_its_origin(tmp_path):
    pixels = np.full((1, 4), 254)
    pixels[0, 3] = 0                                     # one wall cell, 1.5-2.0 m along the row
    world_path = _write(tmp_path, {
        'm.pgm': _pgm(pixels),
        'm.yaml': f'image: m.pgm\nresolution: 0.5\norigin: [1.0, 2.0, {np.pi / 2}]\n',
        'world.yaml': 'objects:\n  - {name: map, type: occupancy_map, file: m.yaml}\n'})
    world = World.load(world_path, PLAIN)
    # yaw 90 deg: the row runs along +y from the origin, the cell centre at (1.0 - 0.25, 3.75)
    hits = world.cast(*_down([[0.75, 3.75], [2.75, 2.25]]), 20.0)
    np.testing.assert_array_equal(hits.ray, [0])
    # bound: as above, the yawed map's float64 vertices rounded once: 2e-5 m << 1e-4
    np.testing.assert_allclose(hits.range_m, 8.0, atol=1e-4)


def test_heightfield_npy_and_png_give_their_sample_heights(tmp_path):
    j, i = np.meshgrid(np.arange(5), np.arange(4))
    plane = 0.1 * j + 0.05 * i                           # linear: exact on every triangle
    png = (np.arange(20, dtype=np.uint16).reshape(4, 5) * 3000)
    o3d.io.write_image(str(tmp_path / 'h.png'), o3d.geometry.Image(png))
    world = World.load(_write(tmp_path, {
        'h.npy': plane.astype(np.float32),
        'world.yaml': 'objects:\n'
                      '  - {name: a, type: heightfield, file: h.npy, cell_m: 2.0, material: soil,'
                      ' pose: {xyz: [10, 0, 1]}}\n'
                      '  - {name: b, type: heightfield, file: h.png, cell_m: 1.0, material: mud,'
                      ' height_scale_m: 6.5535, pose: {xyz: [-10, 0, 0]}}\n'}), PLAIN)
    xy = np.array([[0.3, 0.7], [3.1, 2.2], [7.9, 5.9]])
    hits = world.cast(*_down(xy + [10, 0]), 20.0)
    # bound: f32_hit_bound_m(9 m, cos 0.99, lever 14.2 m to the far corner) = 2.2e-5 m
    np.testing.assert_allclose(hits.point[:, 2], 1.0 + 0.05 * xy[:, 0] + 0.025 * xy[:, 1],
                               atol=float(f32_hit_bound_m(9.0, 0.99, 14.2)))
    assert np.all(hits.ground)
    vertex = world.cast(*_down([[-10 + 3, 2]]), 20.0)    # sample [2, 3] = 13 * 3000 counts
    # bound: f32_hit_bound_m(10 m, 0.99, lever 15 m) = 2.4e-5 m << 1e-4
    np.testing.assert_allclose(vertex.point[:, 2], 13 * 3000 / 65535 * 6.5535, atol=1e-4)


@pytest.mark.parametrize('suffix', ['ply', 'obj', 'stl'])
def test_mesh_files_load_scaled_and_placed_by_their_origin(tmp_path, suffix):
    box = o3d.geometry.TriangleMesh.create_box(1.0, 1.0, 1.0)      # corner at the origin
    box.compute_triangle_normals()
    o3d.io.write_triangle_mesh(str(tmp_path / f'box.{suffix}'), box)
    world = World.load(_write(tmp_path, {'world.yaml': (
        f'objects:\n  - {{name: box, type: mesh, file: box.{suffix}, scale: 2.0,'
        ' pose: {xyz: [5, -1, 0]}, material: vehicle}\n')}), PLAIN)
    hits = world.cast([[0.0, 0.0, 1.0]], [[1.0, 0.0, 0.0]], 50.0)
    # bound: face x = 5 of exact vertices, ray along x: two roundings of t, 1 ulp (5e-7) << 1e-5
    np.testing.assert_allclose(hits.range_m, [5.0], atol=1e-5)
    assert world.objects[0].n_triangles == 12


GOOD_PLY = ('ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n'
            'property float z\nelement face 1\nproperty list uchar int vertex_indices\n'
            'end_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n')
MAP_WORLD = 'objects:\n  - {name: o, type: occupancy_map, file: m.yaml}\n'
BAD_INPUT = {
    'unknown top key': ({'world.yaml': 'objects: []\nlights: []\n'}, r'world\.yaml: lights:'),
    'unknown object key': ({'world.yaml': 'objects:\n  - {name: w, type: box, size_m: [1, 1, 1],'
                            ' colour: red}\n'}, r"world\.yaml: objects\[0\] 'w'\.colour: unknown"),
    'unknown pose key': ({'world.yaml': 'objects:\n  - {name: w, type: box, size_m: [1, 1, 1],'
                          ' pose: {xyz: [0, 0, 0], yaw: 3}}\n'}, r"'w'\.pose\.yaw"),
    'unknown type': ({'world.yaml': 'objects:\n  - {name: w, type: cone}\n'},
                     r'objects\[0\]\.type: unknown type'),
    'unknown material': ({'world.yaml': 'objects:\n  - {name: w, type: sphere, radius_m: 1,'
                          ' material: marble}\n'}, r"'w'\.material: unknown material 'marble'"),
    'bad size': ({'world.yaml': 'objects:\n  - {name: w, type: box, size_m: [1, 2]}\n'},
                 r"'w'\.size_m: expected a list of 3"),
    'duplicate name': ({'world.yaml': 'objects:\n  - {name: w, type: sphere, radius_m: 1}\n'
                        '  - {name: w, type: sphere, radius_m: 2}\n'},
                       r"objects\[1\]\.name: duplicate name 'w'"),
    'missing mesh file': ({'world.yaml': 'objects:\n  - {name: m, type: mesh, file: gone.ply}\n'},
                          r"'m'\.file: file '.*gone\.ply' not found"),
    'corrupt mesh file': ({'bad.ply': GOOD_PLY.replace('face 1', 'face 2') + '3 0 1 x\n',
                           'world.yaml': 'objects:\n  - {name: m, type: mesh, file: bad.ply}\n'},
                          r"'m'\.file: 'bad\.ply' cannot be read as a mesh"),
    'corrupt obj file': ({'bad.obj': b'v 0 0 zz\nf 1 2 3\n\xff\xfe',
                          'world.yaml': 'objects:\n  - {name: m, type: mesh, file: bad.obj}\n'},
                         r"'m'\.file: 'bad\.obj' cannot be read as a mesh"),
    'ply without xyz': ({'bad.ply': 'ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n'
                                    'end_header\ngarbage\n',
                         'world.yaml': 'objects:\n  - {name: m, type: mesh, file: bad.ply}\n'},
                        r"'m'\.file: 'bad\.ply' is not a valid PLY"),
    'corrupt ply header': ({'bad.ply': b'\x00\x01\x02junk',
                            'world.yaml': 'objects:\n  - {name: m, type: mesh, file: bad.ply}\n'},
                           r"'m'\.file: 'bad\.ply' is not a valid PLY"),
    'mesh without triangles': ({'pts.ply': GOOD_PLY.replace('face 1', 'face 0')[:-8],
                                'world.yaml': 'objects:\n  - {name: m, type: mesh, '
                                              'file: pts.ply}\n'},
                               r"'m'\.file: mesh 'pts\.ply' has no triangles"),
    'mesh above the triangle limit': (
        {'big.ply': GOOD_PLY.replace('face 1', 'face 9000000'),
         'world.yaml': 'objects:\n  - {name: m, type: mesh, file: big.ply}\n'},
        r"'m'\.file: 'big\.ply' has about 9000000 triangles, more than .*max_triangles 5000000"),
    'unsupported mesh format': ({'m.fbx': 'x', 'world.yaml': 'objects:\n  - {name: m, type: mesh,'
                                 ' file: m.fbx}\n'}, r"'m'\.file: unsupported mesh format"),
    'heightfield wrong shape': ({'h.npy': np.zeros(7), 'world.yaml': 'objects:\n  - {name: h, '
                                 'type: heightfield, file: h.npy, cell_m: 1}\n'},
                                r"'h'\.file: 'h\.npy' has shape \(7,\)"),
    'corrupt heightfield': ({'h.npy': b'not numpy', 'world.yaml': 'objects:\n  - {name: h, '
                             'type: heightfield, file: h.npy, cell_m: 1}\n'},
                            r"'h'\.file: 'h\.npy' cannot be read"),
    'map yaml without image': ({'m.yaml': 'resolution: 0.1\norigin: [0, 0, 0]\n',
                                'world.yaml': MAP_WORLD},
                               r"m\.yaml \(map of .*world\.yaml objects\[0\] 'o'\): image: "
                               'missing'),
    'map image missing': ({'m.yaml': 'image: nope.pgm\nresolution: 0.1\norigin: [0, 0, 0]\n',
                           'world.yaml': MAP_WORLD},
                          r"m\.yaml \(map of .*\): image\.file: file '.*nope\.pgm' not found"),
    'map negate not 0 or 1': ({'m.yaml': 'image: m.pgm\nresolution: 0.1\norigin: [0, 0, 0]\n'
                                         'negate: 2\n', 'world.yaml': MAP_WORLD},
                              r'm\.yaml \(map of .*\): negate: expected 0 or 1'),
    'binary map yaml': ({'m.yaml': b'\x00\x01', 'world.yaml': MAP_WORLD},
                        r'm\.yaml: file: binary content'),
    'empty file': ({'world.yaml': '\n  \n'}, r'world\.yaml: file: the file is empty'),
    'binary file': ({'world.yaml': b'\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR'},
                    r'world\.yaml: file: binary content'),
    'yaml syntax error': ({'world.yaml': 'objects: [\n  {name: a\n'},
                          r'world\.yaml: line \d+: YAML syntax error'),
    'not a mapping': ({'world.yaml': '- a\n- b\n'}, r'world\.yaml: file: expected a mapping'),
    'bad smoke density': ({'world.yaml': 'smoke:\n  - {center: [0, 0, 0], radius_m: 1, '
                           'density: 2}\n'}, r'world\.yaml: smoke\[0\]\.density: expected 0-1'),
}


@pytest.mark.parametrize('case', list(BAD_INPUT))
def test_bad_world_input_raises_one_line_world_error_naming_file_and_key(tmp_path, case):
    files, pattern = BAD_INPUT[case]
    with pytest.raises(WorldError, match=pattern) as info:
        World.load(_write(tmp_path, files), PLAIN)
    assert '\n' not in str(info.value)


def test_obj_above_max_triangles_is_refused_from_its_face_lines(tmp_path):
    faces = 'v 0 0 0\nv 1 0 0\nv 0 1 0\n' + 'f 1 2 3\n' * 2000
    world_path = _write(tmp_path, {'m.obj': faces, 'world.yaml': 'objects:\n  - {name: m, '
                                   'type: mesh, file: m.obj}\n'})
    pattern = r"'m\.obj' has about 2000 triangles, .*max_triangles 1000"
    with pytest.raises(WorldError, match=pattern):
        World.load(world_path, PLAIN, max_triangles=1000)
    assert World.load(world_path, PLAIN, max_triangles=2000).n_triangles == 2000


def test_world_above_max_triangles_is_refused_before_the_scene_is_built():
    spheres = [{'name': f's{k}', 'type': 'sphere', 'radius_m': 1.0} for k in range(3)]
    pattern = r"<dict>: objects\[2\] 's2': world exceeds max_triangles"
    with pytest.raises(WorldError, match=pattern):
        World.from_dict({'objects': spheres}, materials=PLAIN, max_triangles=5000)


def test_demo_world_loads_fast_and_contains_every_material():
    start = time.perf_counter()
    world = World.load('demo', PLAIN)
    assert time.perf_counter() - start < 3.0
    # Every outdoor material (those before snow, which weather lays on the ground); the indoor
    # ones after snow are those of SDF models (glass, wood, ...: core/world/sdf/name_rules.py).
    assert {o.material for o in world.objects} == set(range(MATERIAL_NAMES.index('snow')))
    assert World.load('demo', PLAIN).n_triangles == world.n_triangles      # deterministic


def test_demo_world_keeps_the_loop_ring_clear_of_obstacles():
    world = World.load('demo', PLAIN)
    r, a = np.meshgrid(np.linspace(9.0, 15.0, 13), np.radians(np.arange(0, 360, 2.0)))
    hits = world.cast(*_down(np.stack([r * np.cos(a), r * np.sin(a)], -1)), 20.0)
    assert len(hits) == r.size
    assert np.all(hits.ground) and np.all(hits.point[:, 2] < 0.02)


def test_flat_world_is_a_grass_plane_at_zero():
    world = World.load('flat', PLAIN)
    hits = world.cast(*_down([[0, 0], [99, -99], [-99.5, 50]]), 20.0)
    # bound: plane z = 0 of exact vertices, vertical ray: T, denominator exact, t = 10 exactly
    np.testing.assert_allclose(hits.point[:, 2], 0.0, atol=1e-6)
    assert np.all(hits.material == MATERIAL_NAMES.index('grass')) and world.frame == 'map'


def test_materials_file_goes_through_the_same_yaml_reader(tmp_path):
    path = tmp_path / 'mat.yaml'
    path.write_bytes(b'soil: {reflectivity: 0.3}\n\xff\xfe')
    with pytest.raises(ConfigError, match=r'materials_file: got .*mat\.yaml.*not UTF-8 text'):
        MaterialTable.load(path)
    path.write_text('  \n')
    assert MaterialTable.load(path).to_dict() == MaterialTable.load().to_dict()


def test_load_for_config_applies_the_materials_file(tmp_path):
    path = tmp_path / 'mat.yaml'
    path.write_text('soil: {reflectivity: 0.5}\n')
    world, materials = load_for_config(LidarConfig(materials_file=str(path)))
    soil = MATERIAL_NAMES.index('soil')
    assert world.materials is materials and materials.reflectivity[soil] == 0.5
    assert materials_for_config(TerrainConfig()).reflectivity[soil] != 0.5
