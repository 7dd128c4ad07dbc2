"""
3D boxes and tracks per frame: every actor, and static objects of chosen classes.

A box is the extent of an object's geometry in its own frame (an actor: the axis-aligned
bounds of its vertices in the actor's frame; a static ``box`` object: its own size and axes;
any other static object: the world-axis bounds of its vertices) grown by a margin on every face
(box_margin_m: three times the range noise of an echo at the sensor's spec SNR), placed where
the object's points are in the written cloud: the object at the firing time of its points (the
middle of their first and last firing times; the stamp when none) in the frame of the cloud as
written: the sensor frame at the stamp for a deskewed cloud (output/deskew.py), else the sensor
frame at that firing time, where a spinning sensor's raw points of the object lie. Centre (m),
size (length along the box's x, width along y, height along z, m), roll / pitch / yaw (rad, the
box's axes in that frame: R = Rz(yaw) Ry(pitch) Rx(roll)).

- ``track_id``: an actor's instance id (1.., stable over a sequence); a static object's
  ``STATIC_TRACK_BASE + its object index``.
- ``num_points``: the points of the object (its instance id; a static object: instance 0 and
  its class id) of the written cloud inside the box by OpenPCDet's rule (in_box_openpcdet);
  a box with fewer than MIN_BOX_POINTS is ``dont_care`` (KITTI DontCare).
- ``occluded_fraction`` (``occlusion`` its KITTI level: 0 <= 0.1, 1 <= 0.5, 2 more, 3 no ray
  of the sweep met the box): of the sensor's own rays of this sweep that returned a point and
  whose line from the sensor crosses the box, the share whose point is nearer than the box's
  entry by more than POINT_MARGIN_M (something stood in front).
- ``truncation``: the share of a 5 x 5 x 5 grid over the box that lies outside the sensor's
  field of view (vertical_fov_up/down_deg, horizontal_fov_deg centred on +x, max_range_m).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.poses import invert
from ubot_lidar_sim.core.raycast.actor_casting import PoseAt
from ubot_lidar_sim.core.raycast.geometry import KIND_BOX
from ubot_lidar_sim.core.world.schema import MAX_ACTORS
from ubot_lidar_sim.output.deskew import deskew_xyz, point_times

if TYPE_CHECKING:       # annotations only: the world and config modules load open3d
    from ubot_lidar_sim.core.config import LidarConfig
    from ubot_lidar_sim.core.world.world import World

STATIC_TRACK_BASE = MAX_ACTORS + 1
POINT_MARGIN_M = 0.05      # range noise and float32 points: a hit on a face is within it
#: A box's margin on each face: this many sigmas of the range noise at the spec SNR.
BOX_NOISE_SIGMAS = 3.0
#: Fewer points than this in a box: DontCare. OpenPCDet's KITTI ground-truth sampler keeps
#: boxes of >= 5 points (tools/cfgs/dataset_configs/kitti_dataset.yaml line 27,
#: filter_by_min_points ['Car:5', 'Pedestrian:5', 'Cyclist:5']).
MIN_BOX_POINTS = 5
#: OpenPCDet's in-box rule (pcdet/ops/roiaware_pool3d/src/roiaware_pool3d.cpp lines 128-139,
#: check_pt_in_box3d_cpu): |z - cz| <= dz / 2, and in the box's heading frame |x| < dx / 2 +
#: 0.01 and |y| < dy / 2 + 0.01 (its MARGIN).
OPENPCDET_MARGIN_M = 1e-2
BOX_DTYPE = np.dtype([('track_id', '<u4'), ('class_id', '<u2'), ('material', 'u1'),
                      ('center', '<f8', (3,)), ('size', '<f8', (3,)), ('rpy', '<f8', (3,)),
                      ('num_points', '<u4'), ('occluded_fraction', '<f4'),
                      ('occlusion', 'u1'), ('truncation', '<f4'), ('time_s', '<f8')])
_GRID = np.stack(np.meshgrid(*[np.linspace(-0.5, 0.5, 5)] * 3, indexing='ij'), -1).reshape(-1, 3)


@dataclass(frozen=True)
class Shape:
    """One boxed object: ids, its box in its own frame (local (4, 4), size) and its motion."""

    track_id: int
    name: str
    class_id: int
    material: int
    instance_id: int          # 0: a static object
    local: np.ndarray         # (4, 4) object-from-box
    size: np.ndarray          # (3,) l w h
    pose_at: object           # times (n,) -> world-from-object (n, 4, 4); None: static


def _bounds(vertices):
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    local = np.eye(4)
    local[:3, 3] = (lo + hi) / 2.0
    return local, hi - lo


def shapes(world: World, classes: Collection[int] = (),
           poses: Mapping[str, PoseAt | None] | None = None) -> list[Shape]:
    """
    Return the Shapes of world's actors and its static objects of classes.

    poses: {actor name: pose_at} (a node's actor_frames.poses: /tf frame actors too); None:
    the actors' trajectories (a /tf frame actor is not drawn offline).
    """
    out: list[Shape] = []
    for k, actor in enumerate(world.actors):
        pose_at = actor.trajectory if poses is None else poses.get(actor.name)
        if pose_at is None or not len(actor.geometry.vertices):
            continue
        local, size = _bounds(np.asarray(actor.geometry.vertices, np.float64))
        out.append(Shape(k + 1, actor.name, actor.obj.class_id, actor.obj.material, k + 1,
                         local, size, pose_at))
    for i, (obj, geom) in enumerate(zip(world.objects, world.geometries)):
        if obj.class_id not in classes or not len(geom.vertices):
            continue
        if geom.kind == KIND_BOX:
            local = np.eye(4)
            local[:3, :3], local[:3, 3] = geom.frame, geom.center
            size = 2.0 * np.asarray(geom.half_size_m, np.float64)
        else:
            local, size = _bounds(np.asarray(geom.vertices, np.float64))
        out.append(Shape(STATIC_TRACK_BASE + i, obj.name, obj.class_id, obj.material, 0,
                         local, size, None))
    return out


def actor_boxes(world: World, poses: Mapping[str, PoseAt | None] | None, stamp_s: float,
                sensor_pose: ArrayLike) -> tuple[list[Shape], NDArray[np.float64]]:
    """
    Return (Shapes, (B, 4, 4) sensor-from-box) of world's actors at stamp_s.

    poses as in shapes (None: the trajectories); sensor_pose: world-from-sensor at stamp_s.
    """
    items = shapes(world, (), poses)
    return items, box_poses(items, stamp_s, sensor_pose)


def rpy_of(rot: NDArray[np.float64]) -> NDArray[np.float64]:
    """Return (roll, pitch, yaw) rad of rotations (..., 3, 3) = Rz(yaw) Ry(pitch) Rx(roll)."""
    return np.stack([np.arctan2(rot[..., 2, 1], rot[..., 2, 2]),
                     np.arcsin(np.clip(-rot[..., 2, 0], -1.0, 1.0)),
                     np.arctan2(rot[..., 1, 0], rot[..., 0, 0])], axis=-1)


def box_poses(items: Sequence[Shape], stamp_s: float,
              sensor_pose: ArrayLike) -> NDArray[np.float64]:
    """Return (B, 4, 4) sensor-from-box poses at stamp_s (sensor_pose: world-from-sensor)."""
    t = np.array([float(stamp_s)])
    world = [np.eye(4) if s.pose_at is None else np.asarray(s.pose_at(t), np.float64)[0]
             for s in items]
    return np.asarray([invert(np.asarray(sensor_pose, np.float64)) @ w @ s.local
                       for w, s in zip(world, items)]).reshape(-1, 4, 4)


def ray_occlusion(xyz: NDArray[np.float64], pose: NDArray[np.float64],
                  size: NDArray[np.float64]) -> tuple[float, int]:
    """Return (occluded share, rays crossing the box) of rays from 0 through points xyz."""
    rng = np.linalg.norm(xyz, axis=1)
    d = (xyz / np.maximum(rng, 1e-9)[:, None]) @ pose[:3, :3]
    o = -pose[:3, 3] @ pose[:3, :3]
    with np.errstate(divide='ignore', invalid='ignore'):
        t1, t2 = (-size / 2.0 - o) / d, (size / 2.0 - o) / d
    t_in = np.nanmax(np.minimum(t1, t2), axis=1)
    t_out = np.nanmin(np.maximum(t1, t2), axis=1)
    crossing = (t_in <= t_out) & (t_out > 0.0)
    n = int(crossing.sum())
    if not n:
        return 0.0, 0
    return float(np.mean(rng[crossing] < t_in[crossing] - POINT_MARGIN_M)), n


def truncation(pose: NDArray[np.float64], size: NDArray[np.float64],
               fov: Sequence[float]) -> float:
    """Share of a grid over the box outside fov (up_deg, down_deg, horizontal_deg, range_m)."""
    pts = (_GRID * size) @ pose[:3, :3].T + pose[:3, 3]
    up, down, horizontal, max_range = fov
    el = np.degrees(np.arctan2(pts[:, 2], np.hypot(pts[:, 0], pts[:, 1])))
    az = np.degrees(np.arctan2(pts[:, 1], pts[:, 0]))
    ok = (el <= up) & (el >= -down) & (np.abs(az) <= horizontal / 2.0) & \
        (np.linalg.norm(pts, axis=1) <= max_range)
    return float(1.0 - ok.mean())


def box_margin_m(cfg: LidarConfig) -> float:
    """
    Return the margin (m) a box grows by on each face for the points of sensor config cfg.

    BOX_NOISE_SIGMAS x the 1-sigma range noise of an echo at the spec SNR (core/physics/
    radiometry.py range_noise_std: the largest floor, range_noise_std_m or the bands', and
    range_std_low_snr_m in quadrature); 0 without noise (noise_enabled false, geometric model).
    """
    if not getattr(cfg, 'noise_enabled', False) or not hasattr(cfg, 'range_std_low_snr_m'):
        return 0.0
    bands = np.asarray(cfg.range_noise_bands_m, np.float64).reshape(-1, 2)
    floor = float(bands[:, 1].max()) if len(bands) else float(cfg.range_noise_std_m)
    return BOX_NOISE_SIGMAS * float(np.hypot(floor, cfg.range_std_low_snr_m))


def in_box_openpcdet(xyz: NDArray[np.float64], center: NDArray[np.float64],
                     size: NDArray[np.float64], heading: float
                     ) -> NDArray[np.bool_]:
    """Return (P,) bool: points xyz (P, 3) in the level box (OPENPCDET_MARGIN_M's rule)."""
    d = np.asarray(xyz, np.float64) - center
    c, s = np.cos(heading), np.sin(heading)
    local_x, local_y = d[:, 0] * c + d[:, 1] * s, -d[:, 0] * s + d[:, 1] * c
    return (np.abs(d[:, 2]) <= size[2] / 2.0) & (np.abs(local_x) < size[0] / 2.0
                                                 + OPENPCDET_MARGIN_M) \
        & (np.abs(local_y) < size[1] / 2.0 + OPENPCDET_MARGIN_M)


def own_points(points: NDArray[np.void], item: Shape) -> NDArray[np.bool_]:
    """Return (P,) bool: the points of a Shape (its instance; static: instance 0, its class)."""
    if item.instance_id:
        return points['instance_id'] == item.instance_id
    return (points['instance_id'] == 0) & (points['class_id'] == item.class_id)


def firing_time(points: NDArray[np.void], stamp_s: float) -> float:
    """Return the middle of the first and last firing times of points (the stamp: none)."""
    if not len(points):
        return float(stamp_s)
    t = point_times(points, stamp_s)
    return 0.5 * (float(t.min()) + float(t.max()))


def frame_boxes(items: Sequence[Shape], points: NDArray[np.void], stamp_s: float,
                sensor_pose_at: Callable[[NDArray[np.float64]], ArrayLike],
                fov: Sequence[float], deskew: bool = True, margin_m: float = 0.0
                ) -> NDArray[np.void]:
    """
    Return the boxes (B,) BOX_DTYPE of Shapes items in one sweep, in the written cloud's frame.

    points: the sweep's full-layout points as traced (each in the sensor frame at its firing
    time); deskew: the cloud is written deskewed (else as traced); sensor_pose_at(times) ->
    world-from-sensor; fov: (vertical_fov_up_deg, vertical_fov_down_deg, horizontal_fov_deg,
    max_range_m); margin_m: box_margin_m.
    """
    if deskew:
        xyz = deskew_xyz(points, stamp_s, sensor_pose_at)
    else:
        xyz = np.stack([points['x'], points['y'], points['z']], axis=1).astype(np.float64)
    out = np.zeros(len(items), BOX_DTYPE)
    for b, item in enumerate(items):
        mine = own_points(points, item)
        t = firing_time(points[mine], stamp_s)
        frame = np.asarray(sensor_pose_at(np.array([float(stamp_s if deskew else t)])),
                           np.float64)[0]
        pose = box_poses([item], t, frame)[0]
        size = item.size + 2.0 * margin_m
        rpy = rpy_of(pose[:3, :3])
        share, crossing = ray_occlusion(xyz, pose, size)
        out[b] = (item.track_id, item.class_id, item.material, pose[:3, 3], size, rpy,
                  int(in_box_openpcdet(xyz[mine], pose[:3, 3], size, rpy[2]).sum()),
                  share, 3 if not crossing else int(np.searchsorted([0.1, 0.5], share)),
                  truncation(pose, size, fov), t)
    return out


def box_rows(boxes: NDArray[np.void], items: Sequence[Shape], frame: int, stamp_s: float
             ) -> list[dict[str, Any]]:
    """Return JSON rows (dicts) of a frame's boxes (B,) BOX_DTYPE of Shapes items."""
    return [{'frame': int(frame), 'stamp_s': float(stamp_s), 'track_id': int(b['track_id']),
             'name': item.name, 'class_id': int(b['class_id']), 'material': int(b['material']),
             'center': [round(float(v), 6) for v in b['center']],
             'size': [round(float(v), 6) for v in b['size']],
             'rpy': [round(float(v), 6) for v in b['rpy']], 'num_points': int(b['num_points']),
             'occluded_fraction': round(float(b['occluded_fraction']), 4),
             'occlusion': int(b['occlusion']), 'truncation': round(float(b['truncation']), 4),
             'time_s': round(float(b['time_s']), 9),
             'dont_care': bool(b['num_points'] < MIN_BOX_POINTS)}
            for b, item in zip(boxes, items)]
