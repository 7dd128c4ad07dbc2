"""
One recording: a rig driven along a trajectory in one weather, written as rosbag2 MCAP.

Topics: each sensor's own (PointCloud2 in its ``point_layout``, LaserScan, TerrainSensor),
``/tf`` (world_frame -> base_frame at ``tf_rate_hz``), ``/tf_static`` (base_frame -> each
sensor frame, once), ``/environment`` (1 Hz) and ``/clock`` (with /tf). Stamps are simulated
time from rosbag.CLOCK_START_NS; a sensor message is logged when its sweep ends, as a driver
publishes it. Optional labels: one .npz with ``<sensor>/<frame:04d>/class_id`` and
``.../material`` (P,) uint8 and ``.../instance_id`` (P,) uint16 (0 the static world, 1.. the
world's actors) per lidar sweep, aligned with the cloud's points, and
``<sensor>/stamp_ns`` (frames,) int64. Other formats (dataset/formats.py) take the frames as
they come; every file of a recording is renamed in together at its end (files.all_or_none).
"""

import contextlib
from dataclasses import dataclass, field
import math

import numpy as np

from ubot_lidar_sim.core.poses import matrix_to_quaternion
from ubot_lidar_sim.core.sensors.point_layouts import configured_layout, point_fields
from ubot_lidar_sim.dataset.rig import schedule
from ubot_lidar_sim.output import rosbag
from ubot_lidar_sim.output.files import all_or_none, write_npz

ENVIRONMENT_PERIOD_S = 1.0
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


def _ticks(end_s, rate_hz):
    """Tick times (J,) s: 0, 1 / rate_hz, ... up to the first at or after end_s."""
    n = int(math.ceil(end_s * rate_hz - 1e-9)) + 1
    return np.arange(n) / rate_hz


def record(path, rig, base_at, weather, frames, labels_path=None, base_frame='base_link',
           tf_rate_hz=100.0, compression='none', make_sinks=None):
    """
    Simulate ``frames`` lead sweeps of the Rig ``rig`` and write them to the MCAP ``path``.

    base_at(times (C,) s) -> world-from-base (C, 4, 4); weather: core Weather. path None: no
    MCAP. make_sinks() -> {format: sink} (dataset/formats.py), called inside the recording's
    all_or_none: each sink.add(frame), then sink.close() -> its files. Every file is atomic and
    all appear together (temporary names, then renames). Returns RecordStats.
    """
    with all_or_none():
        return _record(path, rig, base_at, weather, frames, labels_path, base_frame,
                       tf_rate_hz, compression, make_sinks() if make_sinks else {})


def _record(path, rig, base_at, weather, frames, labels_path, base_frame, tf_rate_hz,
            compression, sinks):
    sensors = rig.sensors
    world_frame = sensors[0].cfg.world_frame
    end_s = schedule(rig.sensors, frames)[-1][0]
    tick_s = _ticks(end_s, tf_rate_hz)
    tick_pose = base_at(tick_s)
    env_every = max(1, int(round(ENVIRONMENT_PERIOD_S * tf_rate_hz)))
    stats = RecordStats(frames={s.name: 0 for s in sensors})
    labels = {}
    bag_writer = rosbag.BagWriter(path, compression) if path is not None else \
        contextlib.nullcontext(_NoBag())
    with bag_writer as bag:
        statics = [(base_frame, s.frame_id, rosbag.ns(0.0), s.mount)
                   for s in sensors if s.kind != 'terrain_sensor']
        if statics:
            bag.write('/tf_static', rosbag.TF_MSG, rosbag.ns(0.0),
                      rosbag.tf_msg(statics, matrix_to_quaternion), latched=True)
        next_tick = 0

        def ticks_until(t_s):
            nonlocal next_tick
            while next_tick < len(tick_s) and tick_s[next_tick] <= t_s + 1e-12:
                j, t_ns = next_tick, rosbag.ns(tick_s[next_tick])
                if j % env_every == 0:
                    bag.write('/environment', rosbag.ENVIRONMENT_MSG, t_ns,
                              rosbag.environment_msg(weather, world_frame, t_ns), latched=True)
                bag.write('/tf', rosbag.TF_MSG, t_ns, rosbag.tf_msg(
                    [(world_frame, base_frame, t_ns, tick_pose[j])], matrix_to_quaternion))
                bag.write('/clock', rosbag.CLOCK_MSG, t_ns, rosbag.clock_msg(t_ns))
                next_tick += 1

        for fr in rig.frames(base_at, weather, frames):
            ticks_until(fr.publish_s)
            for sink in sinks.values():
                sink.add(fr)
            s, stamp_ns, log_ns = fr.sensor, rosbag.ns(fr.stamp_s), rosbag.ns(fr.publish_s)
            if s.kind == 'lidar_3d':
                cloud = configured_layout(fr.result.points, s.cfg, stamp_ns)
                msg = rosbag.points_msg(cloud, point_fields(cloud.dtype), s.frame_id, stamp_ns)
                stats.points += len(cloud)
                key = f'{s.name}/{fr.index:04d}'
                labels[f'{key}/class_id'] = fr.result.points['class_id']
                labels[f'{key}/instance_id'] = fr.result.points['instance_id']
                labels[f'{key}/material'] = fr.result.points['material']
                labels.setdefault(f'{s.name}/stamp_ns', []).append(stamp_ns)
            elif s.kind == 'laser_scan':
                msg = rosbag.scan_msg(fr.result, s.frame_id, stamp_ns)
            else:
                msg = rosbag.terrain_msg(fr.result, s.frame_id, stamp_ns)
            bag.write(s.topic, MSG_TYPES[s.kind], log_ns, msg)
            stats.frames[s.name] += 1
        ticks_until(tick_s[-1])
        stats.messages = dict(bag.counts)
        if labels_path is not None:
            for name in [k for k in labels if k.endswith('/stamp_ns')]:
                labels[name] = np.asarray(labels[name], dtype=np.int64)
            write_npz(labels_path, labels)
    stats.files = {fmt: sink.close() for fmt, sink in sinks.items()}
    return stats
