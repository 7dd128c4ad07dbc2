"""
The ``kitti_object`` and ``openpcdet`` formats of a recording: boxes of the first lidar_3d sensor.

``DIR/kitti_object/NN/`` (NN: the sequence's index in the spec, as SemanticKITTI's): the KITTI
object tree per sweep (``training/{velodyne,label_2,calib,image_2}``, ``ImageSets``;
output/kitti_object.py), the tracks in KITTI's tracking layout (``tracking/label_02/NNNN.txt``
and ``tracking/evaluate_tracking.seqmap.training``) and ``boxes.jsonl``, one JSON row per box
with what KITTI's format has no room for (track id, name, roll / pitch / yaw, num_points,
dont_care, occluded_fraction, time_s; output/boxes.py box_rows). The boxes: every trajectory
actor and the static objects of the spec's ``boxes:`` classes, placed where their points are
in the cloud as written (deskewed unless the spec says ``deskew: false``, dataset/perception.py).
"""

import json
from pathlib import Path

from ubot_lidar_sim.output import boxes as boxes_mod, kitti_object, openpcdet
from ubot_lidar_sim.output.atomic import staged_tree
from ubot_lidar_sim.output.deskew import deskewed
from ubot_lidar_sim.output.semantickitti import scan_arrays
from ubot_lidar_sim.pipeline.trajectory import Mounted

TRACKING = 'tracking'


def sensor_fov(cfg):
    """Return (vertical_fov_up_deg, vertical_fov_down_deg, horizontal_fov_deg, max_range_m)."""
    return (float(cfg.vertical_fov_up_deg), float(cfg.vertical_fov_down_deg),
            float(cfg.horizontal_fov_deg), float(cfg.max_range_m))


class BoxSink:
    """The KITTI object tree (and tracks) per sweep of the first lidar_3d sensor."""

    writer = kitti_object

    def __init__(self, out_dir, number, sensors, world, base_at, options):
        self.sensor = next(s for s in sensors if s.kind == 'lidar_3d')
        self.root = Path(out_dir)
        self.number = number
        self.final = self.writer.sequence_dir(out_dir, number)
        self.tmp = staged_tree(self.final)
        self.shapes = boxes_mod.shapes(world, options.boxes)
        self.pose_at = Mounted(base_at, self.sensor.mount)
        self.fov = sensor_fov(self.sensor.cfg)
        self.margin_m = boxes_mod.box_margin_m(self.sensor.cfg)
        self.deskew = options.deskews(by_default=True)     # a detector takes one frame's cloud
        self.split = options.split
        self.names, self.tracks, self.rows, self.frames = [], [], [], []

    def points_and_boxes(self, frame):
        """Return (the sweep's points as written, their boxes BOX_DTYPE)."""
        points = frame.result.points
        boxes = boxes_mod.frame_boxes(self.shapes, points, frame.stamp_s, self.pose_at,
                                      self.fov, self.deskew, self.margin_m)
        if self.deskew:
            points = deskewed(points, frame.stamp_s, self.pose_at)
        return points, boxes

    def add(self, frame):
        """Write the sweep's files when it is a sweep of the sensor."""
        if frame.sensor is not self.sensor:
            return
        points, boxes = self.points_and_boxes(frame)
        self.names += kitti_object.write_frame(self.tmp, frame.index, boxes,
                                               scan_arrays(points)[0])
        self.tracks.append(kitti_object.tracking_lines(boxes, frame.index))
        self.rows += boxes_mod.box_rows(boxes, self.shapes, frame.index, frame.stamp_s)
        self.frames.append(frame.index)

    def close(self):
        """Write ImageSets, the tracks and boxes.jsonl; return the files written (under DIR)."""
        self.names += kitti_object.write_splits(self.tmp, self.frames, self.split)
        track = f'{TRACKING}/label_02/{self.number:04d}.txt'
        seqmap = f'{TRACKING}/evaluate_tracking.seqmap.training'
        (self.tmp / TRACKING / 'label_02').mkdir(parents=True, exist_ok=True)
        (self.tmp / track).write_text(''.join(self.tracks), encoding='ascii')
        (self.tmp / seqmap).write_text(kitti_object.seqmap_line(self.number, len(self.frames)),
                                       encoding='ascii')
        (self.tmp / 'boxes.jsonl').write_text(
            ''.join(json.dumps(r, sort_keys=True) + '\n' for r in self.rows), encoding='utf-8')
        rel = self.final.relative_to(self.root)
        return sorted(str(rel / n) for n in self.names + [track, seqmap, 'boxes.jsonl'])


class OpenPCDetSink(BoxSink):
    """OpenPCDet's custom dataset per sweep of the first lidar_3d sensor (output/openpcdet.py)."""

    writer = openpcdet

    def add(self, frame):
        """Write the sweep's points and boxes when it is a sweep of the sensor."""
        if frame.sensor is not self.sensor:
            return
        self.names += openpcdet.write_frame(self.tmp, frame.index, *self.points_and_boxes(frame))
        self.frames.append(frame.index)

    def close(self):
        """Write the ImageSets; return the files written (relative to DIR)."""
        self.names += kitti_object.write_splits(self.tmp, self.frames, self.split)
        rel = self.final.relative_to(self.root)
        return sorted(str(rel / n) for n in self.names)
