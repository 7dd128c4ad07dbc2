"""Links planted below an output directory, before or while a run writes, and a FIFO."""

import os
import subprocess
import sys

from builders import write_spec
import pytest
from test_dataset_faults import _env, _one_line
from ubot_lidar_sim.cli import main
from ubot_lidar_sim.dataset import formats as formats_mod, runner

# What a write through a link would replace: poses/NN.txt, sequences/NN, pcd/seq_NNNN.
VICTIM = ['00.txt', '01', '01.txt', 'seq_0001']
SMALL = ['--world', 'flat', '--set', 'channels=4', '--set', 'horizontal_samples=90']
SPEC = {'worlds': ['flat'], 'frames': 2, 'seeds': [0, 1], 'formats': ['semantickitti', 'pcd'],
        'sensors': [{'type': 'lidar_3d', 'params': {'channels': 4, 'horizontal_samples': 90}}]}


def _victim(tmp_path):
    """Return a folder outside the output directory holding the files of VICTIM."""
    victim = tmp_path / 'victim'
    victim.mkdir()
    for name in VICTIM:
        (victim / name).write_text('precious\n')
    return victim


def _untouched(victim):
    return sorted(p.name for p in victim.iterdir()) == VICTIM and all(
        p.read_text() == 'precious\n' for p in victim.iterdir())


@pytest.mark.parametrize('name', ['poses', 'sequences'])
def test_scan_semantickitti_never_writes_through_a_folder_link_in_its_output(
        tmp_path, capsys, name):
    out, victim = tmp_path / 'out', _victim(tmp_path)
    out.mkdir()
    (out / name).symlink_to(victim)
    assert main(['scan', *SMALL, '--format', 'semantickitti', '--out', str(out)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert name in line and 'symbolic link' in line, line
    assert _untouched(victim)


@pytest.mark.parametrize('name', ['poses', 'pcd', 'sequences'])
def test_a_folder_link_planted_while_the_dataset_runs_is_refused_and_nothing_leaves_dir(
        tmp_path, capsys, monkeypatch, name):
    out, victim = tmp_path / 'o', _victim(tmp_path)
    real_sinks = formats_mod.sinks

    def plant_then_sinks(formats, out_dir, seq_index, *args):
        if seq_index == 1:      # the first sequence is done: its folders exist
            os.rename(out / name, tmp_path / 'moved')
            (out / name).symlink_to(victim)
        return real_sinks(formats, out_dir, seq_index, *args)

    monkeypatch.setattr(formats_mod, 'sinks', plant_then_sinks)
    assert main(['dataset', str(write_spec(tmp_path, SPEC)), '--out', str(out), '--workers', '1',
                 '--quiet']) == 2
    line = _one_line(capsys.readouterr().err)
    assert name in line and 'symbolic link' in line, line
    assert _untouched(victim)


@pytest.mark.parametrize('name', ['poses', 'pcd'])
def test_a_plain_file_where_the_dataset_needs_a_folder_is_named_in_the_error(
        tmp_path, capsys, name):
    out = tmp_path / 'o'
    out.mkdir()
    (out / name).write_text('in the way\n')
    assert main(['dataset', str(write_spec(tmp_path, SPEC)), '--out', str(out), '--workers', '1',
                 '--quiet']) == 2
    line = _one_line(capsys.readouterr().err)
    assert f"{out / name}'" in line and 'seq_0000' not in line, line
    assert (out / name).read_text() == 'in the way\n'


def test_a_fifo_at_the_manifest_is_an_error_not_a_hang(tmp_path):
    out = tmp_path / 'o'
    out.mkdir()
    os.mkfifo(out / runner.MANIFEST)
    r = subprocess.run([sys.executable, '-m', 'ubot_lidar_sim', 'dataset',
                        str(write_spec(tmp_path, SPEC)), '--out', str(out), '--quiet'],
                       capture_output=True, text=True, env=_env(), timeout=300)
    assert r.returncode == 2
    line = _one_line(r.stderr)
    assert runner.MANIFEST in line and 'not a regular file' in line, line
