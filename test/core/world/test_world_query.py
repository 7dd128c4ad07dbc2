"""World's typed query (core/world/query.py) and the Sweep value (core/sensors/sweep.py)."""

import numpy as np
import pytest

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.sensors.sweep import Sweep
from ubot_lidar_sim.core.world.query import ActorPoses, RayBatch, TraceSettings
from ubot_lidar_sim.core.world.world import World

# Two rays straight down from 2 m and 3.5 m above the 'flat' world's ground plane (z = 0).
ORIGINS = np.array([[0.0, 0.0, 2.0], [5.0, -3.0, 3.5]])
DOWN = np.array([[0.0, 0.0, -1.0], [0.0, 0.0, -1.0]])


@pytest.fixture(scope='module')
def flat():
    return World.load('flat')


def test_a_ray_batch_down_onto_the_ground_hits_at_the_height(flat):
    hits = flat.trace_rays(RayBatch(ORIGINS, DOWN, 50.0), TraceSettings())
    # 2 m and 3.5 m are exact in float32 (the cast's precision): the ranges are the heights.
    assert hits.ray.tolist() == [0, 1]
    assert hits.range_m.tolist() == [2.0, 3.5]


def test_the_keyword_trace_gives_the_bytes_of_trace_rays(flat):
    typed = flat.trace_rays(RayBatch(ORIGINS, DOWN, 50.0), TraceSettings(max_hits=2),
                            ActorPoses(None))
    keyword = flat.trace(ORIGINS, DOWN, 50.0, max_hits=2)
    for name in ('ray', 'range_m', 'point', 'normal', 'material', 'albedo'):
        assert np.asarray(getattr(typed, name)).tobytes() == \
            np.asarray(getattr(keyword, name)).tobytes(), name


def test_a_ray_shorter_than_the_height_hits_nothing(flat):
    assert len(flat.trace_rays(RayBatch(ORIGINS, DOWN, 1.5), TraceSettings())) == 0


@pytest.mark.parametrize('field, value', [('max_hits', 0), ('max_hits', 9),
                                          ('max_hits', True), ('continue_step_m', 0.0),
                                          ('smoke_radius_scale', 0.0),
                                          ('smoke_density_threshold', 1.5),
                                          ('glass', 'frosted')])
def test_trace_settings_refuse_a_bad_value_naming_its_field(field, value):
    with pytest.raises(ConfigError, match=field):
        TraceSettings(**{field: value})


def test_the_keyword_trace_takes_its_rays32_by_keyword_only(flat):
    with pytest.raises(TypeError):
        flat.trace(ORIGINS, DOWN, 50.0, 4)      # once max_hits; never rays32 by position


def test_a_sweep_holds_its_stamp_as_a_float_and_its_index_as_an_int():
    sweep = Sweep(np.float32(0.25), None, np.int64(7))
    assert type(sweep.stamp_s) is float and sweep.stamp_s == 0.25
    assert type(sweep.scan_index) is int and sweep.scan_index == 7
    assert sweep.weather is None and sweep.actor_poses is None
