"""
SemanticKITTI exports that the SemanticKITTI API loads (issue 43).

semantic-kitti-api's scripts are not on PyPI (the package of that name there ships only
``auxiliary/``, without ``evaluate_semantics.py``), so this test vendors nothing and
re-implements their loading as PRBonn/semantic-kitti-api has it: ``evaluate_semantics.py``
(the data config's keys, ``DATA["split"][split]``, the remap table of ``max(learning_map) +
100`` entries, ``np.fromfile(label, np.int32) & 0xFFFF``), ``auxiliary/np_ioueval.py``
(iouEval: the confusion matrix, ignored columns zeroed, getacc) and ``auxiliary/laserscan.py``
(SemLaserScan's colour table of ``max(color_map) + 100`` rows).
"""

import os

from builders import run_dataset
import numpy as np
import pytest
from ubot_lidar_sim.cli import main
from ubot_lidar_sim.core.class_ids import SEMANTICKITTI
from ubot_lidar_sim.core.labels import (FALSE_ALARM_CLASS, GHOST_CLASS, PRECIPITATION_CLASS,
                                        SELF_CLASS, SMOKE_CLASS)
from ubot_lidar_sim.output import label_maps, semantickitti_yaml
import yaml

WORLD = {'objects': [
    {'name': 'ground', 'type': 'plane', 'size_m': [60, 60], 'material': 'asphalt'},
    {'name': 'walker', 'type': 'box', 'size_m': [1, 1, 2], 'class_id': 30,
     'pose': {'xyz': [6, 0, 1]}},
    {'name': 'tram', 'type': 'box', 'size_m': [1, 3, 3], 'class_id': 256, 'material': 'vehicle',
     'pose': {'xyz': [-6, 0, 1.5]}},
    {'name': 'bin', 'type': 'box', 'size_m': [1, 1, 1], 'material': 'metal_bin',
     'pose': {'xyz': [0, 6, 0.5]}}]}
LIDAR = {'channels': 8, 'horizontal_samples': 180, 'vertical_fov_down_deg': 15.0}


def _export(tmp_path, label_map):
    (tmp_path / 'world.yaml').write_text(yaml.safe_dump(WORLD))
    spec = {'worlds': [str(tmp_path / 'world.yaml')], 'frames': 2, 'formats': ['semantickitti'],
            'label_map': label_map,
            'trajectories': [{'name': 'still', 'pose': [0, 0, 0, 0, 0, 0]}],
            'sensors': [{'type': 'lidar_3d', 'mount': [0, 0, 1.0, 0, 0, 0], 'params': LIDAR}]}
    out = run_dataset(tmp_path, spec)
    return out


class IouEval:
    """auxiliary/np_ioueval.py's iouEval, as the API computes accuracy."""

    def __init__(self, n_classes, ignore):
        self.ignore = np.array(ignore, dtype=np.int64)
        self.include = np.array([n for n in range(n_classes) if n not in ignore], np.int64)
        self.conf = np.zeros((n_classes, n_classes), dtype=np.int64)

    def add_batch(self, pred, label):
        np.add.at(self.conf, tuple(np.stack((pred.reshape(-1), label.reshape(-1)))), 1)

    def acc(self):
        conf = self.conf.copy()
        conf[:, self.ignore] = 0
        tp = np.diag(conf)
        fp = conf.sum(axis=1) - tp
        return tp.sum() / (tp[self.include].sum() + fp[self.include].sum() + 1e-15)


def evaluate_semantics(dataset, datacfg, split='valid'):
    """evaluate_semantics.py's loading, labels as their own predictions: return the accuracy."""
    data = yaml.safe_load(open(datacfg))
    remap, inv, ignore = data['learning_map'], data['learning_map_inv'], data['learning_ignore']
    remap_lut = np.zeros(max(remap.keys()) + 100, dtype=np.int32)
    remap_lut[list(remap.keys())] = list(remap.values())
    evaluator = IouEval(len(inv), [int(c) for c, ign in ignore.items() if ign])
    names = []
    for sequence in data['split'][split]:
        folder = os.path.join(dataset, 'sequences', f'{int(sequence):02d}', 'labels')
        names += sorted(os.path.join(dp, f) for dp, _, fn in os.walk(folder)
                        for f in fn if '.label' in f)
    assert names
    for name in names:
        label = remap_lut[np.fromfile(name, dtype=np.int32).reshape(-1) & 0xFFFF]
        evaluator.add_batch(label, label)
    return float(evaluator.acc())


def colorize(datacfg, label_file):
    """auxiliary/laserscan.py SemLaserScan: the colour of every point's semantic label."""
    color_map = yaml.safe_load(open(datacfg))['color_map']
    lut = np.zeros((max(k + 1 for k in color_map) + 100, 3), dtype=np.float32)
    for key, value in color_map.items():
        lut[key] = np.array(value, np.float32) / 255.0
    return lut[np.fromfile(label_file, dtype=np.int32) & 0xFFFF]


@pytest.mark.parametrize('label_map', ['native', 'semantickitti'])
def test_evaluate_semantics_of_an_export_against_itself_gives_accuracy_one(tmp_path, label_map):
    out = _export(tmp_path, label_map)
    cfg = out / 'semantic-kitti.yaml'
    data = yaml.safe_load(cfg.read_text())
    assert set(semantickitti_yaml.KEYS) <= set(data)
    assert data['split'] == {'train': [0], 'valid': [], 'test': []}    # each sequence once
    assert evaluate_semantics(out, cfg, 'train') == 1.0
    labels = np.fromfile(out / 'sequences/00/labels/000000.label', dtype=np.int32) & 0xFFFF
    assert set(np.unique(labels)) <= set(data['labels'])      # every id written is named
    assert colorize(cfg, out / 'sequences/00/labels/000000.label').shape == (len(labels), 3)


def test_native_ids_are_the_world_class_ids_walker_30_tram_256_road_40_bin_99(tmp_path):
    out = _export(tmp_path, 'native')
    data = yaml.safe_load((out / 'semantic-kitti.yaml').read_text())
    labels = np.fromfile(out / 'sequences/00/labels/000000.label', dtype=np.int32) & 0xFFFF
    # asphalt ground -> 40 road, the walker 30, the moving-on-rails 256 (beyond a byte), the
    # metal bin -> 99 other-object (core/class_ids.py MATERIAL_CLASS)
    assert set(np.unique(labels)) == {40, 30, 256, 99}
    assert data['labels'][256] == 'moving-on-rails' and data['learning_map'][256] == 5
    assert data['labels'][PRECIPITATION_CLASS] == 'precipitation'
    assert data['learning_map_inv'][data['learning_map'][PRECIPITATION_CLASS]] \
        == PRECIPITATION_CLASS


def test_semantickitti_ids_are_the_same_for_surfaces(tmp_path):
    out = _export(tmp_path, 'semantickitti')
    data = yaml.safe_load((out / 'semantic-kitti.yaml').read_text())
    labels = np.fromfile(out / 'sequences/00/labels/000000.label', dtype=np.int32) & 0xFFFF
    assert set(np.unique(labels)) == {40, 30, 256, 99}
    assert data['labels'][30] == 'person' and data['learning_map'][30] == 6
    assert set(data['labels']) == set(SEMANTICKITTI)


def test_the_semantickitti_map_of_simulator_classes_by_hand():
    cls = np.array([10, 72, 256, PRECIPITATION_CLASS, SMOKE_CLASS, SELF_CLASS, GHOST_CLASS,
                    FALSE_ALARM_CLASS])
    np.testing.assert_array_equal(label_maps.to_semantickitti(cls),
                                  [10, 72, 256, 1, 1, 0, 1, 1])


def test_a_world_class_id_outside_the_map_is_refused_with_one_line(tmp_path, capsys):
    world = {'objects': [{'name': 'odd', 'type': 'box', 'size_m': [1, 1, 1], 'class_id': 17}]}
    (tmp_path / 'w.yaml').write_text(yaml.safe_dump(world))
    assert main(['scan', '--world', str(tmp_path / 'w.yaml'), '--out',
                 str(tmp_path / 'a.npz')]) == 2
    err = capsys.readouterr().err.strip()
    assert '\n' not in err and "objects[0] 'odd'.class_id" in err and 'got 17' in err
