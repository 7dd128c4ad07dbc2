"""
One recording: a rig driven along a trajectory in one weather, written as rosbag2 MCAP.

Topics: each sensor's own (PointCloud2 in its ``point_layout``, LaserScan, TerrainSensor),
``/tf`` (world_frame -> base_frame at ``tf_rate_hz``), ``/tf_static`` (base_frame -> each
sensor frame, once), ``/environment`` (1 Hz) and ``/clock`` (with /tf). Stamps are simulated
time from rosbag.CLOCK_START_NS; a sensor message is logged when its sweep ends, as a driver
publishes it. Optional labels: one .npz with ``<sensor>/<frame:04d>/class_id`` (P,) uint16,
``.../material`` (P,) uint8 and ``.../instance_id`` (P,) uint16 (0 the static world, 1.. the
world's actors) per lidar sweep, aligned with the cloud's points, and
``<sensor>/stamp_ns`` (frames,) int64. In a world with actors, ``/<lidar sensor name>/boxes``
(visualization_msgs/MarkerArray, as the node's ~/boxes): every actor's box at each sweep's
stamp, logged with its cloud. Other formats (dataset/formats.py) take the frames as
they come; every file of a recording is renamed in together at its end (atomic.all_or_none).
"""

import contextlib
from dataclasses import dataclass, field
import math

import numpy as np

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.poses import matrix_to_quaternion
from ubot_lidar_sim.core.sensors.organised_rows import layout_cloud
from ubot_lidar_sim.core.sensors.point_layouts import point_fields, returned_count
from ubot_lidar_sim.core.world.world import WORLD_PARAMETERS
from ubot_lidar_sim.output import messages, rosbag
from ubot_lidar_sim.output.atomic import all_or_none
from ubot_lidar_sim.output.boxes import actor_boxes
from ubot_lidar_sim.output.files import NpzStream
from ubot_lidar_sim.output.ros_names import check_frame_id, check_tf_tree, check_topic
from ubot_lidar_sim.pipeline.rig import deskewed_frame, end_s as recording_end_s, frame_counts

ENVIRONMENT_PERIOD_S = 1.0
# Size limits, checked before anything is allocated (docs/cli-and-datasets.md, "Limits of a
# recording"). Memory does not grow with the length: sweeps are written as they come, /tf poses
# are computed in blocks.
MAX_FRAMES = 100_000            # lead sweeps per recording
MAX_SWEEPS = 1_000_000         # sweeps of all sensors (a fast one beside a slow lead)
MAX_TF_TICKS = 10_000_000       # /tf (and /clock) messages per recording: ~1.5 GB of MCAP
TICK_BLOCK = 4096               # /tf poses computed at once
RESERVED_TOPICS = ('/tf', '/tf_static', '/clock', '/environment')
MSG_TYPES = {'lidar_3d': rosbag.POINTS_MSG, 'laser_scan': rosbag.SCAN_MSG,
             'terrain_sensor': rosbag.TERRAIN_MSG}


@dataclass
class RecordStats:
    """
    What a recording holds: frames per sensor name, points (lidar), messages per topic.

    files: {format: [file names relative to the output directory]} of the other formats.
    """

    frames: dict = field(default_factory=dict)
    points: int = 0
    messages: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)


class _NoBag:
    """Stands for the BagWriter of a recording without MCAP: writes nothing."""

    counts = {}

    def write(self, *args, **kwargs):
        """Drop the message."""


def _tick_count(end_s, rate_hz):
    """Ticks 0, 1 / rate_hz, ... up to the first at or after end_s: how many."""
    return int(math.ceil(end_s * rate_hz - 1e-9)) + 1


def check_sensor_topic(topic, where):
    """Raise ConfigError(where, ...) unless topic is a valid topic name not of the recorder."""
    check_topic(topic, where)
    if topic in RESERVED_TOPICS:
        raise ConfigError(where, topic, f'a topic of its own, not one of '
                          f'{", ".join(RESERVED_TOPICS)} (the recording writes them)')
    return topic


def check_recording(sensors, frames, base_frame='base_link', tf_rate_hz=100.0,
                    frames_name='frames'):
    """
    Refuse (ConfigError) a recording that cannot work or would be invalid, before it starts.

    Sizes: at most MAX_FRAMES lead sweeps, MAX_SWEEPS sweeps of all sensors and MAX_TF_TICKS
    /tf messages (duration x tf_rate_hz). One world, world frame and material table. Names
    (output/ros_names.py): topics fully qualified and not reserved, frame ids valid, and
    world_frame -> base_frame -> sensor frames a tree.
    """
    if not 1 <= frames <= MAX_FRAMES:
        raise ConfigError(frames_name, frames, f'an integer 1-{MAX_FRAMES} per recording')
    counts = frame_counts(sensors, frames)
    if sum(counts) > MAX_SWEEPS:
        raise ConfigError(frames_name, frames, f'a recording of at most {MAX_SWEEPS} sweeps of '
                          f'all sensors; {frames} of {sensors[0].name!r} at '
                          f'{sensors[0].cfg.rate_hz:g} Hz take {sum(counts):.3g} (rates: '
                          f'{", ".join(f"{s.cfg.rate_hz:g}" for s in sensors)} Hz)')
    duration_s = recording_end_s(sensors, frames)
    if duration_s * tf_rate_hz + 1 > MAX_TF_TICKS:
        raise ConfigError(frames_name, frames, f'a recording of at most {MAX_TF_TICKS} /tf '
                          f'messages; {frames} sweeps at {sensors[0].cfg.rate_hz:g} Hz last '
                          f'{duration_s:g} s, {duration_s * tf_rate_hz:.3g} messages at '
                          f'{tf_rate_hz:g} Hz (fewer frames, or a higher rate_hz)')
    lead = sensors[0]
    for s in sensors[1:]:           # the rig loads one world: every sensor must name the same
        for name in ('world_frame', *WORLD_PARAMETERS):
            mine, theirs = (getattr(x.cfg, name, None) for x in (s, lead))
            if None not in (mine, theirs) and mine != theirs:
                raise ConfigError(f'{name} of sensor {s.name!r}', mine, f'{theirs!r} as for '
                                  f'{lead.name!r}: a recording has one world, one world frame '
                                  'and one material table')
    world_frame = lead.cfg.world_frame
    edges = [('base_frame', world_frame, base_frame, None)]
    for s in sensors:
        check_sensor_topic(s.topic, f'topic of sensor {s.name!r}')
        check_frame_id(s.cfg.world_frame, f'world_frame of sensor {s.name!r}')
        if s.kind != 'terrain_sensor':
            edges.append((f'frame_id of sensor {s.name!r}', base_frame, s.frame_id,
                          np.asarray(s.mount, dtype=np.float64).tobytes()))
    check_tf_tree(edges)


def record(path, rig, base_at, weather, frames, labels_path=None, base_frame='base_link',
           tf_rate_hz=100.0, compression='none', make_sinks=None, deskew=False):
    """
    Simulate ``frames`` lead sweeps of the Rig ``rig`` and write them to the MCAP ``path``.

    deskew: the MCAP's lidar_3d clouds ego-motion compensated (rig.deskewed_frame; the sinks
    get the frames as computed).

    base_at(times (C,) s) -> world-from-base (C, 4, 4); weather: core Weather. path None: no
    MCAP. make_sinks() -> {format: sink} (dataset/formats.py), called inside the recording's
    all_or_none: each sink.add(frame), then sink.close() -> its files. Every file is atomic and
    all appear together (temporary names, then renames). Returns RecordStats.
    """
    with all_or_none():
        return _record(path, rig, base_at, weather, frames, labels_path, base_frame,
                       tf_rate_hz, compression, make_sinks() if make_sinks else {}, deskew)


def _record(path, rig, base_at, weather, frames, labels_path, base_frame, tf_rate_hz,
            compression, sinks, deskew=False):
    sensors = rig.sensors
    world_frame = sensors[0].cfg.world_frame
    n_ticks = _tick_count(recording_end_s(sensors, frames), tf_rate_hz)
    stats = RecordStats(frames={s.name: 0 for s in sensors})
    stamps = {}
    bag_writer = rosbag.BagWriter(path, compression) if path is not None else \
        contextlib.nullcontext(_NoBag())
    labels_writer = NpzStream(labels_path) if labels_path is not None else \
        contextlib.nullcontext()
    with bag_writer as bag, labels_writer as labels:
        # One transform per frame: sensors sharing a frame share its mount (check_recording).
        statics = list({s.frame_id: (base_frame, s.frame_id, rosbag.ns(0.0), s.mount)
                        for s in sensors if s.kind != 'terrain_sensor'}.values())
        if statics:
            bag.write('/tf_static', rosbag.TF_MSG, rosbag.ns(0.0),
                      rosbag.tf_msg(statics, matrix_to_quaternion), latched=True)
        ticks = _Ticks(bag, base_at, weather, (world_frame, base_frame), n_ticks, tf_rate_hz)
        boxes = box_topics(rig) if path is not None else {}
        for fr in rig.frames(base_at, weather, frames):
            ticks.until(fr.publish_s)
            for sink in sinks.values():
                sink.add(fr)
            msg = _sensor_message(deskewed_frame(fr, base_at) if deskew else fr, stats, labels,
                                  stamps)
            bag.write(fr.sensor.topic, MSG_TYPES[fr.sensor.kind], rosbag.ns(fr.publish_s), msg)
            if fr.sensor.name in boxes:
                bag.write(boxes[fr.sensor.name], messages.MARKER_ARRAY,
                          rosbag.ns(fr.publish_s), _boxes_message(fr, rig.world))
            stats.frames[fr.sensor.name] += 1
        ticks.until(math.inf)
        stats.messages = dict(bag.counts)
        for name, values in stamps.items():
            labels.add(f'{name}/stamp_ns', np.asarray(values, dtype=np.int64))
    stats.files = {fmt: sink.close() for fmt, sink in sinks.items()}
    return stats


def _sensor_message(fr, stats, labels, stamps):
    """Return a frame's message; a sweep's labels go to labels now (no sweep is kept)."""
    s, stamp_ns = fr.sensor, rosbag.ns(fr.stamp_s)
    if s.kind == 'laser_scan':
        return rosbag.scan_msg(fr.result, s.frame_id, stamp_ns)
    if s.kind != 'lidar_3d':
        return rosbag.terrain_msg(fr.result, s.frame_id, stamp_ns)
    cloud, points, height = layout_cloud(fr.result, s.cfg, stamp_ns)    # labels: points
    msg = rosbag.points_msg(cloud, point_fields(cloud.dtype), s.frame_id, stamp_ns, height)
    stats.points += returned_count(cloud)
    if labels is not None:
        key = f'{s.name}/{fr.index:04d}'
        labels.add(f'{key}/class_id', points['class_id'])
        labels.add(f'{key}/instance_id', points['instance_id'])
        labels.add(f'{key}/material', points['material'])
        stamps.setdefault(s.name, []).append(stamp_ns)
    return msg


def box_topics(rig):
    """
    Return {lidar_3d sensor name: boxes topic ``/<name>/boxes``}; {} in a world without actors.

    The node's ~/boxes of a node named as the sensor. A name no topic can hold (a leading
    digit) raises ConfigError naming the sensor.
    """
    world = getattr(rig, 'world', None)
    if world is None or not world.actors:
        return {}
    return {s.name: check_sensor_topic(f'/{s.name}/boxes', f'name of sensor {s.name!r} (its '
                                       'boxes topic /<name>/boxes)')
            for s in rig.sensors if s.kind == 'lidar_3d'}


def _boxes_message(fr, world):
    """Return the MarkerArray of every actor's box at a sweep's stamp, in its sensor frame."""
    s = fr.sensor
    items, poses = actor_boxes(world, None, fr.stamp_s, fr.result.sensor_pose)
    return rosbag.to_rosbags(messages.box_markers(items, poses, s.frame_id,
                                                  rosbag.ns(fr.stamp_s), 2.0 / s.cfg.rate_hz))


class _Ticks:
    """The /tf, /clock and /environment ticks of a recording, written up to a time."""

    def __init__(self, bag, base_at, weather, frames, n_ticks, tf_rate_hz):
        self.bag, self.base_at, self.weather = bag, base_at, weather
        self.world_frame, self.base_frame = frames
        self.n_ticks, self.rate_hz = n_ticks, tf_rate_hz
        self.env_every = max(1, int(round(ENVIRONMENT_PERIOD_S * tf_rate_hz)))
        self.next = 0
        self.block = (0, np.zeros(0), np.zeros((0, 4, 4)))     # first tick, times (B,), poses

    def until(self, t_s):
        """Write every tick not written yet at or before t_s (s)."""
        bag, world_frame = self.bag, self.world_frame
        while self.next < self.n_ticks and self.next / self.rate_hz <= t_s + 1e-12:
            j = self.next
            if j - self.block[0] >= len(self.block[1]):
                times = np.arange(j, min(j + TICK_BLOCK, self.n_ticks)) / self.rate_hz
                self.block = (j, times, self.base_at(times))
            t_ns = rosbag.ns(self.block[1][j - self.block[0]])
            if j % self.env_every == 0:
                bag.write('/environment', rosbag.ENVIRONMENT_MSG, t_ns,
                          rosbag.environment_msg(self.weather, world_frame, t_ns), latched=True)
            bag.write('/tf', rosbag.TF_MSG, t_ns, rosbag.tf_msg(
                [(world_frame, self.base_frame, t_ns, self.block[2][j - self.block[0]])],
                matrix_to_quaternion))
            bag.write('/clock', rosbag.CLOCK_MSG, t_ns, rosbag.clock_msg(t_ns))
            self.next += 1
