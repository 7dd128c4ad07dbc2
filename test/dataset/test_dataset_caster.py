"""A dataset spec picks the caster in its sensors' params; the runner loads the world with it."""

from builders import write_spec
from ubot_lidar_sim.cli import main
from ubot_lidar_sim.core.raycast.embree_caster import EmbreeCaster
from ubot_lidar_sim.core.raycast.open3d_caster import Open3dCaster
from ubot_lidar_sim.dataset import runner
from ubot_lidar_sim.dataset.spec import load_spec

LIDAR = {'channels': 2, 'horizontal_samples': 36}


def _spec(tmp_path, *casters):
    """Return the path of a spec of one lidar_3d per caster (None: the parameter left out)."""
    sensors = [{'type': 'lidar_3d', 'name': f'lidar_{k}', 'topic': f'/lidar_{k}/points',
                'mount': [0, 0, 1.0 + k, 0, 0, 0],
                'params': {**LIDAR, 'frame_id': f'lidar_{k}',
                           **({'caster': c} if c else {})}}
               for k, c in enumerate(casters)]
    return write_spec(tmp_path, {'worlds': ['flat'], 'frames': 1, 'sensors': sensors})


def test_the_runner_loads_the_world_with_the_specs_caster(tmp_path):
    for caster, cls in (('embree', EmbreeCaster), (None, Open3dCaster)):
        spec = load_spec(_spec(tmp_path, caster))
        sensors = runner.rig_sensors(spec, 'flat', 0)
        world, _ = runner.load_world(sensors[0].cfg, cast_threads=1)
        assert isinstance(world.caster, cls)
        assert world.caster.threads == 1


def test_a_rig_of_two_casters_is_refused_naming_the_parameter(tmp_path, capsys):
    assert main(['dataset', str(_spec(tmp_path, 'embree', 'open3d')), '--out',
                 str(tmp_path / 'out'), '--quiet']) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "caster of sensor 'lidar_1'" in err
