"""
``semantic-kitti.yaml``: the full data config the SemanticKITTI API's scripts read.

Keys as PRBonn/semantic-kitti-api ``config/semantic-kitti.yaml`` has them, each of which a
script of the API reads: ``labels`` and ``color_map`` (BGR; ``auxiliary/laserscan.py``
SemLaserScan builds its colour table from it), ``content`` (``content.py``, training code's
class weights), ``learning_map``, ``learning_map_inv``, ``learning_ignore``
(``evaluate_semantics.py``, ``remap_semantic_labels.py``) and ``split`` (train / valid / test
sequence numbers: ``evaluate_semantics.py``, ``content.py``, ``count.py``,
``remap_semantic_labels.py``).

- native (our class ids): SemanticKITTI's labels, colours and 20-class learning map, and each
  simulator class (core/labels.py: precipitation, smoke, self, ghost) with a colour of its own
  and a learning class of its own after SemanticKITTI's 19 (20, 21, ...), so a network can learn
  to tell rain from surfaces.
- semantickitti: SemanticKITTI's own labels, colours and 20-class learning map.

``content`` is 0.0 for every label (the share of each class is not known before the
recording; ``content.py`` counts it from the labels). ``split``: every sequence written is in
the spec's split (train by default) and in no other, so a script that walks every split
(``count.py``, ``content.py``) meets each scan once; ``every`` lists them in all three.
"""

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ubot_lidar_sim.core import labels
from ubot_lidar_sim.core.class_ids import SEMANTICKITTI
from ubot_lidar_sim.output import label_maps
from ubot_lidar_sim.output.atomic import atomic_write
import yaml

LABEL_MAP = 'semantic-kitti.yaml'
KEYS = ('labels', 'color_map', 'content', 'learning_map', 'learning_map_inv',
        'learning_ignore', 'split')


def _palette(i):
    return [(i * 67 + 40) % 256, (i * 131 + 90) % 256, (i * 197 + 160) % 256]


def data_config(label_map: str = 'native', sequences: Iterable[int] = (0,),
                split: str = 'train') -> dict[str, Any]:
    """Return the semantic-kitti.yaml mapping of label_map, the sequences in split."""
    names = {i: v[0] for i, v in SEMANTICKITTI.items()}
    colors = {i: list(v[1]) for i, v in SEMANTICKITTI.items()}
    learning = dict(label_maps.SEMANTICKITTI_LEARNING)
    inverse = dict(label_maps.SEMANTICKITTI_LEARNING_INV)
    if label_map != 'semantickitti':
        for cid, (name, _) in sorted(labels.SIM_CLASSES.items()):
            names[cid], colors[cid] = name, _palette(cid)
            learning[cid] = len(inverse)
            inverse[len(inverse)] = cid
    seqs = sorted(int(s) for s in sequences)
    return {'labels': names, 'color_map': colors, 'content': dict.fromkeys(names, 0.0),
            'learning_map': learning, 'learning_map_inv': inverse,
            'learning_ignore': {k: k == 0 for k in inverse},
            'split': {k: list(seqs) if split in (k, 'every') else []
                      for k in ('train', 'valid', 'test')}}


def write(root: str | Path, label_map: str = 'native', sequences: Iterable[int] = (0,),
          split: str = 'train') -> None:
    """Write ROOT/semantic-kitti.yaml (data_config) atomically."""
    path = Path(root) / LABEL_MAP
    text = (f'# SemanticKITTI data config of ubot_lidar_sim, label_map: {label_map} '
            '(docs/cli-and-datasets.md)\n'
            + yaml.safe_dump(data_config(label_map, sequences, split), sort_keys=False,
                             default_flow_style=None))
    atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding='utf-8'))
