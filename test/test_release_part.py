"""
The rule that picks the tests depending on the ROS release (test/release_part.py) and .ci/run.

.ci/run re-runs on Jazzy only what the rule marks ``release_dependent``; a new test falls under
it by what it imports or starts. The rest never import rclpy: the rule finds no ROS import in
core/ (test/test_layers.py keeps it below the ros layer).
"""

import ast
import os
from pathlib import Path
import subprocess

import pytest
from release_part import depends_on_release, PACKAGE, reasons, TEST_DIR

ROOT = TEST_DIR.parent


@pytest.mark.parametrize('source, dependent', [
    ('import numpy as np\n\ndef test_sum():\n    assert np.sum([1, 2]) == 3\n', False),
    ('def test_init():\n    import rclpy\n    rclpy.init()\n', True),
    ('from sensor_msgs.msg import PointCloud2\n', True),
    ('from ubot_lidar_sim.ros.conversions import stamp_to_s\n', True),
    ('from ubot_lidar_sim.core.config import LidarConfig\n', False),
    ("SCRIPT = '''\nimport rclpy\n'''\n", True),        # a child process's script
    ("ARGV = ['laser_scan_node', '--ros-args']\n", True),
    ("def test_run(cli):\n    cli(['run', '--seconds', '1'])\n", True),
    ("def test_scan(cli):\n    cli(['scan', '--preset', 'x'])\n", False),
])
def test_a_new_test_file_falls_under_the_rule_by_what_it_imports_and_starts(
        tmp_path, source, dependent):
    path = tmp_path / 'test_new.py'
    path.write_text(source)
    assert bool(reasons(path)) is dependent, reasons(path)


def test_a_helper_module_that_imports_rclpy_makes_its_importers_dependent():
    helper = reasons(TEST_DIR / 'ros' / 'ros_helpers.py')
    assert 'ros_helpers.py imports rclpy' in helper
    user = TEST_DIR / 'reliability' / 'test_faults.py'     # imports rel_helpers (rclpy inside)
    assert any(why.startswith('rel_helpers.py') for why in reasons(user)), reasons(user)


def test_every_node_and_nav2_test_is_release_dependent():
    files = sorted((TEST_DIR / 'ros').glob('test_*.py')) + sorted(
        (TEST_DIR / 'nav2').glob('test_*.py'))
    assert len(files) > 30
    assert all(depends_on_release(str(p)) for p in files)


def test_core_never_reaches_ros_so_its_tests_are_release_independent_by_imports():
    core = sorted((PACKAGE / 'core').rglob('*.py'))
    assert len(core) > 60
    assert [p.name for p in core if reasons(p)] == []
    plain = TEST_DIR / 'core' / 'sensors' / 'test_lidar.py'
    assert not depends_on_release(str(plain))


def test_every_test_listed_as_release_specific_is_in_the_part_jazzy_re_runs():
    # test/ros/test_ros_release.py RELEASE_SPECIFIC: the tests whose expectation or code path
    # differs by release; read without importing it (it imports rclpy).
    tree = ast.parse((TEST_DIR / 'ros' / 'test_ros_release.py').read_text())
    listed = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                  and getattr(n.targets[0], 'id', '') == 'RELEASE_SPECIFIC')
    assert len(listed) >= 4
    assert [rel for rel in listed if not depends_on_release(str(TEST_DIR / rel))] == []


def test_the_marker_is_set_on_collection_by_the_rule(request):
    # This file's sources name a node executable and an rclpy import (above): the rule errs
    # on the side of re-running a test on Jazzy.
    assert depends_on_release(__file__)
    assert request.node.get_closest_marker('release_dependent') is not None


FAKE_MAKE = """#!/usr/bin/env bash
echo "make $* TEST_PART=${TEST_PART:-}"
if [ -n "${TEST_PART:-}" ]; then echo "== 7 passed, 1200 deselected in 1.00s =="; \
echo "7 passed, 0 failed"; else echo "1300 passed, 0 failed, 3 skipped"; fi
"""


def test_ci_runs_kilted_whole_then_jazzys_release_dependent_part_and_sums_them(tmp_path):
    make = tmp_path / 'make'
    make.write_text(FAKE_MAKE)
    make.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ('CI_DISTROS', 'CI_JAZZY_PART')}
    env['PATH'] = f'{tmp_path}{os.pathsep}{env["PATH"]}'

    def ci(**extra):
        return subprocess.run(['bash', str(ROOT / '.ci' / 'run')], env={**env, **extra},
                              capture_output=True, text=True, timeout=60)

    # The default runs Kilted's whole suite, then Jazzy's release-dependent part.
    out = ci()
    lines = out.stdout.strip().splitlines()
    assert out.returncode == 0, out.stdout + out.stderr
    assert 'make test TEST_PART=' in lines                   # kilted: every test
    assert 'make test ROS_DISTRO=jazzy TEST_PART=release_dependent' in lines
    assert 'kilted: 1300 passed, 0 failed, 3 skipped' in lines
    assert 'jazzy: 7 passed, 0 failed' in lines
    note = next(line for line in lines if 'not re-run on jazzy' in line)
    assert '1200 release-independent tests' in note and 'never import rclpy' in note
    assert lines[-1] == '1307 passed, 0 failed, 3 skipped'
    # Kilted alone says that Jazzy is not run.
    alone = ci(CI_DISTROS='kilted')
    assert alone.stdout.splitlines()[0].startswith('ci: jazzy not run here')
    assert alone.stdout.strip().splitlines()[-1] == '1300 passed, 0 failed, 3 skipped'
    # A budget already spent (any time is over -1 s) names Jazzy NOT RUN beside the summaries;
    # the first release always runs.
    over = ci(CI_BUDGET_S='-1')
    lines = over.stdout.strip().splitlines()
    assert 'make test ROS_DISTRO=jazzy TEST_PART=release_dependent' not in lines
    assert any(line.startswith('jazzy NOT RUN: ') and 'CI_BUDGET_S=-1' in line for line in lines)
    assert lines[-1] == '1300 passed, 0 failed, 3 skipped'
    assert Path(ROOT / '.ci' / 'run').read_text().count('CI_JAZZY_PART') >= 2
