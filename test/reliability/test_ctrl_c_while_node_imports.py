"""A signal while a node executable still imports ends it quietly."""

import shutil
import signal
import subprocess
import time

import pytest
from rel_helpers import new_domain, ros_env

EXES = ['lidar_3d_node', 'laser_scan_node', 'terrain_sensor_node', 'demo_driver_node']


def _loaded(pid, name):
    """Return True when a file whose path holds name is mapped into process pid."""
    try:
        with open(f'/proc/{pid}/maps') as f:
            return name in f.read()
    except OSError:
        return False


@pytest.mark.parametrize('exe', EXES)
def test_ctrl_c_while_a_node_imports_prints_no_traceback(exe):
    path = shutil.which(exe)
    assert path, f'{exe} is not on PATH (make build; source scripts/env.sh)'
    argv = [path] if exe == 'demo_driver_node' else [path, '--ros-args', '-p',
                                                     'world_file:=flat']
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=ros_env(new_domain()))
    # Past the console script's own preamble: the node module is loading rclpy (numba and
    # open3d come after it).
    deadline = time.monotonic() + 60.0
    while time.monotonic() < deadline and proc.poll() is None and not _loaded(proc.pid, 'rclpy'):
        time.sleep(0.005)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert 'Traceback' not in err and 'KeyboardInterrupt' not in err, err[-1500:]
    assert proc.returncode == 0, (proc.returncode, err[-800:])
