"""
Each vendor driver's own conventions for the fields it publishes (docs/driver-conventions.md).

- Nebula's ``azimuth`` / ``elevation`` per vendor decoder (tier4/nebula): the Hesai decoders
  place a point at x = d cos(el) sin(az), y = d cos(el) cos(az): azimuth = atan2(x, y); the
  Velodyne decoder (``nebula_decoders/include/nebula_decoders/nebula_decoders_velodyne/
  decoders/velodyne_generic_decoder.hpp``) and the RoboSense one (``.../
  nebula_decoders_robosense/decoders/robosense_decoder.hpp``) at x = xy cos(az), y = -xy
  sin(az): azimuth = atan2(-y, x), 90 deg from Hesai's. Velodyne's decoder writes
  ``elevation = sin_vert_angle`` (the sine of the vertical angle), RoboSense's the angle.
- Nebula's Velodyne ``return_type`` (``src/nebula_velodyne/nebula_velodyne_decoders/src/
  decoders/vlp16_decoder.cpp`` lines 269-296, ``vlp32_decoder.cpp`` 329-353,
  ``vls128_decoder.cpp`` 298-312, tier4/nebula 606ac41): strongest mode STRONGEST, last mode
  LAST; dual mode IDENTICAL when the other echo's distance word is 0 or equal to this one's,
  else FIRST_STRONGEST / LAST_STRONGEST / FIRST_WEAK / LAST_WEAK from two comparisons with the
  other echo of the beam: "first" is, for the VLP-16, the echo of the larger distance word
  (``first = current_return.uint > other_return.uint``), for the VLP-32 and VLS-128 the
  smaller; "strongest" is the larger intensity byte, and on equal bytes ``strongest =
  !first``. Any other mode UNKNOWN.
- Nebula's RoboSense ``return_type`` (``.../nebula_decoders_robosense/decoders/
  robosense_sensor.hpp``): the single modes their own type, dual mode STRONGEST / LAST by
  block, IDENTICAL when the echoes coincide (robosense_return_types).
- Livox ``tag`` bits (autowarefoundation/autoware.universe
  ``sensing/livox/livox_tag_filter/README.md``, Livox's point tag table): bits 2-3 flag a
  noise-like return by its intensity, 01 high confidence (dust), 10 moderate (rain, fog);
  bits 0-1 by spatial position, bits 4-5 the return number.
- Firing order: the order a driver publishes points, by firing time (a stable sort, so the
  lasers of one firing keep their order).
"""

from __future__ import annotations

from typing import Optional, Tuple, TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core import labels
from ubot_lidar_sim.core.physics.return_selection import (FLAG_LAST, FLAG_SECOND_STRONGEST,
                                                          FLAG_STRONGEST)

if TYPE_CHECKING:       # annotations only: the layouts stay a light import
    from ubot_lidar_sim.core.config.lidar import LidarConfig

VENDORS = ('hesai', 'velodyne', 'robosense')
#: Nebula's ReturnType values (nebula_common/include/nebula_common/nebula_common.hpp).
UNKNOWN, LAST, FIRST, STRONGEST, FIRST_WEAK, LAST_WEAK, IDENTICAL = 0, 1, 2, 3, 4, 5, 6
FIRST_STRONGEST, LAST_STRONGEST = 9, 10
#: The distance unit of a Velodyne packet (VLP-16 manual, "Data packet format": 2 mm; Nebula's
#: distance_resolution_m), so two echoes are one distance word apart or equal.
VELODYNE_DISTANCE_UNIT_M = 0.002
#: Livox tag bits 2-3 (intensity-based noise): 01 high confidence (dust), 10 moderate (rain,
#: fog): smoke is dust-like, precipitation and fog clutter rain-like.
LIVOX_DUST, LIVOX_RAIN_FOG = 0b01 << 2, 0b10 << 2


def vendor_of(preset: str) -> str:
    """Return the Nebula decoder family of a preset name (velodyne_*, robosense_*; else hesai)."""
    head = str(preset).split('_', 1)[0]
    return head if head in VENDORS else 'hesai'


def nebula_angles(x: ArrayLike, y: ArrayLike, z: ArrayLike, vendor: str = 'hesai',
                  ) -> Tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Return (azimuth in [0, 2 pi), elevation) float32 as vendor's Nebula decoder writes them."""
    x, y, z = (np.asarray(v, np.float64) for v in (x, y, z))
    az = np.arctan2(x, y) if vendor == 'hesai' else np.arctan2(-y, x)
    az = np.where(az < 0.0, az + 2.0 * np.pi, az).astype(np.float32)
    az[az >= np.float32(2.0 * np.pi)] = 0.0     # -1e-9 rad rounds up to 2 pi in float32
    el = np.arctan2(z, np.hypot(x, y))
    return az, (np.sin(el) if vendor == 'velodyne' else el).astype(np.float32)


def dual_partners(points: NDArray[np.void]) -> NDArray[np.int64]:
    """
    Return (P,) int64: the index of the other echo of each point's beam, -1 when it has none.

    points: full-layout points whose echoes of a beam are adjacent (beam order, or the stable
    firing order of driver_points), return_count 2 and return_index 1 then 2, one ring.
    """
    n = len(points)
    partner = np.full(n, -1, np.int64)
    if n < 2:
        return partner
    two = points['return_count'] == 2
    pair = two[:-1] & two[1:] & (points['return_index'][:-1] == 1) \
        & (points['return_index'][1:] == 2) & (points['ring'][:-1] == points['ring'][1:])
    head = np.flatnonzero(pair)
    partner[head], partner[head + 1] = head + 1, head
    return partner


def velodyne_return_types(points: NDArray[np.void], return_mode: str,
                          channels: int = 16) -> NDArray[np.uint8]:
    """
    Return (P,) uint8 Nebula Velodyne return_type of full-layout points under return_mode.

    Nebula's rule (see module) on the quantities its decoder compares: the distance words
    (range in VELODYNE_DISTANCE_UNIT_M) and the intensity bytes (the calibrated byte, rounded
    and clipped as the autoware layout writes it) of a point and the other echo of its beam
    (dual_partners; none: the packet repeats the echo, IDENTICAL). channels picks the decoder:
    up to 16 the VLP-16's, more the VLP-32's / VLS-128's.
    """
    if return_mode == 'strongest':
        return np.full(len(points), STRONGEST, np.uint8)
    if return_mode == 'last':
        return np.full(len(points), LAST, np.uint8)
    if return_mode != 'dual_strongest_last':
        return np.full(len(points), UNKNOWN, np.uint8)
    word = np.rint(points['range'].astype(np.float64) / VELODYNE_DISTANCE_UNIT_M).astype(np.int64)
    byte = intensity_bytes(points['intensity'])
    partner = dual_partners(points)
    other = np.where(partner >= 0, partner, np.arange(len(points)))
    differ = (partner >= 0) & (word[other] != word) & (word[other] != 0)
    first = word > word[other] if channels <= 16 else word < word[other]
    strongest = np.where(byte == byte[other], ~first, byte > byte[other])
    kind = np.array([[LAST_WEAK, LAST_STRONGEST], [FIRST_WEAK, FIRST_STRONGEST]], np.uint8)
    return np.where(differ, kind[first.astype(np.intp), strongest.astype(np.intp)],
                    IDENTICAL).astype(np.uint8)


def intensity_bytes(intensity: ArrayLike) -> NDArray[np.uint8]:
    """Return (P,) uint8: the intensity field as a driver's byte (rounded, clipped to 0-255)."""
    return np.clip(np.rint(intensity), 0, 255).astype(np.uint8)


def robosense_return_types(flags: ArrayLike, return_mode: str,
                           paired: Optional[ArrayLike] = None) -> NDArray[np.uint8]:
    """
    Return (P,) uint8 Nebula RoboSense return_type of points' return_flags under return_mode.

    tier4/nebula ``nebula_decoders/include/nebula_decoders/nebula_decoders_robosense/decoders/
    robosense_sensor.hpp`` getReturnType: a unit equal to another of its return group
    (distance and reflectivity) IDENTICAL; else SINGLE_FIRST FIRST, SINGLE_LAST LAST,
    SINGLE_STRONGEST STRONGEST, DUAL (RoboSense's strongest + last) STRONGEST for the group's
    first block and LAST for the second, any other mode UNKNOWN. Here: both flags on one point
    (the echoes coincide) IDENTICAL, the strongest echo STRONGEST, the last LAST; under the
    manuals' dual rule (paired, as velodyne_return_types) the strongest-and-last point of a
    pair is the first block's (STRONGEST) and the second strongest the second block's (LAST).
    """
    flags = np.asarray(flags)
    single = {'strongest': STRONGEST, 'first': FIRST, 'last': LAST}
    if return_mode in single:
        return np.full(flags.shape, single[return_mode], np.uint8)
    if return_mode != 'dual_strongest_last':
        return np.full(flags.shape, UNKNOWN, np.uint8)
    strong = (flags & FLAG_STRONGEST) != 0
    last = (flags & FLAG_LAST) != 0
    out = np.full(flags.shape, UNKNOWN, np.uint8)
    out[strong & last] = IDENTICAL
    if paired is not None:
        out[strong & last & np.asarray(paired, bool)] = STRONGEST
    out[strong & ~last] = STRONGEST
    out[last & ~strong] = LAST
    out[(flags & FLAG_SECOND_STRONGEST) != 0] = LAST
    return out


def livox_tags(class_id: ArrayLike) -> NDArray[np.uint8]:
    """Return (P,) uint8 Livox tags of points' class ids (clutter 20 rain/fog, smoke 21 dust)."""
    class_id = np.asarray(class_id)
    tag = np.zeros(class_id.shape, np.uint8)
    tag[class_id == labels.PRECIPITATION_CLASS] = LIVOX_RAIN_FOG
    tag[class_id == labels.SMOKE_CLASS] = LIVOX_DUST
    return tag


def firing_order(points: NDArray[np.void]) -> NDArray[np.intp]:
    """Return the indices (P,) that put a sweep's points in firing order (stable by time)."""
    return np.argsort(points['time'], kind='stable')


#: The layouts whose drivers publish in firing order: velodyne_pointcloud's containers push
#: each return as its packet is decoded (ros-drivers/velodyne
#: velodyne_pointcloud/src/lib/rawdata.cc unpack), Nebula's decoders append each point as they
#: unpack (the decoder files above), livox_ros_driver2 copies each packet's points in turn
#: (src/comm/pub_handler.cpp). ouster: organised rows (organised_rows.py); full keeps ring-major.
FIRING_ORDER_LAYOUTS = ('velodyne', 'autoware', 'livox')


def driver_points(points: NDArray[np.void], cfg: LidarConfig) -> NDArray[np.void]:
    """Return full-layout points in the order cfg.point_layout's driver publishes them."""
    if cfg.point_layout not in FIRING_ORDER_LAYOUTS or len(points) < 2:
        return points
    order = firing_order(points)
    if np.all(order[1:] > order[:-1]):
        return points
    return points[order]
