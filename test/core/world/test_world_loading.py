"""One loading function (load_for_config), its registered world loaders and the caster choice."""

import json

import numpy as np
import pytest

from ubot_lidar_sim.cli import main
from ubot_lidar_sim.core.config import from_dict, LaserScanConfig, LidarConfig, TerrainConfig
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.motion.config import BaseSimConfig
from ubot_lidar_sim.core.raycast.casters import caster_factory, CASTERS
from ubot_lidar_sim.core.raycast.embree_caster import EmbreeCaster
from ubot_lidar_sim.core.raycast.open3d_caster import Open3dCaster
from ubot_lidar_sim.core.resources import config_path
from ubot_lidar_sim.core.world import sources
from ubot_lidar_sim.core.world.world import load_for_config, World, world_key


def test_loaders_are_tried_builtin_sdf_occupancy_then_yaml():
    assert [loader.name for loader in sources.LOADERS] == ['builtin', 'sdf', 'occupancy', 'yaml']


def test_a_map_server_yaml_is_a_world_of_its_walls():
    path = config_path('worlds') / 'maps' / 'yard.yaml'
    world = World.load(path)
    assert [o.type for o in world.objects] == ['occupancy_map']
    assert world.objects[0].name == 'yard'
    assert world.files[0] == path


def test_every_node_config_reads_caster_and_sdf_geometry_with_one_default():
    for cls in (LidarConfig, LaserScanConfig, TerrainConfig, BaseSimConfig):
        cfg = cls()
        assert (cfg.caster, cfg.sdf_geometry) == ('open3d', 'visual'), cls.__name__


def test_an_unknown_caster_names_the_parameter_and_the_choices():
    with pytest.raises(ConfigError, match='caster'):
        from_dict(LaserScanConfig, {'caster': 'optix'})
    with pytest.raises(ConfigError, match='open3d or embree'):
        caster_factory('optix')


@pytest.mark.parametrize('name', sorted(CASTERS))
def test_load_for_config_builds_the_chosen_caster(name):
    cfg = from_dict(LaserScanConfig, {'world_file': 'flat', 'caster': name})
    world, _ = load_for_config(cfg, cast_threads=1)
    assert isinstance(world.caster, {'open3d': Open3dCaster, 'embree': EmbreeCaster}[name])
    assert world.caster.threads == 1
    # straight down from 1 m onto the flat world's ground at z = 0
    hits = world.cast(np.array([[0.0, 0.0, 1.0]]), np.array([[0.0, 0.0, -1.0]]), 10.0)
    # bound: float32 geometry and rays, 1 ulp of 1 m
    np.testing.assert_allclose(hits.range_m, [1.0], atol=1e-6)


def test_world_key_changes_with_each_world_parameter():
    base = from_dict(LidarConfig, {})
    keys = {world_key(base)}
    for change in ({'world_file': 'demo'}, {'sdf_geometry': 'collision'},
                   {'model_paths': ['/tmp']}, {'caster': 'embree'}):
        keys.add(world_key(from_dict(LidarConfig, change)))
    assert len(keys) == 5


def test_scan_set_caster_embree_gives_open3ds_ranges_within_float32_rounding(tmp_path):
    ranges = {}
    for caster in CASTERS:
        out = tmp_path / f'{caster}.json'
        assert main(['scan', '--sensor', 'laser_scan', '--world', 'demo', '--pose', '12', '0',
                     '0.5', '0', '0', '90', '--set', f'caster={caster}', '--out', str(out)]) == 0
        ranges[caster] = np.asarray(json.loads(out.read_text())['ranges'], np.float64)
    hit = np.isfinite(ranges['open3d']) & np.isfinite(ranges['embree'])
    # a ray grazing an edge within float32 rounding may hit in one caster only: a few at most
    assert hit.sum() > 100
    assert np.sum(np.isfinite(ranges['open3d']) != np.isfinite(ranges['embree'])) <= 2
    # bound: two float32 casts of float32 triangles, a few ulp of ranges below 100 m (~1e-5 m)
    np.testing.assert_allclose(ranges['embree'][hit], ranges['open3d'][hit], atol=1e-4)
