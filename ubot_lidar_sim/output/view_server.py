"""
The viewer's two servers on one address: 127.0.0.1 unless ``--bind ADDR`` names another.

rerun-sdk 0.41's ``serve_grpc`` and ``serve_web_viewer`` listen on 0.0.0.0 (every interface)
and take no address, so anyone who reaches the machine could read the recording. Here the gRPC
server is the SDK's ``GrpcServerSink(bind_ip=...)`` in this process, and the web viewer (HTML,
JS and Wasm) is served by the wheel's own ``rerun`` executable, ``rerun --serve-web --bind ADDR
--web-viewer-port PORT URL`` (given a URL it hosts the web viewer only), in a child process that
dies with this one. The port checks bind the same address.
"""

import argparse
import atexit
import importlib.util
import ipaddress
import os
from pathlib import Path
import socket
import subprocess
import time
from types import ModuleType

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.processes import die_with_parent

LOOPBACK = '127.0.0.1'
BIND_HELP = ('address the viewer listens on (default 127.0.0.1: this machine only). '
             '0.0.0.0 or a LAN address lets anyone who reaches it read the recording; there is '
             'no password')
START_TIMEOUT_S = 60.0      # the web viewer's process listens by then (seconds on a busy machine)


def port(text: str) -> int:
    """Return a TCP port of the command line (argparse type): 1-65535."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f'got {text!r}, allowed a TCP port 1-65535')
    return value


def address(text: str) -> str:
    """Return an IP address of the command line (argparse type), IPv4 or IPv6."""
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f'got {text!r}, allowed an IP address such as '
                                         '127.0.0.1, 0.0.0.0 or ::1') from None


def url_host(bind: str) -> str:
    """Return the host of the printed URLs: bind itself, loopback for an all-interfaces bind."""
    ip = ipaddress.ip_address(bind)
    if ip.is_unspecified:
        return LOOPBACK if ip.version == 4 else '[::1]'
    return f'[{bind}]' if ip.version == 6 else bind


def check_ports(web_port: int, grpc_port: int, bind: str) -> None:
    """Raise ConfigError naming the option when the ports are equal or cannot be listened on."""
    if web_port == grpc_port:
        raise ConfigError('--web-port', web_port, f'a port other than --grpc-port {grpc_port}')
    for value, name in ((web_port, '--web-port'), (grpc_port, '--grpc-port')):
        family = socket.AF_INET6 if ipaddress.ip_address(bind).version == 6 else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as s:
            try:
                s.bind((bind, value))
            except OSError as exc:
                raise ConfigError(name, value, f'a free TCP port on {bind} '
                                  f'({exc.strerror})') from None


def serve_grpc(rr: ModuleType, bind: str, grpc_port: int) -> str:
    """Serve the recording over gRPC on bind:grpc_port in this process; return its URI."""
    # rerun joins bind_ip and port as 'IP:PORT': an IPv6 address needs its brackets
    sink = rr.GrpcServerSink(bind_ip=f'[{bind}]' if ':' in bind else bind, port=grpc_port)
    rr.set_sinks(sink)
    return f'rerun+http://{url_host(bind)}:{grpc_port}/proxy'


def _rerun_executable():
    """Return the path of the rerun-sdk wheel's ``rerun`` executable (package rerun_cli)."""
    spec = importlib.util.find_spec('rerun_cli')
    exe = Path(spec.origin).parent / 'rerun' if spec and spec.origin else None
    if exe is None or not exe.is_file():
        raise ConfigError('--view', 'rerun_cli', "rerun-sdk's rerun executable (pip install "
                          'rerun-sdk)')
    return exe


def _listening(host, web_port):
    try:
        with socket.create_connection((host.strip('[]'), web_port), timeout=0.5):
            return True
    except OSError:
        return False


def serve_web_viewer(bind: str, web_port: int, grpc_uri: str, timeout_s: float = START_TIMEOUT_S
                     ) -> subprocess.Popen[bytes]:
    """
    Serve the web viewer on bind:web_port from a child process; return it once it listens.

    The child is stopped at exit (atexit) and ends by itself with this process (PDEATHSIG).
    """
    env = dict(os.environ, RERUN_ANALYTICS='0')
    proc = subprocess.Popen([str(_rerun_executable()), '--serve-web', '--bind', bind,
                             '--web-viewer-port', str(web_port), grpc_uri],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, preexec_fn=die_with_parent)
    atexit.register(stop, proc)
    deadline = time.monotonic() + timeout_s
    while not _listening(url_host(bind), web_port):
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            raise ConfigError('--web-port', web_port, f'a port the web viewer can serve on '
                              f'{bind} (rerun --serve-web did not listen within {timeout_s:g} '
                              's)')
        time.sleep(0.1)
    return proc


def stop(proc: subprocess.Popen[bytes]) -> None:
    """End the web viewer's process (SIGTERM, then SIGKILL after 5 s)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
