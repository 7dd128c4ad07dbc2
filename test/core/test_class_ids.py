"""A world's class_id is a SemanticKITTI class id, never a material index (issue 53)."""

import numpy as np
import pytest
from ubot_lidar_sim.core import labels
from ubot_lidar_sim.core.class_ids import (CLASS_DTYPE, CLASS_NAMES, default_class,
                                           MATERIAL_CLASS, SEMANTICKITTI)
from ubot_lidar_sim.core.errors import WorldError
from ubot_lidar_sim.core.material_ids import MATERIAL_NAMES
from ubot_lidar_sim.core.world.world import World
from ubot_lidar_sim.output import kitti_object, label_maps
from ubot_lidar_sim.output.boxes import BOX_DTYPE


def test_every_material_has_a_class_of_the_map():
    assert set(MATERIAL_NAMES) <= set(MATERIAL_CLASS)
    assert all(default_class(m) in SEMANTICKITTI for m in MATERIAL_NAMES)


def test_the_materials_being_appended_have_classes_already():
    # glass, mirror (issue 56), wood .. tile (issue 52): appended after snow.
    for name in ('glass', 'mirror', 'wood', 'metal', 'fabric', 'plastic', 'paper', 'carpet',
                 'tile'):
        assert MATERIAL_CLASS[name] in SEMANTICKITTI


def test_simulator_classes_are_beyond_semantickitti_and_fit_the_class_dtype():
    own = (labels.PRECIPITATION_CLASS, labels.SMOKE_CLASS, labels.SELF_CLASS,
           labels.GHOST_CLASS, labels.FALSE_ALARM_CLASS)
    assert len(set(own)) == 5 and not set(own) & set(SEMANTICKITTI)
    assert max(CLASS_NAMES) <= np.iinfo(CLASS_DTYPE).max
    assert [labels.SIM_CLASSES[c][1] for c in own] == [1, 1, 0, 1, 1]


@pytest.mark.parametrize('class_id, kitti', [(10, 'Car'), (11, 'Misc'), (13, 'Misc'),
                                             (16, 'Tram'), (20, 'Misc'), (256, 'Tram'),
                                             (252, 'Car'), (31, 'Cyclist')])
def test_a_world_class_id_reaches_the_hits_and_kitti_as_that_class(class_id, kitti):
    world = World.from_dict({'objects': [
        {'name': 'thing', 'type': 'box', 'size_m': [1, 1, 1], 'class_id': class_id,
         'material': 'bark', 'pose': {'xyz': [5, 0, 0]}}]})
    hits = world.trace(np.zeros((1, 3)), np.array([[1.0, 0.0, 0.0]]), 50.0)
    assert hits.class_id.tolist() == [class_id] and hits.class_id.dtype == CLASS_DTYPE
    assert label_maps.to_semantickitti(hits.class_id).tolist() == [class_id]
    box = np.zeros(1, BOX_DTYPE)
    box['class_id'], box['center'], box['size'] = class_id, [5, 0, 0], [1, 1, 1]
    box['num_points'] = 100                 # a box its points fill: not DontCare
    assert kitti_object.label_lines(box).split()[0] == kitti


@pytest.mark.parametrize('bad', [17, 100, 300, -1, 65536, 'car', 10.0, True])
def test_a_class_id_outside_the_map_is_refused_on_load(bad):
    with pytest.raises(WorldError, match=r"objects\[0\] 'b'\.class_id: expected a SemanticKITTI "
                                         r'class id .* or a simulator class .*, got'):
        World.from_dict({'objects': [{'name': 'b', 'type': 'box', 'size_m': [1, 1, 1],
                                      'class_id': bad}]})
