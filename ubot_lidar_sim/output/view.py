"""
The live view: sweeps, the robot's path, actors and the weather in Rerun's web viewer.

rerun-sdk serves its web viewer (HTML, JS and Wasm shipped inside the wheel) from this machine
and the logged data over gRPC, so a browser on this machine shows them with no network and no
rviz2. Points are coloured by intensity, class or instance; the ``View`` methods take plain numpy
arrays, so the CLI, the dataset directories, MCAP files and a running ROS graph
(ros/live_view.py) share it. ``add_options`` gives ``view``, ``scan --view`` and ``run --view``
the same options.
"""

import argparse
from collections import Counter
from collections.abc import Callable, Sequence
import math
import sys
import time
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.output import view_server

COLOR_BY = ('intensity', 'class', 'instance')
WEB_PORT, GRPC_PORT = 9090, 9876


def add_options(p: argparse.ArgumentParser, flag: bool) -> argparse.ArgumentParser:
    """Add the viewer's options (and --view itself when flag) to an argparse parser."""
    if flag:
        p.add_argument('--view', action='store_true', help="show the sweeps in Rerun's web "
                       'viewer served on this machine (http://127.0.0.1:9090)')
    p.add_argument('--color-by', choices=COLOR_BY, default='intensity',
                   help='colour of the points (default intensity)')
    p.add_argument('--web-port', type=view_server.port, default=WEB_PORT, metavar='PORT')
    p.add_argument('--grpc-port', type=view_server.port, default=GRPC_PORT, metavar='PORT')
    p.add_argument('--bind', type=view_server.address, default=view_server.LOOPBACK,
                   metavar='ADDR', help=view_server.BIND_HELP)
    p.add_argument('--serve-seconds', type=float, default=0.0, metavar='S',
                   help='serve the viewer this long, then exit (default 0: until Ctrl-C)')
    return p


def weather_text(msg: Any) -> str:
    """Return the weather of an Environment message (rclpy or MCAP) in a few words."""
    vis = msg.visibility_m
    return (f'rain {msg.rain_rate_mm_h:g} mm/h, visibility '
            f'{"clear" if math.isinf(vis) else f"{vis:g} m"}, snow {msg.snowfall_rate_mm_h:g} '
            f'mm/h, snow on the ground {msg.snow_depth_m:g} m, smoke volumes {len(msg.smoke)}')


def _ramp(v):
    """Return (N, 3) uint8 colours of v in [0, 1]: blue, cyan, green, yellow, red."""
    stops = np.array([[48, 18, 59], [40, 150, 230], [60, 220, 120], [240, 210, 40],
                      [200, 30, 20]], float)
    x = np.clip(np.nan_to_num(v), 0.0, 1.0) * (len(stops) - 1)
    i = np.minimum(x.astype(int), len(stops) - 2)
    f = (x - i)[:, None]
    return (stops[i] * (1 - f) + stops[i + 1] * f).astype(np.uint8)


def _hashed(ids):
    """Return (N, 3) uint8 colours, one per id (0 grey), stable across sweeps."""
    ids = np.asarray(ids, np.uint32)
    h = (ids * np.uint32(2654435761)) & np.uint32(0xFFFFFF)
    out = np.stack([(h >> 16) & 255, (h >> 8) & 255, h & 255], axis=1).astype(np.uint8)
    out = np.maximum(out, 60)
    out[ids == 0] = 128
    return out


def colours(points: np.ndarray, color_by: str) -> NDArray[np.uint8]:
    """Return (N, 3) uint8 colours of a structured point array by intensity, class or instance."""
    names = points.dtype.names or ()
    if color_by == 'class' and 'class_id' in names:
        return _hashed(points['class_id'])
    if color_by == 'instance' and 'instance_id' in names:
        return _hashed(points['instance_id'])
    if 'intensity' in names:
        v = np.asarray(points['intensity'], float)
        top = max(float(np.percentile(v, 99)) if v.size else 1.0, 1e-6)
        return _ramp(v / top)
    return np.full((len(points), 3), 200, np.uint8)


#: The robot's path and position: saturated mid-luminance colours that stand out on Rerun's
#: light and dark themes alike (white vanished on the light theme, its default), outside the
#: intensity ramp of the points (blue-cyan-green-yellow-red) so that neither hides the other.
PATH_RGB = (170, 0, 255)
ROBOT_RGB = (255, 0, 150)


class View:
    """A Rerun recording served to the web viewer on this machine."""

    PATH_KEPT = 20_000      # positions of a robot's path kept (bounded however long it runs)

    def __init__(self, name: str = 'ubot_lidar_sim', web_port: int = WEB_PORT,
                 grpc_port: int = GRPC_PORT, color_by: str = 'intensity',
                 bind: str = view_server.LOOPBACK) -> None:
        view_server.check_ports(web_port, grpc_port, bind)
        # rerun (with pyarrow: ~1 GB of address space) loads only when a view is opened.
        import rerun as rr
        import rerun.blueprint as rrb

        self.rr = rr
        rr.init(name)
        uri = view_server.serve_grpc(rr, bind, grpc_port)      # on bind only (not 0.0.0.0)
        self.web_server = view_server.serve_web_viewer(bind, web_port, uri)
        rr.send_blueprint(rrb.Blueprint(
            rrb.Horizontal(rrb.Spatial3DView(origin='world', name='points, path, actors'),
                           rrb.TextDocumentView(origin='weather', name='weather'),
                           column_shares=[4, 1]), collapse_panels=True))
        rr.log('world', rr.ViewCoordinates.RIGHT_HAND_Z_UP, static=True)
        self.url = f'http://{view_server.url_host(bind)}:{web_port}/?url={uri}'
        self.color_by = color_by
        self._paths = {}
        self.logged = Counter()     # entity path -> messages logged to it

    def announce(self) -> None:
        """Print the viewer's URL on stderr."""
        print(f'viewer: {self.url} (open it in a browser on this machine; Ctrl-C ends)',
              file=sys.stderr)

    def serve(self, seconds: float, stopped: Callable[[], bool] = lambda: False) -> None:
        """Keep the viewer served: seconds (0: until Ctrl-C or stopped() is true)."""
        end = time.monotonic() + seconds if seconds > 0 else math.inf
        while time.monotonic() < end and not stopped():
            time.sleep(0.2)

    def serve_until_ctrl_c(self, seconds: float, done: str) -> None:
        """
        Serve as serve() does, where Ctrl-C is the documented end: report it with done, a line.

        For ``view`` and ``scan --view``, whose work (and files) are complete before serving.
        """
        try:
            self.serve(seconds)
        except KeyboardInterrupt:
            print(f'viewer ended (Ctrl-C); {done}', file=sys.stderr)

    def at(self, stamp_s: float) -> None:
        """Put what is logged next at time stamp_s (s)."""
        rr = self.rr
        rr.set_time('sim_time', duration=float(stamp_s))

    def points(self, entity: str, points: np.ndarray, world_from_sensor: ArrayLike | None = None
               ) -> int:
        """
        Log a structured point array (x, y, z, ...) in the world frame; returns the count.

        An organised cloud (the ouster layout) holds NaN cells where a beam had no return: they
        are not points and are left out.
        """
        rr = self.rr
        points = points[np.isfinite(points['x'])]
        xyz = np.stack([points['x'], points['y'], points['z']], axis=1).astype(np.float32)
        if world_from_sensor is not None:
            m = np.asarray(world_from_sensor, np.float64)
            xyz = (xyz @ m[:3, :3].T + m[:3, 3]).astype(np.float32)
        self._log(f'world/{entity}', rr.Points3D(xyz, colors=colours(points, self.color_by),
                                                 radii=0.06))
        return len(xyz)

    def pose(self, xyz: ArrayLike, robot: str = 'robot') -> None:
        """Extend the path of robot (an entity name: one per robot of a fleet) by one position."""
        rr = self.rr
        path = self._paths.setdefault(robot, [])
        path.append([float(v) for v in xyz[:3]])
        del path[:-self.PATH_KEPT]
        self._log(f'world/{robot}_path', rr.LineStrips3D([path], colors=[PATH_RGB], radii=0.15))
        self._log(f'world/{robot}', rr.Points3D([path[-1]], colors=[ROBOT_RGB], radii=0.3))

    def boxes(self, entity: str, centers: ArrayLike, half_sizes: ArrayLike,
              quaternions_xyzw: ArrayLike,
              labels: Sequence[str]) -> None:
        """Log 3D boxes: centres and half sizes (B, 3) m in the world frame, rotations, labels."""
        rr = self.rr
        self._log(f'world/{entity}', rr.Boxes3D(
            centers=np.asarray(centers, np.float32).reshape(-1, 3),
            half_sizes=np.asarray(half_sizes, np.float32).reshape(-1, 3),
            quaternions=np.asarray(quaternions_xyzw, np.float32).reshape(-1, 4),
            labels=list(labels), colors=[[255, 140, 0]]))

    def actors(self, names: Sequence[str], xyz: ArrayLike) -> None:
        """Log the actors' positions, labelled with their names."""
        rr = self.rr
        self._log('world/actors', rr.Points3D(np.asarray(xyz, np.float32).reshape(-1, 3),
                                              labels=list(names), colors=[[255, 140, 0]],
                                              radii=0.4))

    def weather(self, text: str) -> None:
        """Log the weather in force, as text."""
        rr = self.rr
        self._log('weather', rr.TextDocument(text))

    def _log(self, entity, item):
        self.rr.log(entity, item)
        self.logged[entity] += 1
