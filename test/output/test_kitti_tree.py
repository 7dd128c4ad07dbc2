"""
KITTI object and OpenPCDet custom trees as their readers open them (issue 53).

Readers re-implemented from open-mmlab/OpenPCDet (8cacccec): ``pcdet/datasets/kitti/
kitti_dataset.py`` (set_split lines 58-61: ``ImageSets/<split>.txt``, ``training/``; get_lidar
lines 63-66; get_image_shape lines 83-86; get_infos lines 186-193: the objects are the lines
before the DontCare ones) and ``pcdet/datasets/custom/custom_dataset.py`` (get_label lines
50-63, get_infos line 155: ``gt_boxes_lidar[:, :7]``; __getitem__ line 101 drops DontCare).
"""

from builders import run_dataset
import numpy as np
from PIL import Image
from ubot_lidar_sim.output import boxes, kitti_object, openpcdet
import yaml

# A car in the open and a second one parked behind a wall, which no ray reaches.
WORLD = {'objects': [{'name': 'ground', 'type': 'plane', 'size_m': [60, 60], 'class_id': 40},
                     {'name': 'wall', 'type': 'box', 'size_m': [0.3, 8, 4],
                      'pose': {'xyz': [-6, 0, 2]}}],
         'actors': [
             {'name': 'car', 'type': 'box', 'size_m': [4, 2, 1.5], 'class_id': 10,
              'pose': {'xyz': [0, 0, 0.75]},
              'motion': {'pose': [9, -2, 0, 0, 0, 0], 'twist': [0, 0, 0, 0, 0, 0]}},
             {'name': 'hidden', 'type': 'box', 'size_m': [4, 2, 1.5], 'class_id': 10,
              'pose': {'xyz': [0, 0, 0.75]},
              'motion': {'pose': [-10, 0, 0, 0, 0, 90], 'twist': [0, 0, 0, 0, 0, 0]}}]}
LIDAR = {'channels': 16, 'horizontal_samples': 360, 'vertical_fov_down_deg': 15.0}


def _dataset(tmp_path, world):
    (tmp_path / 'world.yaml').write_text(yaml.safe_dump(world))
    spec = {'worlds': [str(tmp_path / 'world.yaml')], 'frames': 2,
            'formats': ['kitti_object', 'openpcdet'],
            'trajectories': [{'name': 'still', 'pose': [0, 0, 0, 0, 0, 0]}],
            'sensors': [{'type': 'lidar_3d', 'mount': [0, 0, 1.0, 0, 0, 0], 'params': LIDAR}]}
    return run_dataset(tmp_path, spec)


def custom_get_label(path):
    """custom_dataset.py get_label + get_infos: (gt_boxes_lidar (N, 7), names (N,))."""
    gt_boxes, gt_names = [], []
    for line in path.read_text().splitlines(keepends=True):
        line_list = line.strip().split(' ')
        gt_boxes.append(line_list[:-1])
        gt_names.append(line_list[-1])
    return np.array(gt_boxes, dtype=np.float32)[:, :7], np.array(gt_names)


def test_the_kitti_tree_opens_as_openpcdets_kitti_reader_opens_it(tmp_path):
    out = _dataset(tmp_path, WORLD)
    root = out / 'kitti_object' / '00'
    ids = [x.strip() for x in open(root / 'ImageSets' / 'train.txt').readlines()]
    assert ids == ['000000', '000001']
    assert (root / 'ImageSets' / 'val.txt').read_text() == ''      # no frame in two splits
    for idx in ids:
        split = root / 'training'
        points = np.fromfile(str(split / 'velodyne' / f'{idx}.bin'), dtype=np.float32)
        assert points.reshape(-1, 4).shape[0] > 100
        with Image.open(split / 'image_2' / f'{idx}.png') as image:
            assert image.size == kitti_object.IMAGE_SIZE          # (width, height) 1242 x 375
        types = [line.split()[0] for line in (split / 'label_2' / f'{idx}.txt').read_text()
                 .splitlines()]
        # the hidden car holds no point: DontCare, after the objects
        assert types == ['Car', 'DontCare']
        num_objects = len([t for t in types if t != 'DontCare'])
        assert types[:num_objects] == ['Car']
    rows = [line.split() for line in
            (root / 'tracking' / 'label_02' / '0000.txt').read_text().splitlines()]
    assert [(r[0], r[1], r[2]) for r in rows] == [('0', '1', 'Car'), ('0', '-1', 'DontCare'),
                                                  ('1', '1', 'Car'), ('1', '-1', 'DontCare')]


def test_openpcdet_reads_an_empty_frame_and_a_sparse_box_as_dont_care(tmp_path):
    out = _dataset(tmp_path, WORLD)
    gt, names = custom_get_label(out / 'openpcdet' / '00' / 'labels' / '000000.txt')
    assert gt.shape == (2, 7) and names.tolist() == ['Car', 'DontCare']
    (tmp_path / 'empty.txt').write_text(openpcdet.label_lines(np.zeros(0, boxes.BOX_DTYPE)))
    gt, names = custom_get_label(tmp_path / 'empty.txt')
    assert gt.shape == (1, 7) and names.tolist() == ['DontCare']   # dropped by __getitem__


def test_a_box_below_the_image_has_no_2d_box():
    box = np.zeros(1, boxes.BOX_DTYPE)[0]
    box['center'], box['size'] = [10.0, 0.0, -30.0], [4.0, 2.0, 1.5]   # 71 deg below the axis
    assert kitti_object.bbox_2d(box) == (0.0, 0.0, 0.0, 0.0)
    box['center'] = [10.0, 0.0, 0.0]
    left, top, right, bottom = kitti_object.bbox_2d(box)
    assert 0 < left < right < 1242 and 0 < top < bottom < 375
