"""
3D boxes and tracks per frame, in KITTI's object label format (issue 43).

The KITTI reader here is written from the KITTI object devkit's readme (15 values a line; calib
keys P0-P3, R0_rect, Tr_velo_to_cam, Tr_imu_to_velo) and OpenPCDet's box conversion
(open-mmlab/OpenPCDet pcdet/utils/box_utils.py, boxes3d_kitti_camera_to_lidar).
"""

import json

from builders import run_dataset
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
import numpy as np
import pytest
from ubot_lidar_sim.core.world.world import World
from ubot_lidar_sim.output import boxes, kitti_object
import yaml

# Two boxes driving slowly (0.5 m/s) past a still sensor: a car across its front, a cart
# behind it going the other way; a bin (class 99 other-object, its material's) standing still.
WORLD = {'objects': [{'name': 'ground', 'type': 'plane', 'size_m': [60, 60], 'class_id': 72},
                     {'name': 'bin', 'type': 'box', 'size_m': [1, 1, 1], 'material': 'metal_bin',
                      'pose': {'xyz': [0, 7, 0.5]}}],
         'actors': [
             {'name': 'car', 'type': 'box', 'size_m': [4, 2, 1.5], 'material': 'vehicle',
              'pose': {'xyz': [0, 0, 0.75]},
              'motion': {'pose': [8, -1, 0, 0, 0, 90], 'twist': [0, 0.5, 0, 0, 0, 0]}},
             {'name': 'cart', 'type': 'box', 'size_m': [1.2, 0.8, 1.0], 'class_id': 30,
              'pose': {'xyz': [0, 0, 0.5]},
              'motion': {'pose': [-6, 2, 0, 0, 0, -90], 'twist': [0, -0.5, 0, 0, 0, 0]}}]}
LIDAR = {'channels': 16, 'horizontal_samples': 720, 'vertical_fov_down_deg': 15.0}
SPEED, PERIOD = 0.5, 0.1        # the actors' speed (m/s), the sweep period (s, 10 Hz)


def read_kitti_labels(path):
    """Return [{type, truncated, occluded, alpha, bbox, dimensions (h w l), location, ry}]."""
    out = []
    for line in path.read_text().splitlines():
        v = line.split()
        assert len(v) == 15
        out.append({'type': v[0], 'truncated': float(v[1]), 'occluded': int(v[2]),
                    'alpha': float(v[3]), 'bbox': [float(x) for x in v[4:8]],
                    'dimensions': [float(x) for x in v[8:11]],
                    'location': [float(x) for x in v[11:14]], 'rotation_y': float(v[14])})
    return out


def read_kitti_calib(path):
    """Return {key: (n,) float array} of a KITTI object calib file."""
    return {k.strip(): np.array(v.split(), dtype=np.float64)
            for k, v in (line.split(':', 1) for line in path.read_text().splitlines() if line)}


def to_lidar(label, calib):
    """Return (centre (3,), size l w h (3,), heading) of a label in the LiDAR frame."""
    velo_to_rect = np.eye(4)
    velo_to_rect[:3, :4] = calib['Tr_velo_to_cam'].reshape(3, 4)
    r0 = np.eye(4)
    r0[:3, :3] = calib['R0_rect'].reshape(3, 3)
    loc = np.linalg.inv(r0 @ velo_to_rect) @ np.r_[label['location'], 1.0]
    h, w, length = label['dimensions']
    return loc[:3] + [0, 0, h / 2.0], np.array([length, w, h]), -(label['rotation_y'] + np.pi / 2)


def _inside(xyz, centre, size, heading, margin):
    c, s = np.cos(heading), np.sin(heading)
    d = xyz - centre
    local = np.c_[c * d[:, 0] + s * d[:, 1], -s * d[:, 0] + c * d[:, 1], d[:, 2]]
    return np.all(np.abs(local) <= size / 2.0 + margin, axis=1)


def _dataset(tmp_path, extra=None):
    (tmp_path / 'world.yaml').write_text(yaml.safe_dump(WORLD))
    spec = {'worlds': [str(tmp_path / 'world.yaml')], 'frames': 3,
            'formats': ['semantickitti', 'kitti_object'],
            'trajectories': [{'name': 'still', 'pose': [0, 0, 0, 0, 0, 0]}],
            'sensors': [{'type': 'lidar_3d', 'mount': [0, 0, 1.0, 0, 0, 0], 'params': LIDAR}],
            **(extra or {})}
    out = run_dataset(tmp_path, spec)
    return out


def test_every_box_holds_95_percent_of_its_instance_points_and_kitti_labels_parse(tmp_path):
    out = _dataset(tmp_path)
    seq = out / 'kitti_object' / '00'
    rows = {(r['frame'], r['track_id']): r for r in map(
        json.loads, (seq / 'boxes.jsonl').read_text().splitlines())}
    for k in range(3):
        labels = read_kitti_labels(seq / 'training' / 'label_2' / f'{k:06d}.txt')
        calib = read_kitti_calib(seq / 'training' / 'calib' / f'{k:06d}.txt')
        assert [lab['type'] for lab in labels] == ['Car', 'Pedestrian']
        scan = np.fromfile(seq / f'training/velodyne/{k:06d}.bin', np.float32).reshape(-1, 4)
        instance = np.fromfile(out / f'sequences/00/labels/{k:06d}.label', np.uint32) >> 16
        for inst, label in enumerate(labels, start=1):
            centre, size, heading = to_lidar(label, calib)
            mine = scan[instance == inst, :3].astype(np.float64)
            assert len(mine) > 20
            # bound: KITTI's 2-decimal text (0.005 m) and OpenPCDet's in-box margin (0.01 m)
            share = _inside(mine, centre, size, heading, 0.015)
            assert share.mean() >= 0.95
            row = rows[(k, inst)]
            assert row['num_points'] >= 0.95 * len(mine) and row['occlusion'] == 0
            assert not row['dont_care']
    tracks = [line.split() for line in
              (seq / 'tracking' / 'label_02' / '0000.txt').read_text().splitlines()]
    assert [(int(t[0]), int(t[1])) for t in tracks] == [(k, i) for k in range(3) for i in (1, 2)]
    assert all(t[3] in ('0', '1', '2') for t in tracks)           # integer truncation levels
    assert (seq / 'tracking' / 'evaluate_tracking.seqmap.training').read_text() == \
        '0000 empty 000000 000003\n'


def test_the_box_of_an_actor_is_its_pose_at_the_stamp_in_the_sensor_frame():
    world = World.from_dict(WORLD)
    car = boxes.shapes(world)[0]
    sensor = np.eye(4)
    sensor[2, 3] = 1.0                 # the sensor 1 m above the world origin
    pose = boxes.box_poses([car], 0.2, sensor)[0]
    # At 0.2 s the car has gone 0.1 m along +y from (8, -1); its box centre is 0.75 m up, so
    # -0.25 m in the sensor frame; its x axis along world +y: yaw 90 deg.
    np.testing.assert_allclose(pose[:3, 3], [8.0, -0.9, -0.25], atol=1e-9)  # bound: float64
    np.testing.assert_allclose(boxes.rpy_of(pose[:3, :3]), [0, 0, np.pi / 2],
                               atol=1e-9)  # bound: float64 rounding of a 90 deg turn
    np.testing.assert_allclose(car.size, [4, 2, 1.5], atol=1e-6)  # bound: float32 vertices


def test_a_recording_holds_every_actors_box_at_each_sweeps_stamp_as_the_node_publishes(
        tmp_path):
    # /lidar_3d/boxes: a MarkerArray per sweep, logged with its cloud, stamped as it, a CUBE
    # per actor at its pose at the stamp in the sensor frame (the node's ~/boxes).
    out = _dataset(tmp_path, {'formats': ['mcap']})
    with open(out / 'seq_0000.mcap', 'rb') as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        got = [(c.topic, s.name, m.log_time, d) for s, c, m, d in reader.iter_decoded_messages(
            topics=['/points', '/lidar_3d/boxes'])]
    clouds = [g for g in got if g[0] == '/points']
    marks = [g for g in got if g[0] == '/lidar_3d/boxes']
    assert len(clouds) == len(marks) == 3
    assert {g[1] for g in marks} == {'visualization_msgs/msg/MarkerArray'}
    for k, ((_, _, cloud_log, cloud), (_, _, log, msg)) in enumerate(zip(clouds, marks)):
        cubes = [m for m in msg.markers if m.type == 1]          # CUBE
        assert [m.id for m in cubes] == [1, 2] and log == cloud_log
        stamps = {(m.header.stamp.sec, m.header.stamp.nanosec) for m in msg.markers}
        assert stamps == {(cloud.header.stamp.sec, cloud.header.stamp.nanosec)}
        assert {m.header.frame_id for m in msg.markers} == {cloud.header.frame_id}
        car = cubes[0]
        # The car at k x 0.1 s: 0.05 k m along +y from (8, -1), 0.75 m up, the sensor at 1 m.
        # bound: 1e-9 m: float64 products of exact decimals
        np.testing.assert_allclose([car.pose.position.x, car.pose.position.y,
                                    car.pose.position.z], [8.0, -1.0 + SPEED * PERIOD * k,
                                                           -0.25], atol=1e-9)
        # bound: float32 vertices of the actor's mesh (1e-6 relative at 4 m)
        assert (car.scale.x, car.scale.y, car.scale.z) == pytest.approx((4, 2, 1.5), abs=1e-5)


def test_static_objects_of_the_boxes_classes_get_a_box_and_a_static_track_id():
    world = World.from_dict(WORLD)
    items = boxes.shapes(world, classes=(99,))
    assert [(s.name, s.track_id) for s in items] == [
        ('car', 1), ('cart', 2), ('bin', boxes.STATIC_TRACK_BASE + 1)]


def test_a_box_hidden_behind_a_nearer_one_is_largely_occluded_and_the_nearer_not():
    near, far = np.eye(4), np.eye(4)
    near[:3, 3], far[:3, 3] = [5, 0, 0], [10, 0, 0]
    # Rays fanning at the far box all stop on the near box's front face (x = 4.5).
    ys = np.linspace(-0.4, 0.4, 9)
    pts = np.c_[np.full(9, 4.5), ys * 4.5 / 10.0, np.zeros(9)]
    assert boxes.ray_occlusion(pts, near, np.array([1.0, 2.0, 2.0])) == (0.0, 9)
    assert boxes.ray_occlusion(pts, far, np.array([1.0, 1.0, 1.0])) == (1.0, 9)


@pytest.mark.parametrize('z, expected', [(0.0, 0.0), (20.0, 1.0)])
def test_truncation_is_the_share_of_the_box_outside_the_field_of_view(z, expected):
    pose = np.eye(4)
    pose[:3, 3] = [10, 0, z]            # level ahead: inside +-15 deg; 20 m up at 10 m: 63 deg
    assert boxes.truncation(pose, np.array([1.0, 1.0, 1.0]), (15.0, 15.0, 360.0, 100.0)) == \
        expected


def test_a_kitti_label_line_by_hand():
    box = np.zeros(1, boxes.BOX_DTYPE)
    box[0] = (1, 10, 14, [10, 0, 0.75], [4, 2, 1.5], [0, 0, 0], 10, 0, 0, 0, 0)
    # class 10 (car) -> Car; bottom centre (10, 0, 0) -> camera (0, 0, 10); yaw 0 -> ry -pi/2;
    # alpha = ry - atan2(0, 10) = -pi/2; h w l = 1.5 2 4.
    line = kitti_object.label_lines(box).split()
    assert line[:4] == ['Car', '0.00', '0', '-1.57'] and line[8:] == [
        '1.50', '2.00', '4.00', '0.00', '0.00', '10.00', '-1.57']


def read_openpcdet_labels(path):
    """Return [(centre (3,), size (3,), heading, category)] of an OpenPCDet custom label file."""
    out = []
    for line in path.read_text().splitlines():
        v = line.split()
        assert len(v) == 9          # x y z dx dy dz heading num_points category
        out.append((np.array(v[0:3], float), np.array(v[3:6], float), float(v[6]), v[8]))
    return out


def test_openpcdet_custom_frames_hold_the_same_boxes_as_the_kitti_labels(tmp_path):
    out = _dataset(tmp_path, {'formats': ['kitti_object', 'openpcdet']})
    root = out / 'openpcdet' / '00'
    assert (root / 'ImageSets' / 'train.txt').read_text().split() == ['000000', '000001',
                                                                      '000002']
    assert (root / 'ImageSets' / 'val.txt').read_text() == ''      # no frame in two splits
    for k in range(3):
        points = np.load(root / 'points' / f'{k:06d}.npy')
        assert points.dtype == np.float32 and points.shape[1] == 4 and len(points) > 100
        pcdet = read_openpcdet_labels(root / 'labels' / f'{k:06d}.txt')
        seq = out / 'kitti_object' / '00'
        calib = read_kitti_calib(seq / 'training' / 'calib' / f'{k:06d}.txt')
        for (centre, size, heading, category), label in zip(
                pcdet, read_kitti_labels(seq / 'training' / 'label_2' / f'{k:06d}.txt')):
            want = to_lidar(label, calib)
            assert category == label['type']
            # bound: KITTI's 2-decimal text against OpenPCDet's 4-decimal text
            np.testing.assert_allclose(centre, want[0], atol=0.011)
            np.testing.assert_allclose(size, want[1], atol=0.011)  # bound: as above
            assert abs(np.angle(np.exp(1j * (heading - want[2])))) < 0.011  # bound: as above
