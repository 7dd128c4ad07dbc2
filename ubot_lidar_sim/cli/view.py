"""
The ``view`` command and ``--view``: sweeps in Rerun's web viewer on this machine.

``view FILE.mcap`` replays a recording (``scan --out X.mcap``, a dataset's sequences), ``view
DIR`` every ``*.mcap`` below a dataset directory; ``scan --view`` shows the sweeps as they are
computed (frame_logger on a pipeline.rig.TappedRig). The viewer is served at
http://127.0.0.1:9090 until Ctrl-C (or --serve-seconds).
"""

import math
from pathlib import Path
import sys

from mcap_ros2.reader import read_ros2_messages
import numpy as np

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.file_checks import open_checked, RECORDING_MAX_BYTES
from ubot_lidar_sim.output.view import View, weather_text

#: PointField datatypes (sensor_msgs/PointField) as numpy types.
_TYPES = {1: 'i1', 2: 'u1', 3: '<i2', 4: '<u2', 5: '<i4', 6: '<u4', 7: '<f4', 8: '<f8'}
ROBOT_FRAME = 'base_link'


def cloud_array(msg):
    """Return a PointCloud2 message's points as a structured numpy array."""
    fields = [f for f in msg.fields if f.datatype in _TYPES]
    dtype = np.dtype({'names': [f.name for f in fields],
                      'formats': [_TYPES[f.datatype] for f in fields],
                      'offsets': [f.offset for f in fields], 'itemsize': msg.point_step})
    return np.frombuffer(bytes(msg.data), dtype=dtype, count=msg.width * msg.height)


def _replay(view, path):
    """Log one MCAP file's clouds, robot path, actor frames and weather; return clouds logged."""
    try:
        with open_checked(path, RECORDING_MAX_BYTES) as f:      # never a FIFO, a device
            return _replay_messages(view, read_ros2_messages(f))
    except Exception as exc:  # noqa: B902 (a bad, truncated or empty recording: one line)
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else \
            f'{type(exc).__name__}: {exc}'.rstrip(': ')
        raise ConfigError('view', str(path), f'a readable MCAP recording ({why})') from None


def _replay_messages(view, messages):
    clouds, last_pose_s, actors = 0, -math.inf, {}
    for m in messages:
        msg, topic = m.ros_msg, m.channel.topic
        view.at(m.log_time_ns * 1e-9)
        if type(msg).__name__ == 'PointCloud2':
            clouds += 1
            view.points(topic.strip('/').replace('/', '_'), cloud_array(msg))
        elif topic == '/tf':
            for t in msg.transforms:
                xyz = (t.transform.translation.x, t.transform.translation.y,
                       t.transform.translation.z)
                if t.child_frame_id.endswith(ROBOT_FRAME):
                    if m.log_time_ns * 1e-9 - last_pose_s >= 0.1:
                        view.pose(xyz)
                        last_pose_s = m.log_time_ns * 1e-9
                elif t.header.frame_id in ('map', 'odom') and t.child_frame_id != 'odom':
                    actors[t.child_frame_id] = xyz
            if actors:
                view.actors(list(actors), list(actors.values()))
        elif topic.endswith('/boxes') and type(msg).__name__ == 'MarkerArray':
            _log_boxes(view, topic.strip('/').replace('/', '_'), msg.markers)
        elif topic.endswith('environment'):
            view.weather(weather_text(msg))
    return clouds


def _log_boxes(view, entity, markers):
    """Log a boxes MarkerArray (ns 'boxes' cubes, 'labels' names by id) in its sensor frame."""
    names = {m.id: m.text for m in markers if m.ns == 'labels'}
    cubes = [m for m in markers if m.ns == 'boxes']
    view.boxes(entity,
               [(m.pose.position.x, m.pose.position.y, m.pose.position.z) for m in cubes],
               [(m.scale.x / 2, m.scale.y / 2, m.scale.z / 2) for m in cubes],
               [(m.pose.orientation.x, m.pose.orientation.y, m.pose.orientation.z,
                 m.pose.orientation.w) for m in cubes],
               [names.get(m.id, str(m.id)) for m in cubes])


def sources(target):
    """Return the MCAP files of a file or a dataset directory (ConfigError when none)."""
    path = Path(target).expanduser()
    files = [path] if path.is_file() else sorted(path.rglob('*.mcap')) if path.is_dir() else []
    if not files or any(f.suffix != '.mcap' for f in files):
        raise ConfigError('view', target, 'an .mcap file or a directory holding .mcap files '
                          '(a dataset)')
    return files


def frame_logger(view, weather):
    """Return on_frame(frame) for pipeline.rig.TappedRig: logs points and pose to view."""
    first = []

    def on_frame(fr):
        view.at(fr.stamp_s)
        if not first:               # on the timeline at the first sweep, not before it
            first.append(fr.stamp_s)
            view.weather(weather.describe())
        pose = getattr(fr.result, 'sensor_pose', None)
        points = getattr(fr.result, 'points', None)
        names = getattr(getattr(points, 'dtype', None), 'names', None) or ()
        if 'x' in names:
            view.points(fr.sensor.name, points, pose)
        if pose is not None:
            view.pose(np.asarray(pose)[:3, 3])
    return on_frame


def command(args, checked=None):
    """Replay the MCAP files of args.target in the web viewer; return 0."""
    files = sources(args.target)
    view = View(web_port=args.web_port, grpc_port=args.grpc_port, color_by=args.color_by,
                bind=args.bind)
    clouds = sum(_replay(view, f) for f in files)
    print(f'view: {clouds} clouds from {len(files)} file(s)', file=sys.stderr)
    view.announce()
    view.serve_until_ctrl_c(args.serve_seconds, 'nothing was written')
    return 0
