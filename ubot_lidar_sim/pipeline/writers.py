"""
Output formats of a run (``scan --out FILE``): one writer per file extension, the CLI's choice.

``WRITERS`` maps an extension to an ``OutputFormat``: the sensors (CLI names) whose runs it
writes and its writer ``(out, rig, trajectory, weather, frames, cfg, sensor) -> [paths]``. A
file format of one result (output/files.py FRAME_FORMATS) writes each sweep to its own file
(FILE_0000.ext when frames > 1), all renamed in together (atomic.all_or_none); ``.mcap``
(``recording``) writes the whole run, every sensor and topic, in one rosbag2 file (record.py).
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

from ubot_lidar_sim.output.atomic import all_or_none
from ubot_lidar_sim.output.files import FRAME_FORMATS
from ubot_lidar_sim.pipeline.record import record

RunWriter = Callable[..., List[Path]]


@dataclass(frozen=True)
class OutputFormat:
    """A run's file format: the writer and the sensors (CLI names) whose runs it writes."""

    write: RunWriter
    sensors: Tuple[str, ...]
    recording: bool = False     # the whole run in one file (check_recording applies)


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


WRITERS: Dict[str, OutputFormat] = {
    **{ext: OutputFormat(per_frame(fmt.write), fmt.sensors) for ext, fmt in FRAME_FORMATS.items()},
    '.mcap': OutputFormat(write_recording, ('lidar_3d', 'laser_scan', 'terrain_sensor', 'all'),
                          recording=True),
}


def extensions(sensor: str) -> Tuple[str, ...]:
    """Return the file extensions whose writer takes the sensor's runs, in WRITERS order."""
    return tuple(ext for ext, fmt in WRITERS.items() if sensor in fmt.sensors)
