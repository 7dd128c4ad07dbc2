"""
config/nav2_params_example.yaml under Nav2's own rules: a laser and a LiDAR point are marked.

The rules and defaults are those of ros-navigation/navigation2, branch kilted (FILE:LINE below;
jazzy has the same rules a few lines apart): nav2_costmap_2d's observation buffer, obstacle and
voxel layers, the collision monitor's sources, nav2_util's cmd_vel type. Nav2 itself is not
installable here (PyPI wheels), so its rules are written out and applied to the YAML's values.
"""

import math
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = yaml.safe_load((ROOT / 'config' / 'nav2_params_example.yaml').read_text())
BASE = yaml.safe_load((ROOT / 'config' / 'base_sim.yaml').read_text())['/**/base_sim'][
    'ros__parameters']
LASER = yaml.safe_load((ROOT / 'config' / 'laser_scan.yaml').read_text())['/**/laser_scan'][
    'ros__parameters']

# nav2_costmap_2d/plugins/obstacle_layer.cpp:136-176 (a source's parameters and defaults).
SOURCE_DEFAULTS = {'min_obstacle_height': 0.0, 'max_obstacle_height': 0.0,
                   'obstacle_max_range': 2.5, 'obstacle_min_range': 0.0,
                   'raytrace_max_range': 3.0, 'raytrace_min_range': 0.0,
                   'inf_is_valid': False, 'data_type': 'LaserScan', 'sensor_frame': ''}
# obstacle_layer.cpp:87-88, voxel_layer.cpp:67-68 (the layer's own height band).
LAYER_DEFAULTS = {'min_obstacle_height': 0.0, 'max_obstacle_height': 2.0}
# voxel_layer.cpp:69-71 (the voxel grid's height).
VOXEL_DEFAULTS = {'origin_z': 0.0, 'z_voxels': 10, 'z_resolution': 0.2}
# nav2_costmap_2d/src/costmap_2d_ros.cpp:107-120.
COSTMAP_DEFAULTS = {'global_frame': 'map', 'robot_base_frame': 'base_link', 'width': 5,
                    'height': 5, 'rolling_window': False}
INF_EPSILON_M = 1e-4        # obstacle_layer.cpp:403: +inf becomes range_max - 1e-4 m
DATA_TYPES = {'LaserScan': 'laser', 'PointCloud2': 'lidar'}


def costmap_marks(kind, layer, source, origin, point):
    """
    Return '' when Nav2 marks point (x, y, z in the costmap's global frame) seen from origin.

    Otherwise the rule that drops it. kind: 'voxel' or 'obstacle'; layer, source: the YAML's
    parameters (defaults filled in from Nav2's declarations above).
    """
    src = {**SOURCE_DEFAULTS, **source}
    lay = {**LAYER_DEFAULTS, **VOXEL_DEFAULTS, **layer}
    z = point[2]
    # src/observation_buffer.cpp:143-144: the source's band, z in global_frame (:116).
    if not src['min_obstacle_height'] <= z <= src['max_obstacle_height']:
        return (f"observation buffer: z {z} outside [{src['min_obstacle_height']}, "
                f"{src['max_obstacle_height']}]")
    # obstacle_layer.cpp:501-510, voxel_layer.cpp:200-208: the layer's band.
    if z < lay['min_obstacle_height'] or z > lay['max_obstacle_height']:
        return f"layer: z {z} outside [{lay['min_obstacle_height']}, {lay['max_obstacle_height']}]"
    # obstacle_layer.cpp:513-527, voxel_layer.cpp:210-222: 3D distance from the sensor.
    dist_sq = sum((p - o) ** 2 for p, o in zip(point, origin))
    if dist_sq >= src['obstacle_max_range'] ** 2 or dist_sq < src['obstacle_min_range'] ** 2:
        return f'range: {math.sqrt(dist_sq):.3f} m outside obstacle ranges'
    # voxel_layer.cpp:227-233 and voxel_layer.hpp:179-187: mz = (z - origin_z) / z_resolution
    # must be < z_voxels (z below origin_z is marked at origin_z).
    if kind == 'voxel' and z >= lay['origin_z'] and int(
            (z - lay['origin_z']) / lay['z_resolution']) >= lay['z_voxels']:
        return f'voxel grid: z {z} above origin_z + z_voxels x z_resolution'
    return ''


def _mount(name):
    """Return (x, y, z) of base_sim's sensor mount name ('laser' or 'lidar') over the ground."""
    x, y, z = BASE[f'{name}_pose'][:3]
    return (x, y, z + BASE['base_height_m'])


def _layers(costmap):
    """Yield (kind, layer parameters) of a costmap's obstacle and voxel layers."""
    params = EXAMPLE[costmap][costmap]['ros__parameters']
    for name in params['plugins']:
        layer = params[name]
        kind = {'nav2_costmap_2d::VoxelLayer': 'voxel',
                'nav2_costmap_2d::ObstacleLayer': 'obstacle'}.get(layer['plugin'])
        if kind:
            yield kind, layer


def _sources(layer):
    """Return {source name: parameters} of a layer ('observation_sources' is space separated)."""
    return {s: layer[s] for s in layer['observation_sources'].split()}


def test_under_nav2_defaults_the_laser_at_0_3_m_marks_nothing():
    # The example before: a scan source without heights keeps z in [0, 0] only.
    why = costmap_marks('obstacle', {}, {'obstacle_max_range': 25.0}, _mount('laser'),
                        (2.3, 0.0, _mount('laser')[2]))
    assert why.startswith('observation buffer') and _mount('laser')[2] == 0.3


@pytest.mark.parametrize('costmap', ['local_costmap', 'global_costmap'])
def test_a_point_at_the_lasers_and_at_the_lidars_height_is_marked_in_each_costmap(costmap):
    laser, lidar = _mount('laser'), _mount('lidar')
    ahead = 2.0     # m in front of the sensor: inside the local costmap's 3 m half-width
    seen = set()
    for kind, layer in _layers(costmap):
        for name, source in _sources(layer).items():
            sensor = DATA_TYPES[source['data_type']]
            origin = laser if sensor == 'laser' else lidar
            # The laser sees its own plane; the LiDAR sees both heights.
            heights = [laser[2]] if sensor == 'laser' else [laser[2], lidar[2]]
            for z in heights:
                point = (origin[0] + ahead, origin[1], z)
                assert costmap_marks(kind, layer, source, origin, point) == '', (costmap, name)
                seen.add((sensor, z))
            # Every mark can be cleared again; a scan's +inf never marks (obstacle_layer.cpp
            # :403-408 turns it into range_max - 1e-4 m).
            assert source['raytrace_max_range'] >= source['obstacle_max_range']
            if sensor == 'laser' and source.get('inf_is_valid'):
                assert LASER['max_range_m'] - INF_EPSILON_M >= source['obstacle_max_range']
    assert seen == {('laser', laser[2]), ('lidar', laser[2]), ('lidar', lidar[2])}


@pytest.mark.parametrize('costmap', ['local_costmap', 'global_costmap'])
def test_the_ground_under_the_robot_is_not_marked(costmap):
    for kind, layer in _layers(costmap):
        for name, source in _sources(layer).items():
            origin = _mount(DATA_TYPES[source['data_type']])
            assert costmap_marks(kind, layer, source, origin, (2.0, 0.0, 0.0)), (costmap, name)


def test_the_collision_monitor_sees_what_the_base_collides_with_in_base_footprint():
    cm = EXAMPLE['collision_monitor']['ros__parameters']
    # nav2_collision_monitor/src/collision_monitor_node.cpp:251-253: default base_footprint.
    assert cm.get('base_frame_id', 'base_footprint') == BASE['footprint_frame']
    assert cm['cmd_vel_out_topic'] == 'cmd_vel'
    for name in cm['observation_sources']:
        src = cm[name]
        if src.get('type', 'scan') == 'pointcloud':
            # src/pointcloud.cpp:129-135: kept when min_height <= z <= max_height, z in
            # base_frame_id (use_global_height false); defaults 0.05 and 0.5 (:150-155).
            lo, hi = src.get('min_height', 0.05), src.get('max_height', 0.5)
            assert lo <= BASE['ground_clearance_m'] and hi >= BASE['body_height_m']
            assert lo <= _mount('laser')[2] <= hi


def test_every_velocity_node_uses_base_sims_cmd_vel_type_and_limits():
    nodes = [n for n, block in EXAMPLE.items() if 'ros__parameters' in block
             and 'enable_stamped_cmd_vel' in block['ros__parameters']]
    assert {'controller_server', 'velocity_smoother', 'collision_monitor'} <= set(nodes)
    for n in nodes:
        assert EXAMPLE[n]['ros__parameters']['enable_stamped_cmd_vel'] == \
            BASE['cmd_vel_stamped'], n
    smoother = EXAMPLE['velocity_smoother']['ros__parameters']
    assert smoother['max_velocity'][0] == BASE['max_linear_m_s']
    assert smoother['max_velocity'][2] == BASE['max_angular_rad_s']
    assert smoother['max_accel'][0] == BASE['max_linear_accel_m_s2']
    for costmap in ('local_costmap', 'global_costmap'):
        assert EXAMPLE[costmap][costmap]['ros__parameters']['robot_radius'] == \
            BASE['footprint_radius_m']
