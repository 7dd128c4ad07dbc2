"""
Round 5: every server the package starts listens on loopback unless ``--bind`` names an address.

The viewer (``view``, ``scan --view``, ``run --view``: Rerun's web and gRPC servers) is started
for real and the listening sockets of its process and of its children are read from
/proc/net/tcp and tcp6. Ray's servers (the ``dataset`` runner) are pinned the same way by
test_dataset_ray_loopback.py. Bad ports are refused with one line (exit 2).
"""

import os
from pathlib import Path
import signal
import socket
import subprocess
import sys
import time

import pytest
from rel_helpers import new_domain, ROOT, ros_env
from test_dataset_ray import _listening_addresses, LOOPBACK

ALL_INTERFACES = ('00000000', '00000000000000000000000000000000')   # 0.0.0.0 and ::
START_S = 240       # rerun and a first scan on 2 busy cores


def _free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(('127.0.0.1', 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _tree(pid):
    """Return pid and the pids of all its descendants (/proc/PID/task/*/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f'/proc/{p}/task').glob('*'):
            try:
                todo.extend(int(c) for c in (task / 'children').read_text().split())
            except OSError:
                continue
    return out


@pytest.fixture(scope='module')
def mcap(tmp_path_factory):
    """Return a one-sweep recording of the flat world."""
    out = tmp_path_factory.mktemp('rec') / 'flat.mcap'
    subprocess.run([sys.executable, '-m', 'ubot_lidar_sim', 'scan', '--world', 'flat',
                    '--out', str(out), '--set', 'horizontal_samples=90'], check=True,
                   env=_env(), timeout=START_S, capture_output=True)
    return out


def _env():
    env = ros_env(new_domain())
    env['PYTHONPATH'] = os.pathsep.join([str(ROOT), env.get('PYTHONPATH', '')])
    return env


def _listening_while_served(argv, tmp_path):
    """Start ``python -m ubot_lidar_sim ARGV``; return its tree's listening addresses (hex)."""
    web, grpc = _free_ports(2)
    err_path = tmp_path / 'err.txt'
    with open(err_path, 'w') as err:
        proc = subprocess.Popen([sys.executable, '-m', 'ubot_lidar_sim', *map(str, argv),
                                 '--web-port', str(web), '--grpc-port', str(grpc),
                                 '--serve-seconds', str(START_S)], stdout=subprocess.DEVNULL,
                                stderr=err, env=_env(), cwd=tmp_path, start_new_session=True)
    try:
        deadline = time.monotonic() + START_S
        while 'viewer: ' not in err_path.read_text() and proc.poll() is None:
            assert time.monotonic() < deadline, 'no viewer line'
            time.sleep(0.2)
        assert proc.poll() is None, err_path.read_text()[-2000:]
        listening = _listening_addresses(_tree(proc.pid))
        line = next(x for x in err_path.read_text().splitlines() if 'viewer: ' in x)
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return listening, line


def _view(mcap, tmp_path):
    return ['view', mcap]


def _scan(mcap, tmp_path):
    return ['scan', '--world', 'flat', '--set', 'horizontal_samples=90', '--out',
            tmp_path / 'x.npz', '--view']


def _run(mcap, tmp_path):
    return ['run', '--view', '--seconds', '1']


@pytest.mark.parametrize('entrance', [_view, _scan, pytest.param(_run, marks=pytest.mark.ros)],
                         ids=['view', 'scan --view', 'run --view'])
def test_the_viewers_web_and_grpc_servers_listen_on_loopback_only(entrance, mcap, tmp_path):
    listening, line = _listening_while_served(entrance(mcap, tmp_path), tmp_path)
    # two servers: the web viewer (a rerun child) and the gRPC server (this process)
    assert len(listening) >= 2 and all(a in LOOPBACK for a in listening), listening
    assert 'http://127.0.0.1:' in line and 'rerun+http://127.0.0.1:' in line, line


@pytest.mark.parametrize('bind, where', [('0.0.0.0', ALL_INTERFACES), ('::1', LOOPBACK[2:])])
def test_bind_moves_both_servers_to_the_address_the_user_named(mcap, tmp_path, bind, where):
    listening, line = _listening_while_served(['view', mcap, '--bind', bind], tmp_path)
    assert len(listening) >= 2 and all(a in where for a in listening), listening


@pytest.mark.parametrize('ports, says', [
    (['--web-port', '70000'], "argument --web-port: got '70000', allowed a TCP port 1-65535"),
    (['--grpc-port', '0'], "argument --grpc-port: got '0', allowed a TCP port 1-65535"),
    (['--web-port', '9200', '--grpc-port', '9200'],
     '--web-port: got 9200, allowed a port other than --grpc-port 9200'),
    (['--bind', 'example.com'], "argument --bind: got 'example.com', allowed an IP address"),
])
@pytest.mark.parametrize('command', [['view', 'MCAP'], ['scan', '--out', 'x.npz', '--view'],
                                     ['run', '--view']], ids=['view', 'scan', 'run'])
def test_bad_viewer_ports_get_one_line_and_exit_2(command, ports, says, mcap, tmp_path):
    argv = [str(mcap) if a == 'MCAP' else a for a in command] + ports
    proc = subprocess.run([sys.executable, '-m', 'ubot_lidar_sim', *argv], capture_output=True,
                          text=True, env=_env(), cwd=tmp_path, timeout=START_S)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.count('\n') == 1 and says in proc.stderr, proc.stderr
