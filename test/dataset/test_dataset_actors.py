"""Actors offline (issue 28): the CLI and the dataset runner move them; instance_id read back."""

from builders import run_dataset
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
import numpy as np
import pytest
from ubot_lidar_sim.cli import main
import yaml

# A car 2 m wide driving across 6 m ahead of the sensor, then on round a loop; a cylinder
# standing still (zero twist) 4 m behind the sensor.
WORLD = {'objects': [{'name': 'ground', 'type': 'plane', 'size_m': [100, 100]}],
         'actors': [
             {'name': 'car', 'type': 'box', 'size_m': [4, 2, 1.5], 'material': 'vehicle',
              'class_id': 30, 'pose': {'xyz': [0, 0, 0.75]},
              'motion': {'waypoints': [[6, -3, 0], [6, 3, 0], [8, 3, 0]], 'speed_m_s': 5.0,
                         'loop': True}},
             {'name': 'post', 'type': 'cylinder', 'radius_m': 0.5, 'height_m': 2.0,
              'class_id': 31, 'motion': {'pose': [-4, 0, 1, 0, 0, 0],
                                         'twist': [0, 0, 0, 0, 0, 0]}}]}
LIDAR = {'channels': 8, 'horizontal_samples': 180, 'vertical_fov_down_deg': 10.0}


def _world(tmp_path, data=None):
    path = tmp_path / 'world.yaml'
    path.write_text(yaml.safe_dump(data or WORLD))
    return path


def test_instance_id_reads_back_from_the_mcap_and_labels_of_a_sequence_with_actors(tmp_path):
    spec = {'worlds': [str(_world(tmp_path))], 'frames': 3, 'seeds': [0],
            'trajectories': [{'name': 'still', 'twist': [0, 0, 0, 0, 0, 0]}],
            'sensors': [{'type': 'lidar_3d', 'mount': [0, 0, 1.0, 0, 0, 0], 'params': LIDAR}]}
    out = run_dataset(tmp_path, spec)
    labels = np.load(out / 'seq_0000.labels.npz')
    with open(out / 'seq_0000.mcap', 'rb') as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        clouds = [m for _, _, _, m in reader.iter_decoded_messages(topics=['/points'])]
    assert len(clouds) == 3
    for k, cloud in enumerate(clouds):
        # The field as the message declares it: uint16 (datatype 4) at its offset.
        field = next(f for f in cloud.fields if f.name == 'instance_id')
        cls = next(f for f in cloud.fields if f.name == 'class_id')
        assert field.datatype == 4
        raw = np.frombuffer(bytes(cloud.data), np.uint8).reshape(-1, cloud.point_step)
        inst = raw[:, field.offset:field.offset + 2].copy().view('<u2')[:, 0]
        np.testing.assert_array_equal(inst, labels[f'lidar_3d/{k:04d}/instance_id'])
        # The car is instance 1, class 30; the post instance 2, class 31; the rest 0.
        classes = raw[:, cls.offset]
        assert set(np.unique(inst)) == {0, 1, 2}
        assert set(classes[inst == 1]) == {30} and set(classes[inst == 2]) == {31}


def test_scan_writes_instance_id_to_npz_and_moves_the_actor_with_the_frames(tmp_path):
    out = tmp_path / 'cloud.npz'
    args = ['scan', '--sensor', 'lidar_3d', '--world', str(_world(tmp_path)), '--frames', '3',
            '--pose', '0', '0', '1', '0', '0', '0', '--out', str(out), '--set',
            'model=geometric']
    args += [f'--set={k}={v}' for k, v in {**LIDAR, 'horizontal_samples': 720}.items()]
    assert main(args) == 0
    front_y = []
    for k in range(3):
        data = np.load(tmp_path / f'cloud_{k:04d}.npz')
        car = data['instance_id'] == 1
        assert car.any() and np.all(data['class_id'][car] == 30)
        front_y.append(float(data['y'][car].max()))
    # Sweeps 0.1 s apart at 5 m/s: the car's front (near y = 0, 5 m ahead) moves 0.5 m along +y.
    # bound: one 0.5 deg column at 5 m (44 mm) plus the front's later firing (8 mm at 5 m/s)
    assert np.allclose(np.diff(front_y), 0.5, atol=0.06)


@pytest.mark.parametrize('actor, key', [
    ({'name': 'x', 'type': 'box', 'size_m': [1, 1, 1],
      'motion': {'waypoints': [[0, 0, 0]], 'speed_m_s': 1.0}}, "'x'.motion.waypoints"),
    ({'name': 'x', 'type': 'box', 'size_m': [1, 1, 1], 'motion': {'frame': 'a b'}},
     "'x'.motion.frame")])
def test_a_bad_actor_exits_2_with_one_line_naming_it(tmp_path, capsys, actor, key):
    world = _world(tmp_path, {'objects': [], 'actors': [actor]})
    code = main(['scan', '--sensor', 'lidar_3d', '--world', str(world), '--out',
                 str(tmp_path / 'x.npz')])
    err = capsys.readouterr().err.strip()
    assert code == 2 and '\n' not in err and key in err
