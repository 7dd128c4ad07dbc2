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
