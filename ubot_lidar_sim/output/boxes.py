"""
3D boxes and tracks per frame: every actor, and static objects of chosen classes.

A box is the extent of an object's geometry in its own frame (an actor: the axis-aligned
bounds of its vertices in the actor's frame; a static ``box`` object: its own size and axes;
any other static object: the world-axis bounds of its vertices), placed by the object's pose
at the frame's stamp and given in the sensor frame at the stamp: centre (m), size (length
along the box's x, width along y, height along z, m), roll / pitch / yaw (rad, the box's axes
in the sensor frame: R = Rz(yaw) Ry(pitch) Rx(roll)).

- ``track_id``: an actor's instance id (1.., stable over a sequence); a static object's
  ``STATIC_TRACK_BASE + its object index``.
- ``num_points``: the points of the object (its instance id; a static object: instance 0 and
  its class id) inside the box grown by POINT_MARGIN_M, each point first moved to the stamp
  (the ego motion undone, output/deskew.py, and an actor's point moved with the actor from its
  own firing time to the stamp): a spinning sensor sees a moving actor skewed, its points where
  the actor was when each ray fired (up to v / rate_hz from its pose at the stamp); moved to the
  stamp they lie in the box.
- ``occluded_fraction`` (``occlusion`` its KITTI level: 0 <= 0.1, 1 <= 0.5, 2 more, 3 no ray
  of the sweep met the box): of the sensor's own rays of this sweep that returned a point and
  whose line from the sensor crosses the box, the share whose point is nearer than the box's
  entry by more than POINT_MARGIN_M (something stood in front).
- ``truncation``: the share of a 5 x 5 x 5 grid over the box that lies outside the sensor's
  field of view (vertical_fov_up/down_deg, horizontal_fov_deg centred on +x, max_range_m).
"""

from dataclasses import dataclass

import numpy as np

from ubot_lidar_sim.core.poses import invert
from ubot_lidar_sim.core.raycast.geometry import KIND_BOX
from ubot_lidar_sim.core.world.schema import MAX_ACTORS
from ubot_lidar_sim.output.deskew import deskew_xyz, moved_points, point_times, poses_of

STATIC_TRACK_BASE = MAX_ACTORS + 1
POINT_MARGIN_M = 0.05      # range noise and float32 points: a hit on a face is within it
BOX_DTYPE = np.dtype([('track_id', '<u4'), ('class_id', '<u2'), ('material', 'u1'),
                      ('center', '<f8', (3,)), ('size', '<f8', (3,)), ('rpy', '<f8', (3,)),
                      ('num_points', '<u4'), ('occluded_fraction', '<f4'),
                      ('occlusion', 'u1'), ('truncation', '<f4')])
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


def shapes(world, classes=(), poses=None):
    """
    Return the Shapes of world's actors and its static objects of classes.

    poses: {actor name: pose_at} (a node's actor_frames.poses: /tf frame actors too); None:
    the actors' trajectories (a /tf frame actor is not drawn offline).
    """
    out = []
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


def actor_boxes(world, poses, stamp_s, sensor_pose):
    """
    Return (Shapes, (B, 4, 4) sensor-from-box) of world's actors at stamp_s.

    poses as in shapes (None: the trajectories); sensor_pose: world-from-sensor at stamp_s.
    """
    items = shapes(world, (), poses)
    return items, box_poses(items, stamp_s, sensor_pose)


def rpy_of(rot):
    """Return (roll, pitch, yaw) rad of rotations (..., 3, 3) = Rz(yaw) Ry(pitch) Rx(roll)."""
    return np.stack([np.arctan2(rot[..., 2, 1], rot[..., 2, 2]),
                     np.arcsin(np.clip(-rot[..., 2, 0], -1.0, 1.0)),
                     np.arctan2(rot[..., 1, 0], rot[..., 0, 0])], axis=-1)


def box_poses(items, stamp_s, sensor_pose):
    """Return (B, 4, 4) sensor-from-box poses at stamp_s (sensor_pose: world-from-sensor)."""
    t = np.array([float(stamp_s)])
    world = [np.eye(4) if s.pose_at is None else np.asarray(s.pose_at(t), np.float64)[0]
             for s in items]
    return np.asarray([invert(np.asarray(sensor_pose, np.float64)) @ w @ s.local
                       for w, s in zip(world, items)]).reshape(-1, 4, 4)


def inside(xyz, pose, size, margin=0.0):
    """Return (P,) bool: points xyz (P, 3) inside the box pose (4, 4), size (3,) + margin."""
    local = (xyz - pose[:3, 3]) @ pose[:3, :3]
    return np.all(np.abs(local) <= size / 2.0 + margin, axis=1)


def stamp_points(points, stamp_s, sensor_pose_at, item):
    """Return the object's points (n, 3) in the sensor frame at stamp_s (see module)."""
    if item.instance_id:
        mask = points['instance_id'] == item.instance_id
    else:
        mask = (points['instance_id'] == 0) & (points['class_id'] == item.class_id)
    pts = points[mask]
    xyz = deskew_xyz(pts, stamp_s, sensor_pose_at)
    if item.pose_at is None or not len(pts):
        return xyz
    at_stamp = np.asarray(sensor_pose_at(np.array([float(stamp_s)])), np.float64)[0]
    world = xyz @ at_stamp[:3, :3].T + at_stamp[:3, 3]
    own = poses_of(item.pose_at, point_times(pts, stamp_s))
    now = np.broadcast_to(np.asarray(item.pose_at(np.array([float(stamp_s)])))[0], own.shape)
    moved = moved_points(world, own, now)
    return (moved - at_stamp[:3, 3]) @ at_stamp[:3, :3]


def ray_occlusion(xyz, pose, size):
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


def truncation(pose, size, fov):
    """Share of a grid over the box outside fov (up_deg, down_deg, horizontal_deg, range_m)."""
    pts = (_GRID * size) @ pose[:3, :3].T + pose[:3, 3]
    up, down, horizontal, max_range = fov
    el = np.degrees(np.arctan2(pts[:, 2], np.hypot(pts[:, 0], pts[:, 1])))
    az = np.degrees(np.arctan2(pts[:, 1], pts[:, 0]))
    ok = (el <= up) & (el >= -down) & (np.abs(az) <= horizontal / 2.0) & \
        (np.linalg.norm(pts, axis=1) <= max_range)
    return float(1.0 - ok.mean())


def frame_boxes(items, points, stamp_s, sensor_pose_at, fov):
    """
    Return the boxes (B,) BOX_DTYPE of Shapes items in one sweep (see module).

    points: the sweep's full-layout points; sensor_pose_at(times) -> world-from-sensor;
    fov: (vertical_fov_up_deg, vertical_fov_down_deg, horizontal_fov_deg, max_range_m).
    """
    sensor_pose = np.asarray(sensor_pose_at(np.array([float(stamp_s)])), np.float64)[0]
    poses = box_poses(items, stamp_s, sensor_pose)
    out = np.zeros(len(items), BOX_DTYPE)
    xyz = deskew_xyz(points, stamp_s, sensor_pose_at)
    for b, (item, pose) in enumerate(zip(items, poses)):
        own = stamp_points(points, stamp_s, sensor_pose_at, item)
        share, crossing = ray_occlusion(xyz, pose, item.size)
        out[b] = (item.track_id, item.class_id, item.material, pose[:3, 3], item.size,
                  rpy_of(pose[:3, :3]), int(inside(own, pose, item.size, POINT_MARGIN_M).sum()),
                  share, 3 if not crossing else int(np.searchsorted([0.1, 0.5], share)),
                  truncation(pose, item.size, fov))
    return out


def box_rows(boxes, items, frame, stamp_s):
    """Return JSON rows (dicts) of a frame's boxes (B,) BOX_DTYPE of Shapes items."""
    return [{'frame': int(frame), 'stamp_s': float(stamp_s), 'track_id': int(b['track_id']),
             'name': item.name, 'class_id': int(b['class_id']), 'material': int(b['material']),
             'center': [round(float(v), 6) for v in b['center']],
             'size': [round(float(v), 6) for v in b['size']],
             'rpy': [round(float(v), 6) for v in b['rpy']], 'num_points': int(b['num_points']),
             'occluded_fraction': round(float(b['occluded_fraction']), 4),
             'occlusion': int(b['occlusion']), 'truncation': round(float(b['truncation']), 4)}
            for b, item in zip(boxes, items)]
