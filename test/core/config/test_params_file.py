"""One parameter-file rule for ``scan --params`` and ``run --params`` (docs/parameters.md)."""

from pathlib import Path
import re

import numpy as np
import pytest

from ubot_lidar_sim.cli import effective_config, main
from ubot_lidar_sim.core.config.params_file import key_applies, load_blocks, read_params_file
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.pipeline.run import _DEFAULTS, node_parameters

PAGE = Path(__file__).resolve().parents[3] / 'docs' / 'parameters.md'


def readme_two_sensor_file():
    """Return the YAML of the docs' parameter-file example (the block after its intro)."""
    text = PAGE.read_text(encoding='utf-8')
    section = text[text.index('## Parameter files (`--params`)'):]
    return re.search(r'```yaml\n(.*?)```', section, re.S).group(1)


@pytest.fixture()
def write(tmp_path):
    def write(text, name='params.yaml'):
        path = tmp_path / name
        path.write_text(text)
        return str(path)
    return write


def block(key, **params):
    """Return one YAML block: key with its ros__parameters."""
    return f'{key}:\n  ros__parameters:\n' + ''.join(f'    {k}: {v}\n' for k, v in params.items())


@pytest.mark.parametrize('key, applies', [
    ('lidar_3d', True), ('/lidar_3d', True), ('/robot1/lidar_3d', True),
    ('/robot1/front/lidar_3d', True), ('/**', True), ('/**/lidar_3d', True),
    ('laser_scan', False), ('/**/laser_scan', False), ('/lidar_3d/laser_scan', False),
    ('lidar_3d_front', False), ('/robot1/**', False)])
def test_which_node_keys_apply_to_lidar_3d(key, applies):
    assert key_applies(key, 'lidar_3d') is applies


def test_the_readme_two_sensor_file_works_for_scan_of_either_sensor_and_for_run(
        write, tmp_path, capsys):
    path = write(readme_two_sensor_file())
    lidar = effective_config('lidar_3d', path)
    assert (lidar.world_file, lidar.channels, lidar.horizontal_samples) == ('flat', 4, 90)
    laser = effective_config('laser_scan', path)
    assert (laser.world_file, laser.resolution_deg) == ('flat', 2.0)

    out = tmp_path / 'cloud.npz'
    assert main(['scan', '--sensor', 'lidar_3d', '--params', path, '--out', str(out)]) == 0
    assert set(np.load(out)['ring'].tolist()) <= {0, 1, 2, 3}
    assert main(['scan', '--sensor', 'laser_scan', '--params', path,
                 '--out', str(tmp_path / 'scan.json')]) == 0
    capsys.readouterr()

    run = node_parameters(path)
    assert run['lidar_3d']['channels'] == 4 and run['lidar_3d']['world_file'] == 'flat'
    assert run['laser_scan']['resolution_deg'] == 2.0 and 'channels' not in run['laser_scan']
    assert run['terrain_sensor']['world_file'] == 'flat'


def test_a_file_for_laser_scan_only_is_refused_for_lidar_3d_in_one_line(write, tmp_path, capsys):
    path = write(block('/**/laser_scan', resolution_deg=2.0))
    assert main(['scan', '--sensor', 'lidar_3d', '--params', path,
                 '--out', str(tmp_path / 'x.npz')]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1
    assert 'a file with a block for lidar_3d' in err and '/**/laser_scan' in err
    assert not (tmp_path / 'x.npz').exists()
    assert effective_config('laser_scan', path).resolution_deg == 2.0
    # run: the other nodes get nothing from it, only their defaults.
    run = node_parameters(path)
    assert run['lidar_3d'] == _DEFAULTS['lidar_3d']
    assert run['laser_scan'] == {**_DEFAULTS['laser_scan'], 'resolution_deg': 2.0}


def test_an_empty_file_applies_nothing(write):
    path = write('')
    assert load_blocks(path) == []
    with pytest.raises(ConfigError, match='a file with a block for lidar_3d.*keys: none'):
        read_params_file(path, 'lidar_3d')
    assert node_parameters(path)['laser_scan'] == _DEFAULTS['laser_scan']


def test_blocks_merge_in_file_order_so_a_later_wildcard_wins(write):
    specific_first = write(block('lidar_3d', channels=4, rate_hz=5.0)
                           + block('/**', channels=8), 'a.yaml')
    assert read_params_file(specific_first, 'lidar_3d') == {'channels': 8, 'rate_hz': 5.0}
    assert read_params_file(specific_first, 'laser_scan') == {'channels': 8}
    wildcard_first = write(block('/**', channels=8, rate_hz=5.0)
                           + block('/**/lidar_3d', channels=4)
                           + block('/robot1/lidar_3d', rate_hz=7.0), 'b.yaml')
    assert read_params_file(wildcard_first, 'lidar_3d') == {'channels': 4, 'rate_hz': 7.0}
    for path in (specific_first, wildcard_first):
        run = node_parameters(path)
        for sensor in ('lidar_3d', 'laser_scan'):
            assert run[sensor] == {**_DEFAULTS[sensor], **read_params_file(path, sensor)}


def test_a_wildcard_only_file_applies_to_every_sensor(write):
    path = write(block('/**', world_file='flat', seed=3))
    for sensor in ('lidar_3d', 'laser_scan', 'terrain_sensor'):
        cfg = effective_config(sensor, path)
        assert (cfg.world_file, cfg.seed) == ('flat', 3)


def test_a_file_of_the_wrong_shape_is_refused_naming_it(write):
    with pytest.raises(ConfigError, match=r'params: got .*list\.yaml.*a mapping'):
        load_blocks(write('- lidar_3d\n', 'list.yaml'))
    with pytest.raises(ConfigError, match=r'lidar_3d: ros__parameters: \{name: value\}'):
        load_blocks(write('lidar_3d:\n  ros__parameters: [1, 2]\n', 'bad.yaml'))
