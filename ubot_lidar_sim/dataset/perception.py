"""
A spec's perception options: ``label_map``, ``deskew`` and ``boxes`` (docs/cli-and-datasets.md).

- ``label_map: native | semantickitti`` (default native): the semantic ids of the SemanticKITTI
  export (output/label_maps.py).
- ``deskew: true`` (default false): the SemanticKITTI scans are ego-motion compensated, every
  point moved into the sensor frame at the scan's stamp (output/deskew.py), as KITTI's are.
- ``boxes: [class ids]`` (default none): static world objects of these class ids get a box per
  frame too, besides every actor (output/boxes.py).

A spec with none of them set keeps the sequence keys of earlier specs.
"""

from dataclasses import dataclass

from ubot_lidar_sim.core.class_ids import CLASS_ID_RULE, is_class_id
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.output.label_maps import LABEL_MAPS

KEYS = ('label_map', 'deskew', 'boxes')


@dataclass(frozen=True)
class Perception:
    """The perception options of a spec (all default: the files of earlier versions)."""

    label_map: str = 'native'
    deskew: bool = False
    boxes: tuple = ()

    def parameters(self):
        """Return the options that differ from the default, as plain JSON data."""
        out = {}
        if self.label_map != 'native':
            out['label_map'] = self.label_map
        if self.deskew:
            out['deskew'] = True
        if self.boxes:
            out['boxes'] = list(self.boxes)
        return out


def parse(data, base=Perception()):
    """Return the Perception of a spec's keys (a mapping); ConfigError names a bad key."""
    label_map = data.get('label_map', base.label_map)
    if label_map not in LABEL_MAPS:
        raise ConfigError('label_map', label_map, ' or '.join(LABEL_MAPS))
    deskew = data.get('deskew', base.deskew)
    if not isinstance(deskew, bool):
        raise ConfigError('deskew', deskew, 'true or false')
    boxes = data.get('boxes', list(base.boxes))
    if not isinstance(boxes, (list, tuple)) or not all(is_class_id(b) for b in boxes):
        raise ConfigError('boxes', boxes, f'a list of class ids: {CLASS_ID_RULE}')
    return Perception(label_map, deskew, tuple(sorted(set(boxes))))
