"""The all-in-one run ends cleanly: its summary and snapshots are the last it says."""

import os
import subprocess
import sys

import pytest


@pytest.mark.ros
def test_a_run_says_nothing_of_skipped_sweeps_after_its_summary(tmp_path):
    env = dict(os.environ, ROS_DOMAIN_ID=str(10 + (os.getpid() + 7) % 80), MPLBACKEND='Agg')
    r = subprocess.run([sys.executable, '-m', 'ubot_lidar_sim', 'run', '--seconds', '6',
                        '--set', 'lidar_3d:sub_rays=1', '--snapshots', str(tmp_path)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=600, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout
    after = r.stdout.split('summary (finished after', 1)[1]    # one stream: lines in order
    assert 'scan skipped' not in after, r.stdout
    assert (tmp_path / 'points_top.png').is_file()


@pytest.mark.ros
def test_a_run_through_the_demo_smoke_publishes_no_empty_sweep(tmp_path):
    # Phases of 0.5 s but 18 s of smoke from 1.5 s on, the base at 0.5 m/s: the first puff
    # (radius 2 m, 1 m above ground) sits on the loop 6 m ahead of the smoke's start
    # (demo_driver_node._smoke_near_path), so the LiDAR (1.6 m above ground: base 0.4 m, mount
    # 1.2 m) is inside it within 1.9 m of its centre, from 8.2 s to 15.8 s into the smoke (9.7
    # s to 17.3 s into the run, after the LiDAR's start). A sensor inside smoke sees the smoke
    # around it: no sweep is empty.
    env = dict(os.environ, ROS_DOMAIN_ID=str(10 + (os.getpid() + 11) % 80), MPLBACKEND='Agg')
    r = subprocess.run([sys.executable, '-m', 'ubot_lidar_sim', 'run', '--seconds', '19',
                        '--set', 'lidar_3d:sub_rays=1',
                        '--set', 'demo_driver:phase_durations_s=[0.5,0.5,0.5,18.0,0.5]',
                        '--set', 'demo_driver:speed_m_s=0.5'],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=600, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout
    summary = r.stdout.split('summary (finished after', 1)[1]
    header = summary.splitlines()[1].split()
    names = header[header.index('scan') + 1::2]             # each phase shown: 'name Hz'
    lidar = [ln.split() for ln in summary.splitlines() if ln.split()[:1] == ['lidar_3d']][0]
    # Sweeps all through the smoke (the LiDAR published at >= 1 Hz over the phase).
    assert float(dict(zip(names, lidar[-len(names):]))['smoke']) >= 1.0, r.stdout
    assert 'empty scans' not in summary, r.stdout
