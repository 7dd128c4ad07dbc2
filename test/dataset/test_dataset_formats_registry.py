"""The sequence formats of dataset and scan, registered in dataset/formats.py SEQUENCE_FORMATS."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from ubot_lidar_sim.cli import main
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.dataset import formats
from ubot_lidar_sim.dataset.arguments import FORMATS
from ubot_lidar_sim.output.atomic import atomic_write


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


# --- scan --format NAME: a sequence format with scan_sensors, reached through the registry -----

def _probe_sink(args):
    """Return a sink writing DIR/probe_NN.txt: one 'kind index' line per frame it was given."""
    lines = []

    class Probe:
        def add(self, frame):
            lines.append(f'{frame.sensor.kind} {frame.index}\n')

        def close(self):
            name = f'probe_{args.seq_index:02d}.txt'
            atomic_write(args.out_dir / name, lambda tmp: Path(tmp).write_text(''.join(lines)))
            return [name]
    return Probe()


def _one_digit(number, name):
    if not 0 <= number <= 9:
        raise ConfigError(name, number, 'a probe sequence number 0-9')


def _not_locked(out_dir, number, key, name='--out'):
    if (Path(out_dir) / 'locked').exists():
        raise ConfigError(name, str(out_dir), 'a directory without a lock')


def _shared(out_dir, options, numbers):
    atomic_write(Path(out_dir) / 'probe_shared.txt',
                 lambda tmp: Path(tmp).write_text(f'{list(numbers)} {options.label_map}\n'))
    return ['probe_shared.txt']


@pytest.fixture()
def probe(monkeypatch):
    """Register a 'probe' format for scan --sensor laser_scan (cli/scan.py is not touched)."""
    monkeypatch.setattr(formats, 'SEQUENCE_FORMATS', dict(formats.SEQUENCE_FORMATS))
    formats.register_format('probe', _probe_sink, needs_lidar=False, check_number=_one_digit,
                            check_free=_not_locked, write_shared=_shared,
                            scan_sensors=('laser_scan',))


def _scan(capsys, out, *extra):
    rc = main(['scan', '--world', 'flat', '--out', str(out), *extra])
    got = capsys.readouterr()
    return rc, got.out, got.err


def test_scan_offers_the_registered_scan_formats_and_only_them(tmp_path, capsys):
    assert list(formats.scan_formats()) == ['semantickitti']
    assert formats.scan_formats()['semantickitti'].scan_sensors == ('lidar_3d',)
    rc, _, err = _scan(capsys, tmp_path / 'k', '--format', 'pcd')     # a dataset format only
    assert rc == 2
    assert err.endswith("--format: got 'pcd', allowed 'semantickitti' (the file formats take "
                        "their name from --out's extension)\n"), err


def test_a_format_registered_for_scan_is_written_by_scan_through_its_sink(tmp_path, capsys,
                                                                          probe):
    out = tmp_path / 'p'
    rc, stdout, _ = _scan(capsys, out, '--sensor', 'laser_scan', '--format', 'probe',
                          '--sequence', '7', '--frames', '2', '--label-map', 'semantickitti')
    assert rc == 0
    assert stdout.splitlines() == [str(out / 'probe_07.txt'), str(out / 'probe_shared.txt')]
    assert (out / 'probe_07.txt').read_text() == 'laser_scan 0\nlaser_scan 1\n'
    assert (out / 'probe_shared.txt').read_text() == '[7] semantickitti\n'
    rc, _, err = _scan(capsys, tmp_path / 'k', '--format', 'kitti')
    assert rc == 2 and "allowed 'semantickitti' or 'probe' (" in err, err


@pytest.mark.parametrize('extra, locked, line', [
    (['--sensor', 'lidar_3d'], False,
     "--sensor: got 'lidar_3d', allowed laser_scan with --format probe"),
    (['--sensor', 'laser_scan', '--sequence', '10'], False,
     '--sequence: got 10, allowed a probe sequence number 0-9'),
    (['--sensor', 'laser_scan'], True, 'allowed a directory without a lock'),
])
def test_scan_refuses_on_one_line_by_the_registered_formats_rules(tmp_path, capsys, probe,
                                                                  extra, locked, line):
    out = tmp_path / 'p'
    if locked:
        out.mkdir()
        (out / 'locked').write_text('')
    rc, stdout, err = _scan(capsys, out, '--format', 'probe', *extra)
    assert rc == 2 and stdout == '' and err.count('\n') == 1 and line in err, err
    assert not (out / 'probe_00.txt').exists() and not (out / 'probe_shared.txt').exists()
