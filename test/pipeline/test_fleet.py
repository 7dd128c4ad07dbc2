"""The demo fleet (issue 28): each robot's parameters, as the runner and launch files set them."""


import pytest

from ubot_lidar_sim.core.config import flat_fields, LaserScanConfig, LidarConfig, TerrainConfig
from ubot_lidar_sim.pipeline import run as runner
from ubot_lidar_sim.pipeline.fleet import check_robots, MAX_ROBOTS, robot_parameters
from ubot_lidar_sim.ros.demo.scenario import DemoDriverConfig

CONFIGS = {'lidar_3d': LidarConfig, 'laser_scan': LaserScanConfig,
           'terrain_sensor': TerrainConfig, 'demo_driver': DemoDriverConfig}


def test_each_robot_sees_the_others_from_its_own_frames_on_its_own_loop():
    fleet = [robot_parameters(k, 3) for k in (1, 2, 3)]
    for k, params in enumerate(fleet, 1):
        for node, values in params.items():
            fields = {f.name for f in flat_fields(CONFIGS[node])}
            assert set(values) <= fields, node
            if node != 'demo_driver':
                others = [f'robot{j}/base_link' for j in (1, 2, 3) if j != k]
                assert values['fleet_frames'] == others
        driver = params['demo_driver']
        assert driver['base_frame'] == params['terrain_sensor']['base_frame'] \
            == f'robot{k}/base_link'
        assert driver['lidar_frame'] == params['lidar_3d']['frame_id']
        assert driver['laser_frame'] == params['laser_scan']['frame_id']
        # Every value passes its config's checks.
        for node, values in params.items():
            CONFIGS[node](**values)
    assert len({p['demo_driver']['loop_radius_m'] for p in fleet}) == 3


@pytest.mark.parametrize('n', [0, MAX_ROBOTS + 1, True, 2.0])
def test_a_robot_count_outside_1_to_max_is_refused(n, capsys):
    with pytest.raises(ValueError, match='robots'):
        check_robots(n)
    if isinstance(n, int) and not isinstance(n, bool):
        assert runner.main(['--robots', str(n), '--seconds', '1']) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith('run: robots: got') and '\n' not in err
