"""
Round 5: bad command-line values and recordings, a hard-linked manifest, a link planted mid-run.

Each gets one line on stderr and exit 2: ``scan --pose`` / ``--twist`` values the dataset spec
refuses too, bad, truncated or empty MCAP files and a FIFO named ``*.mcap`` given to ``view``, a
``manifest.jsonl`` with a second name, a link put on ``sequences/`` while a sequence is written.
"""

import os
import socket
import subprocess
import sys

from builders import write_spec
import pytest
from test_dataset_faults import _env, _one_line
from ubot_lidar_sim.cli import main
from ubot_lidar_sim.dataset import runner
from ubot_lidar_sim.output import semantickitti

SPEC = {'worlds': ['flat'], 'frames': 2, 'seeds': [0], 'formats': ['semantickitti'],
        'sensors': [{'type': 'lidar_3d', 'params': {'channels': 4, 'horizontal_samples': 90}}]}


@pytest.mark.parametrize('option, values', [
    ('--pose', ['nan', '0', '1', '0', '0', '0']), ('--pose', ['0', '0', 'inf', '0', '0', '0']),
    ('--pose', ['1e300', '0', '1', '0', '0', '0']),
    ('--twist', ['0', '0', '0', '0', '0', 'nan']), ('--twist', ['0', '0', '0', 'inf', '0', '0']),
    ('--twist', ['1e300', '0', '0', '0', '0', '0']),
])
def test_scan_refuses_a_pose_or_twist_the_dataset_spec_refuses(tmp_path, capsys, option, values):
    out = tmp_path / 'x.bin'
    assert main(['scan', '--world', 'flat', '--out', str(out), option, *values]) == 2
    line = _one_line(capsys.readouterr().err)
    assert f'{option}: got ' in line and 'allowed 6 finite numbers within +-1e+06' in line, line
    assert not out.exists()


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _view(target, tmp_path):
    return subprocess.run([sys.executable, '-m', 'ubot_lidar_sim', 'view', str(target),
                           '--web-port', str(_free_port()), '--grpc-port', str(_free_port()),
                           '--serve-seconds', '0.1'], capture_output=True, text=True,
                          env=_env(), cwd=tmp_path, timeout=300)


@pytest.mark.parametrize('content, says', [
    (b'', 'EndOfFile'), (b'hello\n', 'a readable MCAP recording (error: '),
    (b'\x89MCAP0\r\n' + b'\x01' * 40, 'a readable MCAP recording ('),
    ('truncated', 'a readable MCAP recording ('), ('fifo', 'not a regular file (a FIFO)'),
], ids=['empty', 'text', 'bad-record', 'truncated', 'fifo-in-a-directory'])
def test_view_of_a_bad_recording_is_one_line(tmp_path, content, says):
    target = tmp_path / 'rec.mcap'
    if content == 'truncated':
        assert main(['scan', '--world', 'flat', '--set', 'horizontal_samples=90', '--out',
                     str(target)]) == 0
        target.write_bytes(target.read_bytes()[:3000])
    elif content == 'fifo':
        os.mkfifo(target)
        target = tmp_path           # view DIR finds every *.mcap below it
    else:
        target.write_bytes(content)
    r = _view(target, tmp_path)
    assert r.returncode == 2, r.stderr[-2000:]
    line = _one_line(r.stderr)
    assert "view: got '" in line and says in line, line


def test_a_hard_linked_manifest_is_not_appended_through_its_other_name(tmp_path, capsys):
    out = tmp_path / 'o'
    assert main(['dataset', str(write_spec(tmp_path, SPEC)), '--out', str(out), '--workers', '1',
                 '--quiet']) == 0
    other = tmp_path / 'other.jsonl'
    os.link(out / runner.MANIFEST, other)
    before = other.read_bytes()
    capsys.readouterr()
    assert main(['dataset', str(write_spec(tmp_path, {**SPEC, 'seeds': [0, 1]})), '--out',
                 str(out), '--workers', '1', '--quiet']) == 2
    line = _one_line(capsys.readouterr().err)
    assert runner.MANIFEST in line and 'hard link' in line, line
    assert other.read_bytes() == before


def test_a_link_planted_on_sequences_while_a_sequence_is_written_is_named(tmp_path, capsys,
                                                                          monkeypatch):
    out, victim = tmp_path / 'o', tmp_path / 'victim'
    victim.mkdir()
    real_add = semantickitti.SequenceWriter.add

    def plant_then_add(self, *args):
        if not (out / 'sequences').is_symlink():        # the sequence's folder is staged
            os.rename(out / 'sequences', tmp_path / 'moved')
            (out / 'sequences').symlink_to(victim)
        return real_add(self, *args)

    monkeypatch.setattr(semantickitti.SequenceWriter, 'add', plant_then_add)
    assert main(['dataset', str(write_spec(tmp_path, SPEC)), '--out', str(out), '--workers', '1',
                 '--quiet']) == 2
    line = _one_line(capsys.readouterr().err)
    assert "sequences'" in line and 'symbolic link' in line, line
    assert list(victim.iterdir()) == []
