"""The web viewer shows the points: a headless Chromium screenshot of `view FILE.mcap`."""

import http.server
import os
from pathlib import Path
import shutil
import socket
import subprocess
import sys
import threading
import time

import numpy as np
from PIL import Image
import pytest

from ubot_lidar_sim.cli import main

CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser')
TREE = Path(__file__).resolve().parents[1]
#: Seconds the page's load event is held back, so the viewer's Wasm loads and draws first.
SETTLE_S = 40


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _wrapper_server(viewer_url):
    """Serve a page framing the viewer whose load event waits SETTLE_S s (screenshot time)."""
    page = (f'<html><body style="margin:0;background:#000">'
            f'<iframe src="{viewer_url}" style="border:0;width:1280px;height:800px"></iframe>'
            f'<img src="/slow.png" style="display:none"></body></html>').encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            if self.path == '/slow.png':
                time.sleep(SETTLE_S)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(page if self.path == '/' else b'')

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def point_pixel_share(png):
    """
    Return the share of pixels that are neither the background nor the viewer's grey chrome.

    The background is the most common colour; the panels, text and grid are grey, the points
    coloured (max - min channel > 60).
    """
    img = np.asarray(Image.open(png).convert('RGB')).reshape(-1, 3).astype(int)
    colours, counts = np.unique(img, axis=0, return_counts=True)
    background = colours[np.argmax(counts)]
    differs = np.any(np.abs(img - background) > 24, axis=1)
    coloured = img.max(axis=1) - img.min(axis=1) > 60
    return float(np.mean(differs & coloured))


def _screenshot(url, out):
    subprocess.run([CHROMIUM, '--headless=new', '--no-sandbox', '--use-angle=swiftshader',
                    '--enable-unsafe-swiftshader', '--window-size=1280,800',
                    f'--screenshot={out}', url], capture_output=True, timeout=SETTLE_S + 120)


def view_share(args, tmp_path, **env):
    """
    Run ``view ARGS`` and return point_pixel_share of its headless Chromium screenshot.

    The view process serves on free ports with the environment's extra variables env.
    """
    proc = subprocess.Popen([sys.executable, '-m', 'ubot_lidar_sim', 'view', *args,
                             '--web-port', str(_free_port()), '--grpc-port', str(_free_port()),
                             '--serve-seconds', str(SETTLE_S + 100)],
                            stderr=subprocess.PIPE, text=True, env=_env(**env))
    server = None
    try:
        line = proc.stderr.readline()
        while 'viewer: ' not in line and line:
            line = proc.stderr.readline()
        server = _wrapper_server(line.split('viewer: ')[1].split()[0])
        shot = tmp_path / 'viewer.png'
        _screenshot(f'http://127.0.0.1:{server.server_port}/', shot)
        if os.environ.get('UBOT_LIDAR_SIM_SAVE_SCREENSHOT'):
            shutil.copy(shot, os.environ['UBOT_LIDAR_SIM_SAVE_SCREENSHOT'])
        return point_pixel_share(shot)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        if server is not None:
            server.shutdown()


def _env(**extra):
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(TREE), os.environ.get('PYTHONPATH', '')) if p), **extra)


NO_CHROMIUM = ("no chromium: Debian's chromium package (scripts/bootstrap.sh installs it)")


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_view_of_an_mcap_shows_the_points_in_headless_chromium(tmp_path):
    mcap = tmp_path / 'demo.mcap'
    assert main(['scan', '--world', 'demo', '--frames', '2', '--out', str(mcap)]) == 0
    share = view_share([str(mcap)], tmp_path)
    # bound: an empty view has no coloured pixel but the selection highlight (< 0.1 %);
    # two demo sweeps drew 0.76 % (docs/images/viewer_demo.png)
    assert share > 0.003, share


def _ring_cloud(stamp):
    """Return a PointCloud2 in map of 20 rings of 2000 points, 2-40 m, intensity by ring."""
    from ubot_lidar_sim.ros.conversions import array_to_pointcloud2
    a, r = np.meshgrid(np.linspace(0, 2 * np.pi, 2000), np.linspace(2.0, 40.0, 20))
    pts = np.zeros(a.size, dtype=[('x', '<f4'), ('y', '<f4'), ('z', '<f4'),
                                  ('intensity', '<f4')])
    pts['x'], pts['y'], pts['intensity'] = (r * np.cos(a)).ravel(), (r * np.sin(a)).ravel(), \
        r.ravel()
    msg = array_to_pointcloud2(pts, 'map', 0)
    msg.header.stamp = stamp
    return msg


@pytest.mark.ros
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_view_of_the_running_graph_shows_its_points_in_headless_chromium(tmp_path):
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import PointCloud2

    domain = 10 + (os.getpid() + 41) % 80
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    node = rclpy.create_node('cloud_source', context=context)
    pub = node.create_publisher(PointCloud2, '/points', qos_profile_sensor_data)
    timer = node.create_timer(0.2, lambda: pub.publish(_ring_cloud(
        node.get_clock().now().to_msg())))
    stop = threading.Event()
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)

    def spin():
        while not stop.is_set():
            executor.spin_once(timeout_sec=0.1)
    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    try:
        share = view_share([], tmp_path, ROS_DOMAIN_ID=str(domain))
        # bound: an empty view has no coloured pixel but the selection highlight (< 0.1 %);
        # the 40,000 points of the rings cover far more than the two sweeps of the test above
        assert share > 0.003, share
    finally:
        stop.set()
        spinner.join(timeout=5)
        executor.shutdown()
        node.destroy_timer(timer)
        node.destroy_node()
        rclpy.shutdown(context=context)


ACTOR_WORLD = """frame: map
objects:
  - {name: ground, type: plane, size_m: [100, 100], material: grass}
actors:
  - {name: car, type: box, size_m: [4, 2, 1.5], pose: {xyz: [0, 0, 0.75]}, material: vehicle,
     motion: {waypoints: [[6, -3, 0], [6, 3, 0]], speed_m_s: 2.0, loop: true}}
"""


def path_pixels(png):
    """Return the number of pixels within 60 (per channel) of the path's colour."""
    from ubot_lidar_sim.output.view import PATH_RGB
    img = np.asarray(Image.open(png).convert('RGB')).reshape(-1, 3).astype(int)
    return int(np.sum(np.all(np.abs(img - np.array(PATH_RGB)) < 60, axis=1)))


def test_a_recorded_files_actor_boxes_are_drawn_from_its_boxes_topic(tmp_path):
    from ubot_lidar_sim.cli.view import _replay
    from ubot_lidar_sim.output.view import View
    world = tmp_path / 'actors.yaml'
    world.write_text(ACTOR_WORLD)
    mcap = tmp_path / 'actors.mcap'
    assert main(['scan', '--world', str(world), '--set', 'channels=8', '--set',
                 'horizontal_samples=180', '--frames', '2', '--out', str(mcap)]) == 0
    view = View(web_port=_free_port(), grpc_port=_free_port())
    _replay(view, mcap)
    assert view.logged['world/lidar_3d_boxes'] == 2     # one box set per sweep


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_the_robots_path_is_visible_on_the_viewers_default_theme(tmp_path):
    mcap = tmp_path / 'drive.mcap'
    assert main(['scan', '--world', 'flat', '--set', 'channels=4', '--set',
                 'horizontal_samples=90', '--twist', '8', '0', '0', '0', '0', '0',
                 '--frames', '20', '--out', str(mcap)]) == 0
    view_share([str(mcap)], tmp_path)
    # bound: the path is 15 m long, 0.3 m wide, and the points' colours (the intensity ramp)
    # hold no violet; a white path on the light theme gave 0 such pixels
    assert path_pixels(tmp_path / 'viewer.png') > 20
