"""
A SemanticKITTI export counted as semantic-kitti-api's count.py and content.py count it.

Re-implemented from PRBonn/semantic-kitti-api (a9c749e): count.py lines 46-62 (the sequences of
``split`` train + valid + test, each one's ``velodyne`` files found by os.walk) and content.py
lines 46-117 (the train sequences; per scan ``np.bincount(label & 0xFFFF)``, as
auxiliary/laserscan.py SemLaserScan.open_label line 246 takes the semantic part, added per
key of ``labels``; an id that is no key is reported as a "wrong label").
"""

import os

from builders import run_dataset
import numpy as np
from ubot_lidar_sim.core.labels import PRECIPITATION_CLASS
import yaml

WORLD = {'objects': [
    {'name': 'road', 'type': 'plane', 'size_m': [80, 80], 'material': 'asphalt'},
    {'name': 'house', 'type': 'box', 'size_m': [2, 8, 4], 'material': 'building',
     'pose': {'xyz': [10, 0, 2]}},
    {'name': 'hedge', 'type': 'box', 'size_m': [6, 1, 1.5], 'material': 'shrub',
     'pose': {'xyz': [0, -7, 0.75]}},
    {'name': 'sign', 'type': 'cylinder', 'radius_m': 0.3, 'height_m': 3, 'class_id': 81,
     'pose': {'xyz': [-5, 5, 1.5]}}],
    'actors': [{'name': 'walker', 'type': 'box', 'size_m': [0.6, 0.6, 1.8], 'class_id': 30,
                'pose': {'xyz': [0, 0, 0.9]},
                'motion': {'pose': [-6, -2, 0, 0, 0, 0], 'twist': [0, 0.5, 0, 0, 0, 0]}}]}
LIDAR = {'channels': 16, 'horizontal_samples': 360, 'vertical_fov_down_deg': 15.0}
FRAMES = 4
CLASSES = {40, 50, 70, 81, 30, PRECIPITATION_CLASS}   # road, building, hedge, sign, walker, rain


def count_scans(dataset, cfg):
    """count.py: {sequence: number of scans} over train + valid + test."""
    sequences = cfg['split']['train']
    sequences.extend(cfg['split']['valid'])
    sequences.extend(cfg['split']['test'])
    sequences.sort()
    out = {}
    for seq in sequences:
        scan_paths = os.path.join(dataset, 'sequences', '{0:02d}'.format(int(seq)), 'velodyne')
        assert os.path.isdir(scan_paths)
        names = [os.path.join(dp, f) for dp, dn, fn in os.walk(scan_paths) for f in fn]
        out[seq] = out.get(seq, 0) + len(names)
    return out


def content(dataset, cfg):
    """content.py: ({label: points} over the train sequences, {wrong label: points})."""
    accum, wrong = dict.fromkeys(cfg['labels'], 0), {}
    for seq in cfg['split']['train']:
        seqstr = '{0:02d}'.format(int(seq))
        paths = [os.path.join(dataset, 'sequences', seqstr, d) for d in ('velodyne', 'labels')]
        scans, labels = (sorted(os.path.join(dp, f) for dp, dn, fn in os.walk(p) for f in fn)
                         for p in paths)
        assert len(scans) == len(labels)
        for name in labels:
            count = np.bincount(np.fromfile(name, dtype=np.uint32) & 0xFFFF)
            for key in accum:
                if count.size > key:
                    accum[key] += int(count[key])
                    count[key] = 0
            wrong.update({i: int(c) for i, c in enumerate(count) if c > 0})
    return accum, wrong


def test_count_and_content_find_each_scan_once_and_every_class_of_the_world(tmp_path):
    (tmp_path / 'world.yaml').write_text(yaml.safe_dump(WORLD))
    spec = {'worlds': [str(tmp_path / 'world.yaml')], 'frames': FRAMES,
            'formats': ['semantickitti'], 'weather': [{'rain_mm_h': 30.0}],
            'trajectories': [{'name': 'a', 'pose': [0, 0, 0, 0, 0, 0]},
                             {'name': 'b', 'pose': [2, 0, 0, 0, 0, 90]}],
            'sensors': [{'type': 'lidar_3d', 'mount': [0, 0, 1.5, 0, 0, 0], 'params': LIDAR}]}
    out = run_dataset(tmp_path, spec)
    cfg = yaml.safe_load((out / 'semantic-kitti.yaml').read_text())
    assert count_scans(out, cfg) == {0: FRAMES, 1: FRAMES}
    accum, wrong = content(out, yaml.safe_load((out / 'semantic-kitti.yaml').read_text()))
    assert wrong == {}
    assert {k for k, v in accum.items() if v} == CLASSES
