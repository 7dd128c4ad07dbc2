"""The dataset's formats, registered in one table (dataset/formats.py SEQUENCE_FORMATS)."""

from types import SimpleNamespace

import pytest

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.dataset import formats
from ubot_lidar_sim.dataset.arguments import FORMATS


def test_the_help_lists_every_registered_format():
    assert set(formats.SEQUENCE_FORMATS) == set(FORMATS)


@pytest.mark.parametrize('name', ['semantickitti', 'pcd', 'kitti_object', 'openpcdet'])
def test_a_format_of_lidar_sweeps_is_refused_for_a_rig_without_a_lidar(name):
    laser = SimpleNamespace(kind='laser_scan')
    with pytest.raises(ConfigError, match=name):
        formats.check_rig(('mcap', name), [laser])
    formats.check_rig(('mcap',), [laser])      # the MCAP takes any rig


def test_a_registered_format_gets_its_sink_and_only_when_asked_for(monkeypatch, tmp_path):
    monkeypatch.setattr(formats, 'SEQUENCE_FORMATS', dict(formats.SEQUENCE_FORMATS))
    made = []
    formats.register_format('probe', lambda args: made.append(args.seq_name) or 'sink')
    got = formats.sinks(('mcap', 'probe'), tmp_path, 3, 'seq_0003', [], 'key')
    assert got == {'probe': 'sink'} and made == ['seq_0003']
    assert formats.sinks(('mcap',), tmp_path, 3, 'seq_0003', [], 'key') == {}
