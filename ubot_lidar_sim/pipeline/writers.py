"""
Output formats of a run (``scan --out FILE``), registered in one place: the CLI's choice.

``WRITERS`` maps an extension to an ``OutputFormat``: the sensors (CLI names) whose runs it
writes and its writer ``(out, rig, trajectory, weather, frames, cfg, sensor) -> [paths]``. A
file format of one result registers its frame writer (output/files.py) with
``register_frame_format``: each sweep goes to its own file (FILE_0000.ext when frames > 1), all
renamed in together (atomic.all_or_none), and ``write_frame`` writes one result (``scan
--robot``); ``.mcap`` (``recording``) writes the whole run, every sensor and topic, in one
rosbag2 file (record.py). ``check_lidar(cfg)`` refuses a lidar_3d config the format cannot
write (``.pcd``: a point layout PCD cannot hold). A new format is its writer and one
registration here.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from ubot_lidar_sim.output import files, pcd
from ubot_lidar_sim.output.atomic import all_or_none
from ubot_lidar_sim.pipeline.record import record

RunWriter = Callable[..., List[Path]]


def any_lidar(cfg: Any) -> None:
    """Accept any lidar_3d config (a format that writes every point layout)."""


def pcd_layout(cfg: Any) -> None:
    """Refuse (ConfigError 'point_layout') a lidar_3d config whose layout PCD cannot hold."""
    pcd.check_layout(cfg.point_layout)


@dataclass(frozen=True)
class OutputFormat:
    """A run's file format: the writer and the sensors (CLI names) whose runs it writes."""

    write: RunWriter
    sensors: Tuple[str, ...]
    recording: bool = False     # the whole run in one file (check_recording applies)
    write_frame: Optional[files.Writer] = None      # one result to one file (frame formats)
    check_lidar: Callable[[Any], None] = any_lidar  # raises ConfigError for a config it refuses


def frame_path(out, k, frames):
    """Output name of sweep k: FILE_0000.ext when frames > 1."""
    out = Path(out)
    return out if frames == 1 else out.with_name(f'{out.stem}_{k:04d}{out.suffix}')


def per_frame(write_frame: Callable[[Path, Any, Any, str], None]) -> RunWriter:
    """Return the run writer that writes each sweep with write_frame(path, result, cfg, sensor)."""
    def write(out, rig, trajectory, weather, frames, cfg, sensor):
        written = []
        with all_or_none():     # a failed frame leaves an earlier run's files untouched
            for fr in rig.frames(trajectory, weather, frames):
                path = frame_path(out, fr.index, frames)
                res = (fr.stamp_s, fr.result) if sensor == 'terrain_sensor' else fr.result
                write_frame(path, res, cfg, sensor)
                written.append(path)
        return written
    return write


def write_recording(out, rig, trajectory, weather, frames, cfg, sensor):
    """Record the run as one rosbag2 MCAP file (every sensor of the rig); returns [out]."""
    record(Path(out), rig, trajectory, weather, frames)
    return [Path(out)]


WRITERS: Dict[str, OutputFormat] = {}


def register_format(ext: str, write: RunWriter, sensors: Tuple[str, ...],
                    recording: bool = False) -> None:
    """Add the --out format of a whole run, as '.ext' (WRITERS keeps registration order)."""
    WRITERS[ext] = OutputFormat(write, sensors, recording)


def register_frame_format(ext: str, write_frame: files.Writer, sensors: Tuple[str, ...],
                          check_lidar: Callable[[Any], None] = any_lidar) -> None:
    """Add a file format of one result: a run writes one file per sweep (per_frame)."""
    WRITERS[ext] = OutputFormat(per_frame(write_frame), sensors, write_frame=write_frame,
                                check_lidar=check_lidar)


register_frame_format('.npz', files.write_npz_result, ('lidar_3d', 'laser_scan', 'terrain_sensor'))
register_frame_format('.ply', files.write_ply_result, ('lidar_3d',))
register_frame_format('.pcd', files.write_pcd_result, ('lidar_3d',), check_lidar=pcd_layout)
register_frame_format('.json', files.write_json_result, ('laser_scan', 'terrain_sensor'))
register_format('.mcap', write_recording, ('lidar_3d', 'laser_scan', 'terrain_sensor', 'all'),
                recording=True)


def extensions(sensor: str) -> Tuple[str, ...]:
    """Return the file extensions whose writer takes the sensor's runs, in WRITERS order."""
    return tuple(ext for ext, fmt in WRITERS.items() if sensor in fmt.sensors)
