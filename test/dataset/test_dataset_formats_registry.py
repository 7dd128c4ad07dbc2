"""The sequence formats of dataset and scan, registered in dataset/formats.py SEQUENCE_FORMATS."""

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from ubot_lidar_sim.cli import main
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.dataset import formats, runner, spec as spec_mod
from ubot_lidar_sim.dataset.arguments import FORMATS, SCAN_FORMATS
from ubot_lidar_sim.output.atomic import atomic_write
from ubot_lidar_sim.pipeline import writers


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


# --- the dataset spec and runner: a format's limit, lidar rule and paths, through the registry --

def test_scan_help_names_the_registered_scan_formats_with_their_sensors_and_numbers():
    assert set(SCAN_FORMATS) == set(formats.scan_formats())
    for name, (gets, numbers) in SCAN_FORMATS.items():
        fmt = formats.scan_formats()[name]
        assert all(sensor in gets for sensor in fmt.scan_sensors), gets
        low, high = (int(n) for n in numbers.split('-'))
        fmt.check_number(low, '--sequence')
        fmt.check_number(high, '--sequence')
        for outside in (low - 1, high + 1):
            with pytest.raises(ConfigError, match='--sequence'):
                fmt.check_number(outside, '--sequence')


@pytest.fixture()
def probe_of_dataset(monkeypatch):
    """Register a 'probe' dataset format of at most 2 sequences (spec.py, runner.py untouched)."""
    monkeypatch.setattr(formats, 'SEQUENCE_FORMATS', dict(formats.SEQUENCE_FORMATS))
    monkeypatch.setattr(formats, 'FORMATS', FORMATS + ('probe',))

    def no_ouster(lidars):
        for s in lidars:
            if s.cfg.point_layout == 'ouster':
                raise ConfigError('point_layout', 'ouster', 'a probe layout')
    formats.register_format('probe', _probe_sink, check_lidars=no_ouster, max_sequences=2,
                            paths=lambda out_dir, i, name: [out_dir / f'probe_{i:02d}.txt'])


def test_the_spec_refuses_more_sequences_than_a_registered_format_numbers(probe_of_dataset):
    spec = spec_mod.load_spec('example')
    two, three = (replace(spec, sequences=spec.sequences[:1] * n) for n in (2, 3))
    assert spec_mod.with_formats(two, 'mcap,probe').formats == ('mcap', 'probe')
    with pytest.raises(ConfigError) as e:
        spec_mod.with_formats(three, 'mcap,probe')
    assert str(e.value) == ("--formats: got 'probe', allowed a spec of at most 2 sequences "
                            '(numbers 00-01), this one has 3')


def test_the_rig_check_applies_a_registered_formats_lidar_rule(probe_of_dataset):
    lidar = SimpleNamespace(kind='lidar_3d', cfg=SimpleNamespace(point_layout='ouster'))
    formats.check_rig(('mcap',), [lidar])
    with pytest.raises(ConfigError, match='a probe layout'):
        formats.check_rig(('mcap', 'probe'), [lidar])
    with pytest.raises(ConfigError) as e:
        formats.check_rig(('mcap', 'probe'), [SimpleNamespace(kind='laser_scan')])
    assert str(e.value) == ("formats: got 'probe', allowed mcap only, for a rig without a "
                            'lidar_3d sensor')


def test_scan_applies_a_registered_file_formats_lidar_rule_before_it_scans(tmp_path, capsys,
                                                                           monkeypatch):
    def no_ouster(cfg):
        if cfg.point_layout == 'ouster':
            raise ConfigError('point_layout', 'ouster', 'a probe layout')
    written = []
    monkeypatch.setitem(writers.WRITERS, '.probe', None)     # undone: the entry leaves WRITERS
    writers.register_frame_format('.probe', lambda path, *_: written.append(path),
                                  ('lidar_3d',), check_lidar=no_ouster)
    rc, stdout, err = _scan(capsys, tmp_path / 'a.probe', '--set', 'point_layout=ouster')
    assert rc == 2 and stdout == '' and err.count('\n') == 1, err
    assert "point_layout: got 'ouster', allowed a probe layout" in err and written == []


def test_the_runner_removes_a_registered_formats_paths_and_their_temporaries(probe_of_dataset,
                                                                             tmp_path):
    seq = SimpleNamespace(index=3, name='seq_0003')
    final, temporary, other = (tmp_path / n for n in ('probe_03.txt', '.probe_03.txt.x1',
                                                      'probe_04.txt'))
    for path in (final, temporary, other):
        path.write_text('')
    runner.remove_temporaries(tmp_path, seq)
    assert final.exists() and not temporary.exists() and other.exists()
    runner.remove_sequence(tmp_path, seq)
    assert not final.exists() and other.exists()
