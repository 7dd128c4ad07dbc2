"""
The 3D LiDAR's config: shared fields, its scan pattern's and its model's (docs/parameters.md).

Each field is declared with fields.parameter (default, description, unit, range or choices: the
ROS descriptor) and validated from it on construction; cross-field rules are ``_check_cross``
and the pattern's ``check``.
"""

from dataclasses import dataclass
from typing import ClassVar, Union

from ubot_lidar_sim.core.beams import planar_and_rosette
from ubot_lidar_sim.core.config.fields import Floats, parameter as _p, Validated
from ubot_lidar_sim.core.config.model import ModelShared, SensorConfig
from ubot_lidar_sim.core.config.patterns import RosettePattern, SpinningPattern
from ubot_lidar_sim.core.config.physical_model import PhysicalModel
from ubot_lidar_sim.core.config.shared import SharedParams
from ubot_lidar_sim.core.errors import ConfigError, ScanError


#: column_blocks 0 (auto) of the physical model of a spinning pattern: one block per this many
#: sub-rays, at most AUTO_COLUMN_BLOCKS_MAX. A block costs ~0.4 ms of fixed work here, so a
#: cheap sweep stays whole, and an expensive one is out ~1 / blocks of its compute time after it
#: ends (computed while it fires). A count of the config, never a measured time: same bytes.
AUTO_SUB_RAYS_PER_BLOCK = 32768
AUTO_COLUMN_BLOCKS_MAX = 8


@dataclass(frozen=True)
class LidarSensor(Validated):
    """The lidar_3d's own parameters: its model, ring and column grid, ranges, timing, output."""

    preset: str = _p('custom', 'Sensor preset the parameters started from.', read_only=True,
                     nonempty=True)
    model: str = _p('physical', "'physical': the radiometric model of docs/physics.md; "
                    "'geometric': the first surface each beam's centre ray meets (exact range; "
                    'no sub-rays, detection statistics, noise or weather; intensity 0).',
                    choices=('physical', 'geometric'))
    channels: int = _p(16, 'Vertical channels (rings).', min=1, max=256, read_only=True)
    horizontal_samples: int = _p(360, 'Columns per sweep; 360 deg does not repeat column 0.',
                                 min=1, max=8192, read_only=True)
    horizontal_fov_deg: float = _p(360.0, 'Horizontal field of view, centred on +x.', 'deg',
                                   min=0.01, max=360.0, read_only=True)
    vertical_fov_up_deg: float = _p(15.0, 'Field of view above the horizon.', 'deg',
                                    min=0.0, max=90.0, read_only=True)
    vertical_fov_down_deg: float = _p(15.0, 'Field of view below the horizon.', 'deg',
                                      min=0.0, max=90.0, read_only=True)
    elevations_deg: Floats = _p((), 'Per-ring elevation table, ring order (overrides the '
                                'uniform spread); empty = uniform.', 'deg', item_type=float,
                                min=-90.0, max=90.0, read_only=True)
    min_range_m: float = _p(0.1, 'Echoes nearer than this are not detected.', 'm',
                            min=0.0, max=1000.0)
    max_range_m: float = _p(100.0, 'Echoes beyond this are not detected; > min_range_m.', 'm',
                            min=0.01, max=10000.0)
    max_rays_per_scan: int = _p(65536, 'channels x horizontal_samples above this is an error.',
                                min=1, max=1048576)
    rate_hz: float = _p(10.0, 'Sweep rate.', 'Hz', min=0.0, min_exclusive=True, max=1000.0,
                        read_only=True)
    frame_id: str = _p('lidar_3d', 'Frame of the published cloud.', read_only=True,
                       nonempty=True)
    sensor_id: str = _p('lidar_3d', 'Sensor id (also keys the random streams).',
                        read_only=True, nonempty=True)
    trigger: str = _p('timer', "'timer': contiguous sweeps at rate_hz, stamps one period apart "
                      '(whole periods skipped when behind /tf), each block of columns '
                      "computed as soon as /tf covers it; 'stream': an alias of 'timer'; "
                      "'service': scan on ~/sample.",
                      choices=('timer', 'service', 'stream'), read_only=True)
    column_blocks: int = _p(0, 'Cut each sweep by firing time into this many blocks of columns, '
                            'each traced with random streams of its own: the unit of parallel '
                            'work, computed while the sweep fires; 1 = whole sweeps; 0 = auto '
                            f'(physical model of a spinning pattern: one per '
                            f'{AUTO_SUB_RAYS_PER_BLOCK} sub-rays, at most '
                            f'{AUTO_COLUMN_BLOCKS_MAX}; else 1).',
                            min=0, max=64, read_only=True)
    compute_process: bool = _p(False, 'Compute the sweeps in a child process with its own copy '
                               'of the world (same bytes; frees the node from the GIL).',
                               read_only=True)
    compute_workers: int = _p(1, 'Compute the column blocks in this many child processes (same '
                              'bytes; more cores with column_blocks > 1); 1 = one child if '
                              'compute_process, else none.', min=1, max=8, read_only=True)
    ring_range_at_10pct_m: Floats = _p((), 'Per-ring range_at_10pct_m; empty = the same for all.',
                                       'm', item_type=float, min=0.1, max=10000.0)
    point_layout: str = _p('full', 'PointCloud2 field layout.',
                           choices=('full', 'velodyne', 'ouster', 'livox', 'autoware'),
                           read_only=True)
    livox_custom_msg: bool = _p(False, 'Also publish livox_ros_driver2/msg/CustomMsg on '
                                'livox/lidar (point_layout livox; needs livox_ros_driver2).',
                                read_only=True)
    stamp_at: str = _p('start', "Header stamp at the sweep's first firing or its end.",
                       choices=('start', 'end'))
    pattern_type: str = _p('spinning', "'spinning': rings x columns; 'rosette': Risley prisms "
                           '(Livox), channels = lines, horizontal_samples = shots per line.',
                           choices=planar_and_rosette.PATTERN_TYPES, read_only=True)


@dataclass(frozen=True, init=False)
class LidarConfig(SensorConfig):
    """
    Every lidar_3d parameter (docs/parameters.md; model: docs/physics.md), by part.

    Built from the flat parameters (``LidarConfig(channels=32)``, config.from_dict), which read
    through to their parts (``cfg.channels``). Views: ``pattern`` (the SpinningPattern or
    RosettePattern of pattern_type) and ``physical`` (None with model 'geometric').
    """

    preset_node: ClassVar[str] = 'lidar_3d'     # whose block of a preset file applies
    common: ModelShared
    physical_model: PhysicalModel
    shared: SharedParams
    spinning: SpinningPattern
    rosette: RosettePattern
    sensor: LidarSensor

    @property
    def pattern(self) -> Union[SpinningPattern, RosettePattern]:
        """Return the scan pattern's part of pattern_type."""
        return self.rosette if self.sensor.pattern_type == 'rosette' else self.spinning

    @property
    def n_column_blocks(self) -> int:
        """Return the column blocks of a sweep: column_blocks, or for 0 the automatic number."""
        grid = self.sensor
        if grid.column_blocks:
            return grid.column_blocks
        if self.pattern.kind == 'rosette' or self.physical is None:
            return 1
        sub_rays = grid.channels * grid.horizontal_samples * self.echoes.sub_rays
        # At most 256 x 7 sub-rays per column: never more blocks than columns.
        return min(-(-sub_rays // AUTO_SUB_RAYS_PER_BLOCK), AUTO_COLUMN_BLOCKS_MAX)

    def _check_cross(self) -> None:
        super()._check_cross()
        rays = self.channels * self.horizontal_samples
        if rays > self.max_rays_per_scan:     # refused, never truncated
            raise ScanError(
                f'max_rays_per_scan: got channels x horizontal_samples = {self.channels} x '
                f'{self.horizontal_samples} = {rays} rays, allowed at most max_rays_per_scan = '
                f'{self.max_rays_per_scan} (lower channels or horizontal_samples, or raise '
                'max_rays_per_scan)')
        # uint32 ns after the stamp: ouster's t, autoware's time_stamp, CustomMsg's offset_time.
        if self.point_layout in ('ouster', 'autoware') and self.stamp_at == 'end':
            field = {'ouster': 't', 'autoware': 'time_stamp'}[self.point_layout]
            raise ConfigError('stamp_at', self.stamp_at,
                              f"'start' with point_layout {self.point_layout!r} ({field} is "
                              'uint32 ns)')
        if self.livox_custom_msg and self.point_layout != 'livox':
            raise ConfigError('livox_custom_msg', self.livox_custom_msg,
                              f'false with point_layout {self.point_layout!r} (true needs '
                              "point_layout 'livox')")
        if self.livox_custom_msg and self.stamp_at == 'end':
            raise ConfigError('stamp_at', self.stamp_at,
                              "'start' with livox_custom_msg true (offset_time is uint32 ns "
                              'after timebase)')
        for name in ('elevations_deg', 'ring_range_at_10pct_m', 'ring_time_offsets_us'):
            value = getattr(self, name)
            if value and len(value) != self.channels:
                raise ConfigError(name, value,
                                  f'empty or a list of channels ({self.channels}) values')
        if self.column_blocks > 1 and (self.pattern_type == 'rosette'
                                       or self.column_blocks > self.horizontal_samples):
            raise ConfigError('column_blocks', self.column_blocks,
                              '1 with pattern_type rosette, else at most horizontal_samples '
                              f'({self.horizontal_samples})')
        self.pattern.check(self)
