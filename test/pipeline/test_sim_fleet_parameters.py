"""sim.launch.py's fleet (issue 50): each robot's base_sim and sensor parameters."""

from ubot_lidar_sim.core.config import flat_fields, LaserScanConfig, LidarConfig, TerrainConfig
from ubot_lidar_sim.core.motion.config import BaseSimConfig
from ubot_lidar_sim.pipeline.fleet import MAX_ROBOTS
from ubot_lidar_sim.pipeline.sim_fleet import robot_nodes, SENSOR_TOPICS, start_poses

CONFIGS = {'base_sim': BaseSimConfig, 'lidar_3d': LidarConfig, 'laser_scan': LaserScanConfig,
           'terrain_sensor': TerrainConfig}


def _fleet(n, sim_time=True):
    poses = start_poses(n)
    return {k: {name: (ns, params) for _, name, ns, params in
                robot_nodes(k, n, poses[k - 1], sim_time)} for k in range(1, n + 1)}


def test_every_value_is_a_parameter_its_config_accepts():
    for nodes in _fleet(MAX_ROBOTS).values():
        for name, (_, params) in nodes.items():
            fields = {f.name for f in flat_fields(CONFIGS[name])}
            values = {k: v for k, v in params.items() if k != 'use_sim_time'}
            assert set(values) <= fields, name
            CONFIGS[name](**{k: tuple(v) if isinstance(v, list) else v
                             for k, v in values.items()})


def test_robot_k_has_namespace_robotk_and_its_frames_under_robotk():
    for k, nodes in _fleet(3).items():
        base = nodes['base_sim'][1]
        assert {ns for ns, _ in nodes.values()} == {f'robot{k}'}
        assert (base['odom_frame'], base['footprint_frame'], base['base_frame']) == \
            (f'robot{k}/odom', f'robot{k}/base_footprint', f'robot{k}/base_link')
        assert base['lidar_frame'] == nodes['lidar_3d'][1]['frame_id'] == f'robot{k}/lidar_3d'
        assert base['laser_frame'] == nodes['laser_scan'][1]['frame_id'] == f'robot{k}/laser'
        assert nodes['terrain_sensor'][1]['base_frame'] == base['base_frame']


def test_one_clock_robot_1s_waiting_for_every_robots_sensors_the_others_follow_it():
    fleet = _fleet(3)
    bases = [fleet[k]['base_sim'][1] for k in (1, 2, 3)]
    assert [b['publish_clock'] for b in bases] == [True, False, False]
    assert all(b['use_sim_time'] for b in bases)
    assert bases[0]['sync_topics'] == [f'/robot{k}/{t}' for k in (1, 2, 3)
                                       for t in SENSOR_TOPICS]
    assert all(n[1]['use_sim_time'] for nodes in fleet.values() for n in nodes.values())
    # Wall clock: nobody publishes /clock.
    assert not any(nodes['base_sim'][1]['publish_clock'] for nodes in _fleet(3, False).values())


def test_each_robots_sensors_draw_the_others_footprints_as_the_bases_body():
    body = BaseSimConfig()
    for k, nodes in _fleet(3).items():
        for name in ('lidar_3d', 'laser_scan', 'terrain_sensor'):
            params = nodes[name][1]
            assert params['fleet_frames'] == [f'robot{j}/base_footprint' for j in (1, 2, 3)
                                              if j != k]
            assert params['fleet_base_height_m'] == 0.0     # base_footprint is on the ground
            assert params['fleet_body_size_m'] == [2 * body.footprint_radius_m,
                                                   2 * body.footprint_radius_m,
                                                   body.body_height_m]


def test_start_poses_are_4_m_apart_to_the_left_and_one_robot_keeps_plain_names():
    assert start_poses(3) == [[0.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 8.0, 0.0]]
    nodes = robot_nodes(1, 1, None, True)
    assert {ns for _, _, ns, _ in nodes} == {''}
    base = nodes[0][3]
    assert base == {'use_sim_time': True, 'publish_clock': True}
    assert all(set(p) == {'use_sim_time'} for _, _, _, p in nodes[1:])
