"""
The on-disk formats of a dataset sequence: which files each writes, and its writer (sink).

``mcap`` (rosbag2 + labels .npz), ``semantickitti`` and ``pcd``; the sinks are fed frame by
frame during a recording.

- ``mcap``: ``DIR/seq_NNNN.mcap`` and ``DIR/seq_NNNN.labels.npz`` (pipeline/record.py).
- ``semantickitti``: ``DIR/sequences/NN/`` (output/semantickitti.py) of the rig's FIRST
  lidar_3d sensor (one LiDAR per SemanticKITTI sequence; the others are in the MCAP and the
  PCD files), NN = the sequence's index in the spec (00-99), plus ``DIR/poses/NN.txt`` and
  ``DIR/semantic-kitti.yaml``.
- ``pcd``: ``DIR/pcd/seq_NNNN/<sensor name>/NNNNNN.pcd``, one binary PCD per sweep of every
  lidar_3d sensor, in its ``point_layout`` (output/pcd.py).

Each writer writes into a staged tree of the recording's atomic.all_or_none(), so a sequence's
formats appear all together under their final names, or none. ``SEQUENCE_FORMATS`` registers
each format in one place: its sink (None: the recording's own MCAP), whether it needs a
lidar_3d sensor, its rules for the lidars, a sequence number, the number of sequences and an
output directory, the paths a sequence of it takes, the files its sequences share, and the
``scan --sensor`` values whose sweeps ``scan --format NAME`` writes as one sequence of it
(none: not a ``scan`` format); ``sinks``, ``check_rig``, the dataset spec and runner and
cli/scan.py read it. A new format is its sink, one ``register_format`` call and its name in
dataset/arguments.py FORMATS (the light ``--help``).
"""

import hashlib
from pathlib import Path
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.dataset.arguments import FORMATS
from ubot_lidar_sim.dataset.box_sink import BoxSink, OpenPCDetSink
from ubot_lidar_sim.dataset.perception import Perception
from ubot_lidar_sim.output import kitti_object, openpcdet, pcd, semantickitti
from ubot_lidar_sim.output.atomic import staged_tree
from ubot_lidar_sim.output.files import layout_points
from ubot_lidar_sim.pipeline.rig import deskewed_frame

DEFAULT_FORMATS = ('mcap',)


def parse_formats(value, name='--formats'):
    """Return the tuple of format names of 'a,b' or [a, b]; ConfigError names a bad one."""
    items = value.split(',') if isinstance(value, str) else value
    allowed = f'a non-empty list of {", ".join(FORMATS)}, each once'
    if not isinstance(items, (list, tuple)) or not items:
        raise ConfigError(name, value, allowed)
    out = tuple(str(v).strip() for v in items)
    for v in out:
        if v not in FORMATS:
            raise ConfigError(name, v, allowed)
    if len(set(out)) != len(out):
        raise ConfigError(name, value, allowed)
    return out


def check_rig(formats, sensors, name='formats'):
    """Refuse formats the rig (RigSensors) cannot fill: no lidar_3d, a layout PCD cannot hold."""
    lidars = [s for s in sensors if s.kind == 'lidar_3d']
    for fmt in SEQUENCE_FORMATS:
        if fmt in formats and SEQUENCE_FORMATS[fmt].needs_lidar and not lidars:
            others = ' or '.join(n for n, f in SEQUENCE_FORMATS.items() if not f.needs_lidar)
            raise ConfigError(name, fmt, f'{others} only, for a rig without a lidar_3d sensor')
    for fmt in formats:
        SEQUENCE_FORMATS[fmt].check_lidars(lidars)


def check_pcd_layouts(lidars):
    """Refuse (ConfigError) a lidar_3d sensor whose point_layout a PCD file cannot hold."""
    for s in lidars:
        pcd.check_layout(s.cfg.point_layout)


def mcap_files(out_dir, seq_name):
    """Return (DIR/<seq_name>.mcap, DIR/<seq_name>.labels.npz) of a sequence."""
    out_dir = Path(out_dir)
    return out_dir / f'{seq_name}.mcap', out_dir / f'{seq_name}.labels.npz'


def mcap_paths(out_dir, seq_index, seq_name):
    """Return a sequence's MCAP, labels and bag directory (rosbags writes the bag in it)."""
    return [*mcap_files(out_dir, seq_name), Path(out_dir) / seq_name]


def pcd_dir(out_dir, seq_name):
    """Return DIR/pcd/<seq_name>."""
    return Path(out_dir) / 'pcd' / seq_name


def kitti_paths(out_dir, seq_index, seq_name):
    """Return DIR/sequences/NN and DIR/poses/NN.txt (and DIR/poses/NN) of a sequence."""
    poses = Path(out_dir) / 'poses'
    return [semantickitti.sequence_dir(out_dir, seq_index), poses / f'{seq_index:02d}.txt',
            poses / f'{seq_index:02d}']


class KittiSink:
    """The SemanticKITTI sequence of the first lidar_3d sensor of a recording."""

    def __init__(self, out_dir, number, sensors, key, options=Perception(), base_at=None):
        self.sensor = next(s for s in sensors if s.kind == 'lidar_3d')
        self.writer = semantickitti.SequenceWriter(out_dir, number, key, options.label_map)
        # deskew: the scans in the sensor frame at their stamps (output/deskew.py)
        self.base_at = base_at if options.deskews() else None

    def add(self, frame):
        """Write the frame when it is a sweep of the sensor."""
        if frame.sensor is self.sensor:
            if self.base_at is not None:
                frame = deskewed_frame(frame, self.base_at)
            self.writer.add(frame.result.points, frame.result.sensor_pose, frame.stamp_s)

    def close(self):
        """Write the sequence's text files; returns its files (relative to DIR)."""
        self.writer.close()
        return self.writer.files()


class PcdSink:
    """One binary PCD per sweep of every lidar_3d sensor: DIR/pcd/<seq>/<sensor>/NNNNNN.pcd."""

    def __init__(self, out_dir, seq_name, base_at=None):
        """base_at: the base trajectory to deskew the sweeps with (None: as computed)."""
        self.root = Path(out_dir)
        self.final = pcd_dir(out_dir, seq_name)
        self.tmp = staged_tree(self.final)
        self.names = []
        self.base_at = base_at

    def add(self, frame):
        """Write the frame's PCD when it is a lidar_3d sweep."""
        s = frame.sensor
        if s.kind != 'lidar_3d':
            return
        name = f'{s.name}/{frame.index:06d}.pcd'
        (self.tmp / s.name).mkdir(exist_ok=True)
        if self.base_at is not None:
            frame = deskewed_frame(frame, self.base_at)
        points, height = layout_points(frame.result, s.cfg)
        pcd.save_pcd(self.tmp / name, points, s.cfg.point_layout, height)
        self.names.append(name)

    def close(self):
        """Return the files written (relative to DIR)."""
        rel = self.final.relative_to(self.root)
        return sorted(str(rel / n) for n in self.names)


def write_kitti_label_map(out_dir, options, numbers):
    """Write DIR/semantic-kitti.yaml of the sequences numbers; return [its name]."""
    semantickitti.write_label_map(out_dir, options.label_map, numbers, options.split)
    return [semantickitti.LABEL_MAP]


class SinkArgs(NamedTuple):
    """What a sink is made of: the recording's directory, sequence, sensors and options."""

    out_dir: Any
    seq_index: int
    seq_name: str
    sensors: Any
    key: str
    options: Perception
    world: Any
    base_at: Any


def any_lidars(lidars: Sequence[Any]) -> None:
    """Accept any lidar_3d sensors (a format that writes every point layout)."""


def any_number(number: int, name: str) -> None:
    """Accept any sequence number (a format that does not number its sequences itself)."""


def no_paths(out_dir: Any, seq_index: int, seq_name: str) -> List[Path]:
    """Return [] (a format that writes no path of its own)."""
    return []


def always_free(out_dir: Any, number: int, key: str, name: str = '--out') -> None:
    """Accept any output directory (a format that refuses none holding another sequence)."""


def no_shared_files(out_dir: Any, options: Perception, numbers: Sequence[int]) -> List[str]:
    """Write no file shared by the sequences; return []."""
    return []


class SequenceFormat(NamedTuple):
    """
    A format of a dataset sequence: its sink factory (None: the MCAP), its needs and rules.

    check_lidars(lidars), check_number(number, name) and check_free(out_dir, number, key,
    name) raise ConfigError (the last two naming name); max_sequences: the most sequences a
    spec may have (a format numbering them by their index, 00 to max_sequences - 1; None: no
    limit); paths(out_dir, seq_index, seq_name): the final paths of a sequence (its files and
    directories; their temporaries are named '.<name>.*' beside them), which the dataset runner
    removes to write the sequence again; write_shared(out_dir, options, numbers) writes the
    files the sequences share and returns their names (relative to out_dir); scan_sensors: the
    ``scan --sensor`` values that ``scan --format NAME`` takes (empty: not a ``scan`` format).
    """

    make_sink: Optional[Callable[[SinkArgs], Any]]
    needs_lidar: bool
    check_lidars: Callable[[Sequence[Any]], None] = any_lidars
    check_number: Callable[[int, str], None] = any_number
    max_sequences: Optional[int] = None
    paths: Callable[[Any, int, str], List[Path]] = no_paths
    check_free: Callable[..., None] = always_free
    write_shared: Callable[[Any, Perception, Sequence[int]], List[str]] = no_shared_files
    scan_sensors: Tuple[str, ...] = ()


#: The formats, in the order their sinks take each frame.
SEQUENCE_FORMATS: Dict[str, SequenceFormat] = {}


def register_format(name, make_sink, needs_lidar=True, **rules):
    """
    Add a dataset format: make_sink(SinkArgs) -> a sink with add(frame) and close().

    rules: SequenceFormat's check_lidars, check_number, max_sequences, paths, check_free,
    write_shared and scan_sensors.
    """
    SEQUENCE_FORMATS[name] = SequenceFormat(make_sink, needs_lidar, **rules)


def scan_formats():
    """Return {name: SequenceFormat} of the formats ``scan --format NAME`` writes."""
    return {name: fmt for name, fmt in SEQUENCE_FORMATS.items() if fmt.scan_sensors}


def sinks(formats, out_dir, seq_index, seq_name, sensors, key, options=Perception(),
          world=None, base_at=None):
    """
    Return {format: sink} of the non-MCAP formats of a recording (options: Perception).

    world and base_at (the base trajectory): for kitti_object's boxes and for deskew.
    """
    args = SinkArgs(out_dir, seq_index, seq_name, sensors, key, options, world, base_at)
    return {name: fmt.make_sink(args) for name, fmt in SEQUENCE_FORMATS.items()
            if name in formats and fmt.make_sink is not None}


register_format('mcap', None, needs_lidar=False,    # pipeline/record.py writes it
                paths=mcap_paths)
register_format('kitti_object', lambda a: BoxSink(a.out_dir, a.seq_index, a.sensors, a.world,
                                                  a.base_at, a.options),
                paths=lambda out_dir, i, name: [kitti_object.sequence_dir(out_dir, i)])
register_format('openpcdet', lambda a: OpenPCDetSink(a.out_dir, a.seq_index, a.sensors,
                                                     a.world, a.base_at, a.options),
                paths=lambda out_dir, i, name: [openpcdet.sequence_dir(out_dir, i)])
register_format('semantickitti', lambda a: KittiSink(a.out_dir, a.seq_index, a.sensors, a.key,
                                                     a.options, a.base_at),
                check_number=semantickitti.check_number, max_sequences=semantickitti.SEQUENCES,
                paths=kitti_paths, check_free=semantickitti.check_free,
                write_shared=write_kitti_label_map, scan_sensors=('lidar_3d',))
register_format('pcd', lambda a: PcdSink(a.out_dir, a.seq_name, a.base_at
                                         if a.options.deskews() else None),
                check_lidars=check_pcd_layouts,
                paths=lambda out_dir, i, name: [pcd_dir(out_dir, name)])


def tree_sha256(out_dir, names):
    """sha256 over 'name sha256(file)' lines of the files (relative to out_dir), in order."""
    h = hashlib.sha256()
    for name in names:
        f = hashlib.sha256((Path(out_dir) / name).read_bytes()).hexdigest()
        h.update(f'{name} {f}\n'.encode('utf-8'))
    return h.hexdigest()
