"""
The public CI workflow (.github/workflows/ros.yml): valid YAML, only the keys its schema has.

It cannot run here (a hosted runner with apt ROS); this checks what can be checked without one:
GitHub's workflow keys, the actions' inputs (their action.yml), the ROS releases and their
REP 2000 platforms, the packages it builds, and that it installs every Python package that has
no rosdep key.
"""

import json
import pathlib
import re
import xml.etree.ElementTree as ET

from test_package_xml import UNDECLARABLE
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
WORKFLOW_FILE = ROOT / '.github' / 'workflows' / 'ros.yml'
WORKFLOW = yaml.safe_load(WORKFLOW_FILE.read_text())

# GitHub's workflow syntax
# (docs.github.com/en/actions/reference/workflow-syntax-for-github-actions).
WORKFLOW_KEYS = {'name', 'run-name', 'on', 'permissions', 'env', 'defaults', 'concurrency', 'jobs'}
JOB_KEYS = {'name', 'permissions', 'needs', 'if', 'runs-on', 'environment', 'concurrency',
            'outputs', 'env', 'defaults', 'steps', 'timeout-minutes', 'strategy',
            'continue-on-error', 'container', 'services', 'uses', 'with', 'secrets'}
STEP_KEYS = {'id', 'if', 'name', 'uses', 'run', 'working-directory', 'shell', 'with', 'env',
             'continue-on-error', 'timeout-minutes'}
EVENTS = {'push', 'pull_request', 'workflow_dispatch', 'schedule', 'workflow_call', 'release'}
# The inputs of each action at the version used: action.yml of github.com/ros-tooling/setup-ros
# (022f328, tag v0.7 line) and github.com/ros-tooling/action-ros-ci (3a640b1, tag v0.4 line).
ACTION_INPUTS = {
    'ros-tooling/setup-ros@v0.7': {'install-connext', 'required-ros-distributions',
                                   'use-ros2-testing'},
    'ros-tooling/action-ros-ci@v0.4': {
        'colcon-defaults', 'colcon-extra-args', 'colcon-mixin-repository',
        'coverage-ignore-pattern', 'coverage-result', 'extra-cmake-args', 'git-ssh-port',
        'import-token', 'no-symlink-install', 'package-name', 'ref', 'rosdep-check',
        'rosdep-skip-keys', 'skip-rosdep-install', 'skip-tests', 'target-ros1-distro',
        'target-ros2-distro', 'vcs-repo-file-url'},
}
# REP 2000's Tier 1 Ubuntu of each release, as setup-ros's README pairs them with images.
PLATFORM = {'humble': 'ubuntu:jammy', 'jazzy': 'ubuntu:noble', 'kilted': 'ubuntu:noble',
            'rolling': 'ubuntu:resolute'}
# Import name -> pip distribution, where they differ (requirements.txt).
PIP_NAME = {'open3d': 'open3d-cpu', 'mcap_ros2': 'mcap-ros2-support', 'kiss_icp': 'kiss-icp',
            'rerun': 'rerun-sdk'}


def _job():
    return WORKFLOW['jobs']['colcon-test']


def _steps_using(action):
    return [s for s in _job()['steps'] if s.get('uses') == action]


def test_top_level_and_trigger_keys_are_githubs():
    # PyYAML reads the bare key `on` as the boolean True (YAML 1.1).
    top = {('on' if k is True else k) for k in WORKFLOW}
    assert top <= WORKFLOW_KEYS and {'on', 'jobs'} <= top, top
    assert set(WORKFLOW[True]) <= EVENTS


def test_every_job_and_step_uses_only_schema_keys():
    for name, job in WORKFLOW['jobs'].items():
        assert set(job) <= JOB_KEYS, (name, set(job) - JOB_KEYS)
        assert 'runs-on' in job and job['steps'], name
        for step in job['steps']:
            assert set(step) <= STEP_KEYS, (name, set(step) - STEP_KEYS)
            assert ('uses' in step) != ('run' in step), step


def test_every_action_is_known_and_given_only_its_inputs():
    for step in _job()['steps']:
        if 'uses' in step:
            assert step['uses'] in ACTION_INPUTS, step['uses']
            assert set(step.get('with', {})) <= ACTION_INPUTS[step['uses']], step


def test_the_matrix_covers_humble_jazzy_kilted_rolling_on_their_platforms():
    rows = _job()['strategy']['matrix']['include']
    assert {r['ros_distribution']: r['docker_image'] for r in rows} == PLATFORM
    assert len(rows) == len(PLATFORM)
    assert _job()['container']['image'] == '${{ matrix.docker_image }}'


def test_every_matrix_reference_names_a_matrix_key():
    keys = set(_job()['strategy']['matrix']['include'][0])
    used = set(re.findall(r'\$\{\{\s*matrix\.(\w+)', WORKFLOW_FILE.read_text()))
    assert used and used <= keys, used - keys


def test_only_humble_may_fail_and_it_is_the_unsupported_one():
    assert _job()['continue-on-error'] == "${{ matrix.ros_distribution == 'humble' }}"
    rows = [ln for ln in (ROOT / 'README.md').read_text().splitlines() if ln.startswith('| ')]
    humble = [ln for ln in rows if ln.startswith('| Humble |')]
    assert len(humble) == 1 and 'not supported' in humble[0]


def test_ros_is_set_up_for_the_matrix_release_and_colcon_tests_both_packages():
    (setup,) = _steps_using('ros-tooling/setup-ros@v0.7')
    (ci,) = _steps_using('ros-tooling/action-ros-ci@v0.4')
    release = '${{ matrix.ros_distribution }}'
    assert setup['with']['required-ros-distributions'] == release
    assert ci['with']['target-ros2-distro'] == release
    assert 'skip-tests' not in ci['with'] and 'skip-rosdep-install' not in ci['with']
    names = {ET.parse(p).getroot().findtext('name')
             for p in (ROOT / 'package.xml', ROOT / 'ubot_lidar_sim_msgs' / 'package.xml')}
    assert set(ci['with']['package-name'].split()) == names
    steps = _job()['steps']
    assert steps.index(setup) < steps.index(ci)


def test_colcon_finds_the_interface_package_inside_the_repository_for_every_verb():
    (ci,) = _steps_using('ros-tooling/action-ros-ci@v0.4')
    defaults = json.loads(ci['with']['colcon-defaults'])
    # action-ros-ci checks the repository out into src/<random>/<repository> (src/action-ros-ci.ts,
    # repoFileContent) and runs colcon list (the rosdep paths), build and test there.
    for verb in ('list', 'build', 'test'):
        assert defaults[verb]['base-paths'] == ['src/*/*', 'src/*/*/ubot_lidar_sim_msgs'], verb
    assert (ROOT / 'ubot_lidar_sim_msgs' / 'package.xml').is_file()


def test_every_python_package_without_a_rosdep_key_is_pip_installed_before_colcon():
    runs = [s for s in _job()['steps'] if 'pip install' in s.get('run', '')]
    assert len(runs) == 1
    installed = set(runs[0]['run'].split()[4:])
    wanted = {PIP_NAME.get(m, m) for m in UNDECLARABLE - {'nav2_simple_commander'}} | {'pycollada'}
    assert wanted <= installed, wanted - installed
    # Nav2 comes from apt where it is released (not Rolling), before colcon too.
    nav2 = [s for s in _job()['steps'] if 'nav2-simple-commander' in s.get('run', '')]
    assert len(nav2) == 1 and "!= 'rolling'" in nav2[0]['if']
    steps = _job()['steps']
    assert steps.index(runs[0]) < steps.index(_steps_using('ros-tooling/action-ros-ci@v0.4')[0])
