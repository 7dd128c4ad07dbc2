"""
The ``kitti_object`` format of a recording: boxes and tracks of the first lidar_3d sensor.

``DIR/kitti_object/NN/`` (NN: the sequence's index in the spec, as SemanticKITTI's):
``label_2/NNNNNN.txt`` and ``calib/NNNNNN.txt`` per sweep (KITTI object labels,
output/kitti_object.py) and ``label_02.txt``, the tracks in KITTI's tracking label format (each
line ``frame track_id`` and the 15 object values) and ``boxes.jsonl``, one JSON row per box
with what KITTI's format has no room for (track id, name, roll / pitch / yaw, num_points,
occluded_fraction; output/boxes.py box_rows). The boxes: every trajectory actor and the
static objects of the spec's ``boxes:`` classes (output/boxes.py), at each sweep's stamp.
"""

import json
from pathlib import Path

from ubot_lidar_sim.output import boxes as boxes_mod, kitti_object, openpcdet
from ubot_lidar_sim.output.atomic import staged_tree
from ubot_lidar_sim.output.deskew import deskewed
from ubot_lidar_sim.pipeline.trajectory import Mounted


def sensor_fov(cfg):
    """Return (vertical_fov_up_deg, vertical_fov_down_deg, horizontal_fov_deg, max_range_m)."""
    return (float(cfg.vertical_fov_up_deg), float(cfg.vertical_fov_down_deg),
            float(cfg.horizontal_fov_deg), float(cfg.max_range_m))


class BoxSink:
    """KITTI object labels (and tracks) per sweep of the first lidar_3d sensor."""

    writer = kitti_object

    def __init__(self, out_dir, number, sensors, world, base_at, classes=()):
        self.sensor = next(s for s in sensors if s.kind == 'lidar_3d')
        self.root = Path(out_dir)
        self.final = self.writer.sequence_dir(out_dir, number)
        self.tmp = staged_tree(self.final)
        self.shapes = boxes_mod.shapes(world, classes)
        self.pose_at = Mounted(base_at, self.sensor.mount)
        self.fov = sensor_fov(self.sensor.cfg)
        self.names, self.tracks, self.rows = [], [], []

    def boxes(self, frame):
        """Return the BOX_DTYPE array of a sweep of the sensor."""
        return boxes_mod.frame_boxes(self.shapes, frame.result.points, frame.stamp_s,
                                     self.pose_at, self.fov)

    def add(self, frame):
        """Write the sweep's label and calib files when it is a sweep of the sensor."""
        if frame.sensor is not self.sensor:
            return
        boxes = self.boxes(frame)
        self.names += kitti_object.write_frame(self.tmp, frame.index, boxes)
        for box, line in zip(boxes, kitti_object.label_lines(boxes).splitlines()):
            self.tracks.append(f'{frame.index} {int(box["track_id"])} {line}\n')
        self.rows += boxes_mod.box_rows(boxes, self.shapes, frame.index, frame.stamp_s)

    def close(self):
        """Write label_02.txt and boxes.jsonl; return the files written (relative to DIR)."""
        (self.tmp / 'label_02.txt').write_text(''.join(self.tracks), encoding='ascii')
        (self.tmp / 'boxes.jsonl').write_text(
            ''.join(json.dumps(r, sort_keys=True) + '\n' for r in self.rows), encoding='utf-8')
        rel = self.final.relative_to(self.root)
        return sorted(str(rel / n) for n in self.names + ['label_02.txt', 'boxes.jsonl'])


class OpenPCDetSink(BoxSink):
    """OpenPCDet's custom dataset per sweep of the first lidar_3d sensor (output/openpcdet.py)."""

    writer = openpcdet

    def __init__(self, out_dir, number, sensors, world, base_at, options):
        super().__init__(out_dir, number, sensors, world, base_at, options.boxes)
        self.deskew = options.deskew
        self.frames = []

    def add(self, frame):
        """Write the sweep's points and boxes when it is a sweep of the sensor."""
        if frame.sensor is not self.sensor:
            return
        points = frame.result.points
        if self.deskew:
            points = deskewed(points, frame.stamp_s, self.pose_at)
        self.names += openpcdet.write_frame(self.tmp, frame.index, points, self.boxes(frame))
        self.frames.append(frame.index)

    def close(self):
        """Write the ImageSets; return the files written (relative to DIR)."""
        self.names += openpcdet.write_splits(self.tmp, self.frames)
        rel = self.final.relative_to(self.root)
        return sorted(str(rel / n) for n in self.names)
