"""
rosbag2 MCAP recordings (output/rosbag.py, pipeline/record.py, scan --out FILE.mcap).

Every topic is read back with an independent decoder, mcap_ros2 (mcap-ros2-support), which
knows nothing of this package: it decodes from the definitions embedded in the file.
"""

from collections import defaultdict
import hashlib
import math

from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
import numpy as np
import pytest

from ubot_lidar_sim.cli import effective_config, main
from ubot_lidar_sim.core.class_ids import default_class
from ubot_lidar_sim.core.labels import PRECIPITATION_CLASS, SMOKE_CLASS
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg
from ubot_lidar_sim.core.sensors.point_layouts import LAYOUT_DTYPES
from ubot_lidar_sim.core.world.world import load_for_config
from ubot_lidar_sim.output import rosbag
from ubot_lidar_sim.pipeline.record import record
from ubot_lidar_sim.pipeline.rig import Rig, RigSensor

LIDAR = {'channels': 4, 'horizontal_samples': 90, 'point_layout': 'velodyne'}
MOUNT_Z = 1.2
BASE_Z = 0.5
VX, WZ_DEG = 2.0, 20.0
GRASS = default_class('grass')     # the class of the flat world's plane


def _rig(lidar=None, laser=True, terrain=True):
    lidar_cfg = effective_config('lidar_3d', None, {**LIDAR, **(lidar or {})})
    sensors = [RigSensor('lidar_3d', 'lidar_3d', lidar_cfg,
                         pose_matrix_deg((0, 0, MOUNT_Z), (0, 0, 0)), '/points')]
    if laser:
        sensors.append(RigSensor('laser_scan', 'laser_scan',
                                 effective_config('laser_scan', None, {'resolution_deg': 4.0}),
                                 pose_matrix_deg((0.3, 0, 0.2), (0, 0, 90)), '/scan'))
    if terrain:
        sensors.append(RigSensor('terrain_sensor', 'terrain_sensor',
                                 effective_config('terrain_sensor', None, {}), np.eye(4),
                                 '/terrain'))
    world, materials = load_for_config(sensors[0].cfg)
    return Rig(sensors, world, materials)


WEATHER = Weather(rain_mm_h=4.0, visibility_m=800.0, smoke=[[30, 0, 1, 0.5]],
                  smoke_density=[0.5])


def _record(path, frames=3, **kw):
    base = BodyTwist(pose_matrix_deg((0, 0, BASE_Z), (0, 0, 0)),
                     (VX, 0, 0, 0, 0, math.radians(WZ_DEG)))
    with _rig(**kw) as rig:
        return record(path, rig, base, WEATHER, frames, labels_path=path.with_suffix('.npz'))


def _read(path):
    """Return {topic: [(log_time_ns, schema name, decoded message)]} with mcap_ros2."""
    out = defaultdict(list)
    with open(path, 'rb') as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        for schema, channel, message, decoded in reader.iter_decoded_messages():
            out[channel.topic].append((message.log_time, schema.name, decoded))
    return out


def _ns(stamp):
    return stamp.sec * 1_000_000_000 + stamp.nanosec


@pytest.fixture(scope='module')
def bag(tmp_path_factory):
    path = tmp_path_factory.mktemp('bag') / 'run.mcap'
    stats = _record(path)
    return path, stats, _read(path)


def test_every_topic_has_its_type_and_count(bag):
    _, stats, topics = bag
    counts = {t: len(m) for t, m in topics.items()}
    # 3 lidar sweeps at 10 Hz = 0.3 s: laser 30 Hz -> 9 scans, terrain 50 Hz -> 15 samples;
    # /tf and /clock at 100 Hz from 0 to the last publish time 0.3 s; /environment at 1 Hz.
    assert counts == {'/points': 3, '/scan': 9, '/terrain': 15, '/tf': 31, '/clock': 31,
                      '/tf_static': 1, '/environment': 1}
    assert stats.messages == counts
    types = {t: {s for _, s, _ in m} for t, m in topics.items()}
    assert types == {'/points': {'sensor_msgs/msg/PointCloud2'},
                     '/scan': {'sensor_msgs/msg/LaserScan'},
                     '/terrain': {'ubot_lidar_sim_msgs/msg/TerrainSensor'},
                     '/tf': {'tf2_msgs/msg/TFMessage'}, '/tf_static': {'tf2_msgs/msg/TFMessage'},
                     '/clock': {'rosgraph_msgs/msg/Clock'},
                     '/environment': {'ubot_lidar_sim_msgs/msg/Environment'}}


def test_stamps_are_simulated_time_and_messages_are_logged_when_the_sweep_ends(bag):
    _, _, topics = bag
    start = rosbag.CLOCK_START_NS
    for topic, period_ns in (('/points', 100_000_000), ('/scan', 1e9 / 30)):
        stamps = [_ns(m.header.stamp) for _, _, m in topics[topic]]
        logs = [t for t, _, _ in topics[topic]]
        assert stamps == [start + round(k * period_ns) for k in range(len(stamps))]
        assert logs == [start + round((k + 1) * period_ns) for k in range(len(stamps))]
    assert [_ns(m.header.stamp) for _, _, m in topics['/terrain']] == \
        [t for t, _, _ in topics['/terrain']] == [start + k * 20_000_000 for k in range(15)]
    clock = [_ns(m.clock) for _, _, m in topics['/clock']]
    assert clock == [start + k * 10_000_000 for k in range(31)]
    all_logs = [t for m in topics.values() for t, _, _ in m]
    assert min(all_logs) == start


def test_point_fields_are_the_layout_and_labels_align_with_each_cloud(bag):
    path, stats, topics = bag
    dtype = LAYOUT_DTYPES['velodyne']
    labels = np.load(path.with_suffix('.npz'))
    total = 0
    for k, (_, _, msg) in enumerate(topics['/points']):
        assert [(f.name, f.offset) for f in msg.fields] == \
            [(n, dtype.fields[n][1]) for n in dtype.names]
        assert msg.point_step == 22 and msg.height == 1 and msg.is_dense
        assert msg.header.frame_id == 'lidar_3d'
        assert len(msg.data) == msg.width * 22
        for name, kind in (('class_id', np.uint16), ('material', np.uint8)):
            arr = labels[f'lidar_3d/{k:04d}/{name}']
            assert arr.dtype == kind and arr.shape == (msg.width,)
        total += msg.width
    assert total == stats.points > 0
    assert list(labels['lidar_3d/stamp_ns']) == \
        [_ns(m.header.stamp) for _, _, m in topics['/points']]


def test_an_ouster_cloud_is_organised_rings_high_with_nan_cells_and_labels_per_cell(tmp_path):
    # ouster-ros (ouster-lidar/ouster-ros ouster-ros/src/point_cloud_compose.h,
    # point_cloud_processor.h): height = pixels per column, width = columns, row 0 the top
    # beam, ring = the row, NaN where no return, is_dense false; labels follow every cell.
    path = tmp_path / 'o.mcap'
    stats = _record(path, frames=1, lidar={'point_layout': 'ouster'}, laser=False,
                    terrain=False)
    msg = _read(path)['/points'][0][2]
    assert (msg.height, msg.width) == (4, 90) and not msg.is_dense
    assert msg.row_step == 90 * msg.point_step and len(msg.data) == 4 * msg.row_step
    cells = np.frombuffer(bytes(msg.data), LAYOUT_DTYPES['ouster']).reshape(4, 90)
    np.testing.assert_array_equal(cells['ring'], np.repeat(np.arange(4)[:, None], 90, 1))
    hit = ~np.isnan(cells['x'])
    assert hit[3].all() and not hit[0].all()      # the lowest ring sees the ground, the top sky
    assert stats.points == hit.sum() and (cells['range'][~hit] == 0).all()
    np.testing.assert_array_equal(cells['t'], np.repeat(cells['t'][:1], 4, 0))   # per column
    assert np.all(np.diff(cells['t'][0].astype(np.int64)) > 0)
    labels = np.load(path.with_suffix('.npz'))
    cls = labels['lidar_3d/0000/class_id'].reshape(4, 90)
    assert (cls[~hit] == 0).all() and (cls[3] != 0).all()
    assert set(cls[0][hit[0]]) <= {PRECIPITATION_CLASS, SMOKE_CLASS}   # rain and smoke up there


def _matrix(tf):
    t, q = tf.translation, tf.rotation
    x, y, z, w = q.x, q.y, q.z, q.w
    m = np.eye(4)
    m[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                 [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                 [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    m[:3, 3] = t.x, t.y, t.z
    return m


def test_tf_chain_at_each_cloud_stamp_is_the_driven_arc_and_puts_the_ground_at_zero(bag):
    path, _, topics = bag
    labels = np.load(path.with_suffix('.npz'))
    (_, _, static), = topics['/tf_static']
    mounts = {(t.header.frame_id, t.child_frame_id): _matrix(t.transform)
              for t in static.transforms}
    assert set(mounts) == {('base_link', 'lidar_3d'), ('base_link', 'laser')}
    # bound: float64 mount translation copied through the bag; default rtol 1e-7
    np.testing.assert_allclose(mounts['base_link', 'lidar_3d'][:3, 3], [0, 0, MOUNT_Z])
    dynamic = {}
    for _, _, msg in topics['/tf']:
        (t,) = msg.transforms
        assert (t.header.frame_id, t.child_frame_id) == ('map', 'base_link')
        dynamic[_ns(t.header.stamp)] = _matrix(t.transform)
    w = math.radians(WZ_DEG)
    dtype = LAYOUT_DTYPES['velodyne']
    for k, (_, _, cloud) in enumerate(topics['/points']):
        stamp = _ns(cloud.header.stamp)
        pose = dynamic[stamp] @ mounts['base_link', 'lidar_3d']
        t = (stamp - rosbag.CLOCK_START_NS) * 1e-9
        # A constant twist (v, 0, 0, 0, 0, w) from the origin drives the arc
        # x = v/w sin(wt), y = v/w (1 - cos(wt)), heading wt.
        # bound: float64 mount translation copied through the bag; default rtol 1e-7
        np.testing.assert_allclose(pose[:3, 3], [VX / w * math.sin(w * t),
                                                 VX / w * (1 - math.cos(w * t)),
                                                 BASE_Z + MOUNT_Z], atol=1e-9)
        # bound: float64 integration of a constant twist, eps64 x 10 m << 1e-9
        np.testing.assert_allclose(math.atan2(pose[1, 0], pose[0, 0]), w * t, atol=1e-9)
        pts = np.frombuffer(bytes(cloud.data), dtype=dtype)
        xyz = np.stack([pts['x'], pts['y'], pts['z']], axis=1).astype(np.float64)
        ground = labels[f'lidar_3d/{k:04d}/class_id'] == GRASS  # not rain clutter, not smoke
        world_z = xyz[ground] @ pose[2, :3] + pose[2, 3]
        assert ground.sum() > 50
        # bound: the flat world's ground is z = 0; weak echoes in the rain carry range noise.
        assert np.median(np.abs(world_z)) < 0.02 and np.mean(np.abs(world_z) < 0.05) > 0.9


def test_environment_carries_the_weather_and_terrain_its_rays(bag):
    _, _, topics = bag
    (_, _, env), = topics['/environment']
    assert (env.rain_rate_mm_h, env.visibility_m) == (4.0, 800.0)
    assert env.header.frame_id == 'map'
    (smoke,) = env.smoke
    assert (smoke.center.x, smoke.radius_m, smoke.density) == (30.0, 0.5, 0.5)
    _, _, first = topics['/terrain'][0]
    assert list(first.hit_flg) == [0, 1, 1, 1, 1]     # body ray misses, tires hit the ground
    # bound: vertical rays on z = 0 of exact vertices (test_world): < 1e-6 m
    np.testing.assert_allclose([p.z for p in first.hit_loc[1:]], 0.0, atol=1e-6)
    _, _, scan = topics['/scan'][0]
    assert scan.header.frame_id == 'laser' and len(scan.ranges) == 90


def test_embedded_definitions_carry_constants_and_dependencies(bag):
    path, _, _ = bag
    with open(path, 'rb') as f:
        schemas = {s.name: s for s in make_reader(f).get_summary().schemas.values()}
    terrain = schemas['ubot_lidar_sim_msgs/msg/TerrainSensor']
    assert terrain.encoding == 'ros2msg'
    text = terrain.data.decode()
    assert 'uint8 FRONT_LEFT=1' in text and 'MSG: geometry_msgs/Point' in text


def test_equal_inputs_give_equal_bytes(tmp_path):
    # The bag's metadata names its file, so the two runs write the same name in two places.
    (tmp_path / 'a').mkdir()
    (tmp_path / 'b').mkdir()
    a, b = tmp_path / 'a' / 'run.mcap', tmp_path / 'b' / 'run.mcap'
    _record(a, frames=2, laser=False, terrain=False)
    _record(b, frames=2, laser=False, terrain=False)
    assert hashlib.sha256(a.read_bytes()).digest() == hashlib.sha256(b.read_bytes()).digest()


class _Stop(Exception):
    pass


def test_an_interrupted_write_leaves_nothing_under_the_final_name(tmp_path):
    path = tmp_path / 'cut.mcap'
    with pytest.raises(_Stop):
        with rosbag.BagWriter(path) as bag:
            bag.write('/clock', rosbag.CLOCK_MSG, rosbag.ns(0.0), rosbag.clock_msg(0))
            raise _Stop()
    assert list(tmp_path.iterdir()) == []


def test_a_truncated_file_is_refused_by_the_reader(tmp_path):
    path = tmp_path / 'run.mcap'
    _record(path, frames=2, laser=False, terrain=False)
    data = path.read_bytes()
    cut = tmp_path / 'cut.mcap'
    cut.write_bytes(data[:len(data) // 2])
    with pytest.raises(Exception):
        with open(cut, 'rb') as f:
            list(make_reader(f, decoder_factories=[DecoderFactory()]).iter_decoded_messages())


def _cli_fails(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'Traceback' not in err
    return err


def test_cli_mcap_holds_the_same_cloud_as_the_npz(tmp_path):
    small = ['--set', 'channels=4', '--set', 'horizontal_samples=90', '--world', 'flat']
    assert main(['scan', '--frames', '2', '--out', str(tmp_path / 'a.npz'), *small]) == 0
    assert main(['scan', '--frames', '2', '--out', str(tmp_path / 'a.mcap'), *small]) == 0
    topics = _read(tmp_path / 'a.mcap')
    assert len(topics['/points']) == 2 and '/scan' not in topics
    for k, (_, _, msg) in enumerate(topics['/points']):
        npz = np.load(tmp_path / f'a_{k:04d}.npz')
        pts = np.frombuffer(bytes(msg.data), dtype=LAYOUT_DTYPES['full'])
        for name in ('x', 'z', 'intensity', 'class_id'):
            np.testing.assert_array_equal(pts[name], npz[name])


@pytest.mark.parametrize('sensor,topic,count', [('laser_scan', '/scan', 2),
                                                ('terrain_sensor', '/terrain', 2)])
def test_cli_mcap_for_the_other_sensors(tmp_path, sensor, topic, count):
    out = tmp_path / 'b.mcap'
    assert main(['scan', '--sensor', sensor, '--frames', str(count), '--out', str(out)]) == 0
    topics = _read(out)
    assert len(topics[topic]) == count and len(topics['/tf']) >= 2 and topics['/clock']


def test_cli_all_sensors_at_once(tmp_path):
    out = tmp_path / 'all.mcap'
    assert main(['scan', '--sensor', 'all', '--frames', '1', '--out', str(out),
                 '--set', 'lidar_3d:channels=4', '--set', 'lidar_3d:horizontal_samples=90']) == 0
    topics = _read(out)
    assert (len(topics['/points']), len(topics['/scan']), len(topics['/terrain'])) == (1, 3, 5)


def test_cli_all_needs_an_mcap_file(tmp_path, capsys):
    err = _cli_fails(capsys, ['scan', '--sensor', 'all', '--out', str(tmp_path / 'x.npz')])
    assert '--out' in err and '.mcap' in err
