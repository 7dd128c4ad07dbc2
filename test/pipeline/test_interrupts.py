"""pipeline/interrupts.py: a Ctrl-C that C code saw and the command handled exits with 130."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A module run with ``python -m``, as the CLI is: a KeyboardInterrupt raised inside a PyRun_*
# call (what an extension's py::exec does when Ctrl-C lands in it), caught, then exit 130.
MODULE = """
import ctypes
import sys

try:
    ctypes.pythonapi.PyRun_SimpleString(b'raise KeyboardInterrupt')
except BaseException:
    pass
if sys.argv[1:] == ['forget']:
    from ubot_lidar_sim.pipeline.interrupts import forget_caught_interrupt
    forget_caught_interrupt()
sys.exit(130)
"""


@pytest.mark.parametrize('forget, code', [(True, 130), (False, -2)])
def test_a_handled_interrupt_seen_by_c_code_exits_130_once_forgotten(tmp_path, forget, code):
    (tmp_path / 'handled_ctrl_c.py').write_text(MODULE, encoding='utf-8')
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join([ROOT, os.environ.get('PYTHONPATH', '')])}
    r = subprocess.run([sys.executable, '-m', 'handled_ctrl_c', *(['forget'] if forget else [])],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    # Without forgetting, CPython ends the process by its own SIGINT (-2), not with the 130
    # the command returned: the case forget_caught_interrupt exists for.
    assert r.returncode == code, r.stderr
