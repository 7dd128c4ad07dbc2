"""The terrain sensor's config: the rays under the vehicle centre and its four tires."""

from dataclasses import dataclass

from ubot_lidar_sim.core.config.fields import (Bools, Composed, Floats, parameter as _p, Strs,
                                               Validated)
from ubot_lidar_sim.core.config.shared import SharedParams

_TIRES = (1.4, 0.8, 0.0, 1.4, -0.8, 0.0, -1.4, 0.8, 0.0, -1.4, -0.8, 0.0)


@dataclass(frozen=True)
class TerrainRays(Validated):
    """The terrain sensor's own parameters: its rays under the centre and the tires."""

    base_frame: str = _p('base_link', 'Vehicle frame of the centre and tire positions.',
                         read_only=True, nonempty=True)
    rate_hz: float = _p(50.0, 'Publish rate.', 'Hz', min=0.0, min_exclusive=True, max=1000.0,
                        read_only=True)
    vehicle_center_m: Floats = _p((0.0, 0.0, 0.0), 'Vehicle centre x, y, z in base_frame.', 'm',
                                  item_type=float, length=3)
    tire_positions_m: Floats = _p(_TIRES, 'Tire centres FL, FR, RL, RR as x, y, z in base_frame.',
                                  'm', item_type=float, length=12)
    tire_frames: Strs = _p(('', '', '', ''), 'TF frames of the tires FL, FR, RL, RR; non-empty '
                           'ones override tire_positions_m.', item_type=str, length=4)
    tire_frames_fallback: bool = _p(False, 'Use tire_positions_m while a tire frame is missing '
                                    '(else that ray is reported as a miss).')
    vehicle_center_source: str = _p('constant', 'Source of vehicle_center_to_front_m.',
                                    choices=('constant', 'external'))
    tire_radii_source: str = _p('constant', 'Source of tire_radii_m.',
                                choices=('constant', 'external'))
    vehicle_center_to_front_m: float = _p(0.0, 'VehCntrLngthVal: centre to front distance.', 'm',
                                          min=0.0, max=100.0)
    tire_radii_m: Floats = _p((0.0,) * 4, 'TireRadiiVal FL, FR, RL, RR.', 'm', item_type=float,
                              length=4, min=0.0, max=10.0)
    trace_lengths_m: Floats = _p((5.0,) * 5, 'Trace length of vehicle, FL, FR, RL, RR rays.', 'm',
                                 item_type=float, length=5, min=0.0, min_exclusive=True,
                                 max=1000.0)
    trace_offsets_m: Floats = _p((0.0,) * 5, 'Start offset back along each ray axis.', 'm',
                                 item_type=float, length=5, min=-1000.0, max=1000.0)
    trace_enabled: Bools = _p((True,) * 5, 'Trace the vehicle, FL, FR, RL, RR rays.',
                              item_type=bool, length=5)
    trace_visualization: bool = _p(True, 'Publish ~/rays markers.')


@dataclass(frozen=True, init=False)
class TerrainConfig(Composed):
    """
    terrain_sensor parameters (docs/physics.md); ray order vehicle, FL, FR, RL, RR.

    Built from the flat parameters as LidarConfig; they read through to the parts.
    """

    shared: SharedParams
    rays: TerrainRays

    @property
    def material_table_file(self) -> str:
        """Return '' (the default material table): the terrain sensor has no materials_file."""
        return ''
