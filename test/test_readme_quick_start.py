"""
The README's Quick start as a new user runs it: every command, from a directory outside the tree.

Each command of the Quick start's code blocks is one test, run in README order in one temporary
directory (a later command reads what an earlier one wrote, as in the README). Long commands run
in a fast variant, stated in ``fast_variant``: fewer frames and seconds, a small dataset spec of
the example's keys. A command of a form this module does not know fails, so that a new README
command gets a runner here. Commands that need tools PyPI does not have (ros2cli, ros2 launch)
skip, saying so, where those tools are missing.
"""

import os
from pathlib import Path
import re
import shlex
import shutil
import signal
import subprocess
import sys

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
#: s a server command (view) gets to print its URL on a busy machine.
SERVER_START_S = 240
#: s a one-shot command gets (a scan of 2 frames, a dataset of 2 sequences, a 4 s run).
COMMAND_S = 600


def quick_start_commands():
    """Return [(lang, text)] of the Quick start's code blocks: one shell command or a script."""
    text = (ROOT / 'README.md').read_text()
    section = text.split('\n## Quick start', 1)[1].split('\n## ', 1)[0]
    commands = []
    for lang, body in re.findall(r'```(bash|python)\n(.*?)```', section, re.S):
        if lang == 'python':
            commands.append((lang, body))
            continue
        for line in body.replace('\\\n', ' ').splitlines():
            line = re.split(r'\s+#\s', line.strip())[0].strip()   # a trailing comment
            if line and not line.startswith('#'):
                commands.append((lang, line))
    return commands


COMMANDS = quick_start_commands()


@pytest.fixture(scope='module')
def workdir(tmp_path_factory):
    """Return a directory outside the repository, shared by the commands in README order."""
    path = tmp_path_factory.mktemp('readme')
    assert ROOT not in path.parents
    return path


def small_spec(folder):
    """Write the example dataset spec cut to 2 sequences of 2 frames; return its path."""
    spec = yaml.safe_load((ROOT / 'config' / 'datasets' / 'example.yaml').read_text())
    spec.update(frames=2, seeds=spec['seeds'][:1], weather=spec['weather'][:2],
                trajectories=spec['trajectories'][:1], worlds=spec['worlds'][:1])
    path = folder / 'example_small.yaml'
    path.write_text(yaml.safe_dump(spec))
    return str(path)


def small_sdf_world(folder):
    """Write warehouse.world (an SDF world: ground and a box) and an empty model path."""
    (folder / 'gazebo_models').mkdir(exist_ok=True)
    (folder / 'warehouse.world').write_text(
        '<?xml version="1.0"?>\n<sdf version="1.9"><world name="w">'
        '<model name="ground"><static>true</static><link name="l"><collision name="c">'
        '<geometry><plane><normal>0 0 1</normal><size>50 50</size></plane></geometry>'
        '</collision></link></model>'
        '<model name="shelf"><static>true</static><pose>4 0 1 0 0 0</pose><link name="l">'
        '<collision name="c"><geometry><box><size>1 3 2</size></box></geometry></collision>'
        '</link></model></world></sdf>\n')


#: The user's own robot of the README's examples: a base and a laser link with a gpu_lidar.
ROBOT_URDF = """<robot name="my_robot"{ns}>{arg}
 <link name="base_link"><collision><geometry><box size="0.4 0.4 0.2"/></geometry></collision>
 </link>
 <link name="laser_link"/>
 <joint name="laser_joint" type="fixed"><parent link="base_link"/><child link="laser_link"/>
  <origin xyz="0.1 0 0.3"/></joint>
 {open}<gazebo reference="laser_link"><sensor name="front_laser" type="gpu_lidar">
  <topic>scan</topic><update_rate>10</update_rate>
  <lidar><scan><horizontal><samples>360</samples><resolution>1</resolution>
  <min_angle>-3.14159</min_angle><max_angle>3.14159</max_angle></horizontal></scan>
  <range><min>0.12</min><max>12.0</max></range></lidar></sensor></gazebo>{close}
</robot>
"""


def user_files(arg, folder):
    """Write the README's example files of the user (a world with a missing model, a robot)."""
    if arg == 'hospital.world':             # one model missing: sdf_missing=warn loads the rest
        (folder / arg).write_text(
            '<?xml version="1.0"?>\n<sdf version="1.9"><world name="h">'
            '<model name="floor"><static>true</static><link name="l"><collision name="c">'
            '<geometry><plane><normal>0 0 1</normal><size>40 40</size></plane></geometry>'
            '</collision></link></model>'
            '<include><uri>model://no_such_bed</uri></include></world></sdf>\n')
    elif arg == 'my_robot.urdf':
        (folder / arg).write_text(ROBOT_URDF.format(ns='', arg='', open='', close=''))
    elif arg == 'my_robot.urdf.xacro':
        (folder / arg).write_text(ROBOT_URDF.format(
            ns=' xmlns:xacro="http://www.ros.org/wiki/xacro"',
            arg='\n <xacro:arg name="lidar" default="false"/>',
            open='<xacro:if value="$(arg lidar)">', close='</xacro:if>'))


def fast_variant(argv, folder):
    """Return argv with fewer frames and seconds and the README's user files made small."""
    out = []
    for i, arg in enumerate(argv):
        prev = argv[i - 1] if i else ''
        if prev == '--frames':
            arg = str(min(int(arg), 2))
        elif prev == '--seconds':
            arg = '4'
        elif prev == 'dataset' and arg == 'example':
            arg = small_spec(folder)
        elif arg == 'warehouse.world':
            small_sdf_world(folder)
        elif arg == '~/gazebo_models':
            arg = str(folder / 'gazebo_models')
        else:
            user_files(arg, folder)
        out.append(arg)
    return out


def env():
    """Return the environment of a user who sourced scripts/env.sh, on a domain of its own."""
    return dict(os.environ, PYTHONUNBUFFERED='1', ROS_DOMAIN_ID=str(90 + os.getpid() % 10))


def run_until(argv, folder, marker):
    """Start a command, wait for a line holding marker, end it with Ctrl-C; return (rc, output)."""
    proc = subprocess.Popen(argv, cwd=folder, env=env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    lines = []
    try:
        for line in proc.stdout:            # a line per event: the URL, the node's start line
            lines.append(line)
            if marker in line:
                break
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=SERVER_START_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, ''.join(lines) + (rest or '')


def is_server(argv):
    """Return True for the commands that serve until Ctrl-C (the viewer)."""
    return argv[3:4] == ['view'] or '--view' in argv


@pytest.mark.parametrize('lang,command', COMMANDS, ids=[c[:60] for _, c in COMMANDS])
def test_readme_quick_start_command_works_outside_the_repository(lang, command, workdir):
    if lang == 'python':
        r = subprocess.run([sys.executable, '-c', command], cwd=workdir, env=env(),
                           capture_output=True, text=True, timeout=COMMAND_S)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip(), 'the README script printed nothing'
        return
    argv = shlex.split(command)
    if argv[:2] == ['source', 'scripts/env.sh']:
        r = subprocess.run(['bash', '-c', f'source {ROOT}/scripts/env.sh >/dev/null && '
                            'command -v lidar_3d_node && python -c "import rclpy"'],
                           cwd=workdir, capture_output=True, text=True, timeout=COMMAND_S)
        assert r.returncode == 0 and 'lidar_3d_node' in r.stdout, r.stderr
        return
    if argv[0] == 'ros2':
        if shutil.which('ros2') is None:
            pytest.skip('ros2 (ros2cli, ros2 launch) is not installed: PyPI has no ros2cli')
        r = subprocess.run(argv, cwd=workdir, env=env(), capture_output=True, text=True,
                           timeout=COMMAND_S)
        assert r.returncode == 0, r.stderr
        return
    if argv[0].endswith('_node'):
        rc, out = run_until(argv, workdir, ' started: ')
        assert ' started: ' in out, out
        assert rc in (0, -signal.SIGINT, 130), out
        return
    assert argv[:3] == ['python', '-m', 'ubot_lidar_sim'], f'no runner for: {command}'
    argv = [sys.executable, *fast_variant(argv, workdir)[1:]]
    if is_server(argv):
        rc, out = run_until(argv, workdir, 'http://')
        assert 'http://' in out, out
        assert 'Traceback' not in out, out
        return
    r = subprocess.run(argv, cwd=workdir, env=env(), capture_output=True, text=True,
                       timeout=COMMAND_S)
    assert r.returncode == 0, r.stdout + r.stderr
    assert 'Traceback' not in r.stderr, r.stderr
    if '--out' in argv:                     # with --frames N > 1 the name gets _0000 ...
        out = workdir / argv[argv.index('--out') + 1]
        assert out.exists() or out.with_name(f'{out.stem}_0000{out.suffix}').exists()
