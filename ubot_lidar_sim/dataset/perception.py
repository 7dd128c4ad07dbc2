"""
A spec's perception options: ``label_map``, ``deskew``, ``boxes`` and ``split``.

docs/cli-and-datasets.md describes them:

- ``label_map: native | semantickitti`` (default native): the semantic ids of the SemanticKITTI
  export (output/label_maps.py).
- ``deskew: true | false``: every lidar_3d output ego-motion compensated (or none). Unset, each
  format's sink chooses: the perception formats (kitti_object, openpcdet: dataset/box_sink.py,
  whose detectors take a cloud in one frame, as KITTI's object scans are) are deskewed and the
  others are as the sensor publishes them.
- ``boxes: [class ids]`` (default none): static world objects of these class ids get a box per
  frame too, besides every actor (output/boxes.py).
- ``split: train | valid | test | every`` (default train): the split the sequence (and its
  frames, in the ImageSets of kitti_object and openpcdet) is listed in; ``every`` lists it in
  all three.

A spec with none of them set keeps the sequence keys of earlier specs.
"""

from dataclasses import dataclass
from typing import Optional

from ubot_lidar_sim.core.class_ids import CLASS_ID_RULE, is_class_id
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.output.label_maps import LABEL_MAPS

KEYS = ('label_map', 'deskew', 'boxes', 'split')
SPLITS = ('train', 'valid', 'test', 'every')


@dataclass(frozen=True)
class Perception:
    """The perception options of a spec (deskew None: as each format's sink chooses)."""

    label_map: str = 'native'
    deskew: Optional[bool] = None
    boxes: tuple = ()
    split: str = 'train'

    def deskews(self, by_default=False):
        """Return True when a format writes deskewed lidar_3d sweeps (by_default: unset)."""
        return by_default if self.deskew is None else self.deskew

    def parameters(self):
        """Return the options that differ from the default, as plain JSON data."""
        out = {}
        if self.label_map != 'native':
            out['label_map'] = self.label_map
        if self.deskew is not None:
            out['deskew'] = self.deskew
        if self.boxes:
            out['boxes'] = list(self.boxes)
        if self.split != 'train':
            out['split'] = self.split
        return out


def parse(data, base=Perception()):
    """Return the Perception of a spec's keys (a mapping); ConfigError names a bad key."""
    label_map = data.get('label_map', base.label_map)
    if label_map not in LABEL_MAPS:
        raise ConfigError('label_map', label_map, ' or '.join(LABEL_MAPS))
    deskew = data.get('deskew', base.deskew)
    if deskew is not None and not isinstance(deskew, bool):
        raise ConfigError('deskew', deskew, 'true or false')
    boxes = data.get('boxes', list(base.boxes))
    if not isinstance(boxes, (list, tuple)) or not all(is_class_id(b) for b in boxes):
        raise ConfigError('boxes', boxes, f'a list of class ids: {CLASS_ID_RULE}')
    split = data.get('split', base.split)
    if split not in SPLITS:
        raise ConfigError('split', split, ' or '.join(SPLITS))
    return Perception(label_map, deskew, tuple(sorted(set(boxes))), split)
