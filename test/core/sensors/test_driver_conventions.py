"""
Each vendor driver's conventions, against values read from its source (issue 43).

- Nebula Velodyne decoder: tier4/nebula nebula_decoders/include/nebula_decoders/
  nebula_decoders_velodyne/decoders/velodyne_generic_decoder.hpp: x = xy cos(rot), y = -xy
  sin(rot), azimuth = rotation_radians_[azimuth_corrected], elevation = sin_vert_angle; return
  types IDENTICAL, FIRST_STRONGEST, LAST_STRONGEST, FIRST_WEAK, LAST_WEAK in dual mode.
- Nebula RoboSense decoder: .../nebula_decoders_robosense/decoders/robosense_decoder.hpp:
  x = xy cos_azimuth, y = -xy sin_azimuth, azimuth = azimuth_rad, elevation = elevation_rad.
- Nebula ReturnType values: nebula_common/include/nebula_common/nebula_common.hpp (UNKNOWN 0,
  LAST 1, FIRST 2, STRONGEST 3, FIRST_WEAK 4, LAST_WEAK 5, IDENTICAL 6, ..., FIRST_STRONGEST 9,
  LAST_STRONGEST 10).
- Nebula RoboSense return types: .../nebula_decoders_robosense/decoders/robosense_sensor.hpp
  getReturnType (IDENTICAL, FIRST, LAST, STRONGEST; DUAL: block 0 STRONGEST, block 1 LAST).
- Livox tag bits: autowarefoundation/autoware.universe
  sensing/livox/livox_tag_filter/README.md (bits 2-3: 01 high confidence noise, 10 moderate).
"""

from builders import run_dataset
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
import numpy as np
import pytest
from ubot_lidar_sim.core import labels
from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.physics.return_selection import (FLAG_FIRST, FLAG_LAST,
                                                          FLAG_SECOND_STRONGEST, FLAG_STRONGEST)
from ubot_lidar_sim.core.sensors import driver_order
from ubot_lidar_sim.core.sensors.point_layouts import (configured_layout, FULL_DTYPE, to_layout,
                                                       VELODYNE_DTYPE)
from ubot_lidar_sim.output.messages import livox_custom_msg
import yaml

# Points straight ahead (+x), to the left (+y), behind (-x) and to the right (-y), level.
XY = np.array([[10.0, 0.0], [0.0, 10.0], [-10.0, 0.0], [0.0, -10.0]])


def _points(flags=(FLAG_STRONGEST | FLAG_LAST,) * 4, class_id=(0, 0, 0, 0), z=0.0):
    pts = np.zeros(len(flags), FULL_DTYPE)
    pts['x'], pts['y'], pts['z'] = XY[:len(flags), 0], XY[:len(flags), 1], z
    pts['range'] = np.hypot(np.hypot(pts['x'], pts['y']), z)
    pts['return_flags'] = flags
    pts['class_id'] = class_id
    return pts


def test_velodyne_and_robosense_azimuth_is_measured_from_x_clockwise_hesai_from_y():
    pts = _points()
    hesai = to_layout(pts, 'autoware', vendor=('hesai', 16))['azimuth']
    velo = to_layout(pts, 'autoware', vendor=('velodyne', 16))['azimuth']
    robo = to_layout(pts, 'autoware', vendor=('robosense', 32))['azimuth']
    # y = -xy sin(rot): +x is 0, -y (right) pi/2, -x pi, +y (left) 3 pi / 2.
    want = np.array([0.0, 1.5, 1.0, 0.5]) * np.pi
    np.testing.assert_allclose(velo, want, atol=1e-6)     # bound: float32 of angles <= 2 pi
    np.testing.assert_allclose(robo, want, atol=1e-6)     # bound: float32 of angles <= 2 pi
    # Hesai: atan2(x, y): +x is pi / 2, 90 deg from Velodyne's.
    np.testing.assert_allclose(hesai, [0.5 * np.pi, 0.0, 1.5 * np.pi, np.pi],
                               atol=1e-6)  # bound: float32 of angles <= 2 pi


def test_velodyne_elevation_is_the_sine_of_the_vertical_angle_robosense_the_angle():
    pts = _points(z=10.0)            # 45 deg up at every azimuth
    velo = to_layout(pts, 'autoware', vendor=('velodyne', 16))['elevation']
    robo = to_layout(pts, 'autoware', vendor=('robosense', 32))['elevation']
    np.testing.assert_allclose(velo, np.sqrt(0.5), atol=1e-6)  # bound: float32 rounding
    np.testing.assert_allclose(robo, np.pi / 4, atol=1e-6)     # bound: float32 rounding


def _pair(ranges, intensities, flags):
    """Full-layout points of one beam's echoes (range order), as the dual mode emits them."""
    pts = np.zeros(len(ranges), FULL_DTYPE)
    pts['x'] = pts['range'] = ranges
    pts['intensity'], pts['return_flags'] = intensities, flags
    pts['return_count'] = len(ranges)
    pts['return_index'] = np.arange(1, len(ranges) + 1)
    return pts


def _velodyne(pts, channels=16, mode='dual_strongest_last'):
    return to_layout(pts, 'autoware', return_mode=mode,
                     vendor=('velodyne', channels))['return_type'].tolist()


NEAR_STRONG = (FLAG_FIRST | FLAG_STRONGEST, FLAG_LAST | FLAG_SECOND_STRONGEST)


@pytest.mark.parametrize('channels, near, far', [(16, 10, 4), (32, 9, 5), (128, 9, 5)])
def test_a_near_strongest_and_far_weak_pair_is_typed_as_nebulas_decoder_types_it(
        channels, near, far):
    # tier4/nebula vlp16_decoder.cpp 280: first = current distance > other (the farther echo);
    # vlp32_decoder.cpp 338 and vls128_decoder.cpp 298: the nearer. strongest: the larger
    # intensity byte. VLP-16: near (not first, strongest) LAST_STRONGEST 10, far (first, weak)
    # FIRST_WEAK 4; VLP-32 / VLS-128: FIRST_STRONGEST 9 and LAST_WEAK 5.
    assert _velodyne(_pair([10.0, 12.0], [100.0, 50.0], NEAR_STRONG), channels) == [near, far]


@pytest.mark.parametrize('channels, near, far', [(16, 10, 4), (32, 4, 10)])
def test_a_tie_of_the_intensity_bytes_makes_the_not_first_echo_strongest(channels, near, far):
    # Equal bytes (50.2 and 49.8 both write 50): strongest = !first, Nebula's tie rule. VLP-16:
    # the near echo is not first: LAST_STRONGEST 10, the far FIRST_WEAK 4; VLP-32: the near is
    # first: FIRST_WEAK 4, the far LAST_STRONGEST 10.
    assert _velodyne(_pair([10.0, 12.0], [50.2, 49.8], NEAR_STRONG), channels) == [near, far]


def test_the_types_follow_the_intensity_bytes_not_the_flags():
    # The far echo has the larger byte: VLP-16 far FIRST_STRONGEST 9, near LAST_WEAK 5.
    assert _velodyne(_pair([10.0, 12.0], [40.0, 90.0], NEAR_STRONG)) == [5, 9]


def test_one_echo_or_one_distance_word_is_identical_and_single_modes_their_type():
    one = _pair([10.0], [80.0], [FLAG_FIRST | FLAG_STRONGEST | FLAG_LAST])
    assert _velodyne(one) == [6]
    # 10.0 and 10.0008 m are one 2 mm distance word: the packet's echoes are equal.
    assert _velodyne(_pair([10.0, 10.0008], [80.0, 30.0], NEAR_STRONG)) == [6, 6]
    pts = _pair([10.0, 12.0], [100.0, 50.0], NEAR_STRONG)
    assert _velodyne(pts, mode='strongest') == [3, 3] and _velodyne(pts, mode='last') == [1, 1]
    assert _velodyne(pts, mode='dual_first_last') == [0, 0]


def test_pairs_are_found_within_a_firing_ordered_cloud():
    pts = np.concatenate([_pair([5.0], [20.0], [7]),
                          _pair([10.0, 12.0], [100.0, 50.0], NEAR_STRONG),
                          _pair([3.0, 4.0], [10.0, 60.0], NEAR_STRONG)])
    pts['ring'] = [0, 1, 1, 2, 2]
    np.testing.assert_array_equal(driver_order.dual_partners(pts), [-1, 2, 1, 4, 3])
    assert _velodyne(pts) == [6, 10, 4, 5, 9]


def test_robosense_return_types_are_strongest_and_last_by_block_as_its_decoder():
    # Nebula robosense_sensor.hpp getReturnType: IDENTICAL for a duplicate unit, SINGLE_FIRST
    # FIRST 2, SINGLE_LAST LAST 1, SINGLE_STRONGEST STRONGEST 3, DUAL block 0 STRONGEST 3 and
    # block 1 LAST 1, any other mode UNKNOWN 0 (not Hesai's FIRST_STRONGEST 9 / LAST_STRONGEST
    # 10 pairs).
    flags = [FLAG_STRONGEST | FLAG_LAST, FLAG_FIRST | FLAG_STRONGEST, FLAG_LAST, FLAG_STRONGEST]

    def kinds(mode, pts=None):
        return to_layout(_points(flags) if pts is None else pts, 'autoware', return_mode=mode,
                         vendor=('robosense', 32))['return_type']
    np.testing.assert_array_equal(kinds('dual_strongest_last'), [6, 3, 1, 3])
    np.testing.assert_array_equal(kinds('strongest'), [3, 3, 3, 3])
    np.testing.assert_array_equal(kinds('first'), [2, 2, 2, 2])
    np.testing.assert_array_equal(kinds('last'), [1, 1, 1, 1])
    np.testing.assert_array_equal(kinds('dual_first_last'), [0, 0, 0, 0])
    # The manuals' rule: a pair's strongest-and-last echo is block 0 (STRONGEST), the second
    # strongest block 1 (LAST); a strongest-and-last echo alone stays IDENTICAL.
    pts = _points([FLAG_STRONGEST | FLAG_LAST, FLAG_SECOND_STRONGEST, FLAG_STRONGEST | FLAG_LAST],
                  class_id=(0, 0, 0))
    pts['return_count'] = [2, 2, 1]
    np.testing.assert_array_equal(kinds('dual_strongest_last', pts), [3, 1, 6])
    # Hesai's table differs: the strongest-only echo of the dual mode is STRONGEST too, but a
    # triple mode's first + strongest is FIRST_STRONGEST 9.
    hesai = to_layout(_points(flags), 'autoware', return_mode='triple_first_strongest_last',
                      vendor=('hesai', 32))['return_type']
    assert hesai[1] == 9


def test_livox_tag_flags_rain_and_fog_as_moderate_and_smoke_as_high_confidence_noise():
    cls = (0, labels.PRECIPITATION_CLASS, labels.SMOKE_CLASS, 5)
    tags = to_layout(_points(class_id=cls), 'livox')['tag']
    np.testing.assert_array_equal(tags, [0, 0b1000, 0b0100, 0])
    custom = livox_custom_msg(_points(class_id=cls), 'lidar', 1_000_000_000)
    np.testing.assert_array_equal(custom.fields['points']['tag'], [0, 0b1000, 0b0100, 0])


def test_vendor_of_a_preset_is_its_decoder_family():
    presets = ('velodyne_vlp16', 'robosense_helios32', 'ouster_os1_64', 'custom')
    assert [driver_order.vendor_of(p) for p in presets] == [
        'velodyne', 'robosense', 'hesai', 'hesai']


def test_firing_order_sorts_by_time_and_keeps_the_order_of_one_firing():
    pts = np.zeros(5, FULL_DTYPE)
    pts['time'] = [0.2, 0.1, 0.1, 0.0, 0.2]
    np.testing.assert_array_equal(driver_order.firing_order(pts), [3, 1, 2, 0, 4])


def test_velodyne_layout_points_come_in_firing_order_full_keeps_its_rings():
    pts = np.zeros(6, FULL_DTYPE)
    pts['ring'] = [0, 0, 0, 1, 1, 1]              # ring by ring, as the core packs a sweep
    pts['time'] = [0.0, 0.1, 0.2, 0.01, 0.11, 0.21]
    velo = configured_layout(pts, LidarConfig(point_layout='velodyne'), 0)
    np.testing.assert_array_equal(velo['ring'], [0, 1, 0, 1, 0, 1])
    assert np.all(np.diff(velo['time']) >= 0)
    full = configured_layout(pts, LidarConfig(point_layout='full'), 0)
    np.testing.assert_array_equal(full['ring'], pts['ring'])


def test_a_recorded_velodyne_cloud_runs_forward_in_time_and_its_labels_follow_it(tmp_path):
    world = {'objects': [{'name': 'ground', 'type': 'plane', 'size_m': [60, 60]},
                         {'name': 'wall', 'type': 'box', 'size_m': [0.2, 6, 4], 'class_id': 50,
                          'pose': {'xyz': [10.1, 0, 2]}}]}
    (tmp_path / 'world.yaml').write_text(yaml.safe_dump(world))
    spec = {'worlds': [str(tmp_path / 'world.yaml')], 'frames': 1,
            'sensors': [{'type': 'lidar_3d', 'mount': [0, 0, 1.0, 0, 0, 0],
                         'params': {'channels': 8, 'horizontal_samples': 180,
                                    'point_layout': 'velodyne', 'model': 'geometric'}}]}
    out = run_dataset(tmp_path, spec)
    with open(out / 'seq_0000.mcap', 'rb') as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        cloud = next(m for _, _, _, m in reader.iter_decoded_messages(topics=['/points']))
    pts = np.frombuffer(bytes(cloud.data), dtype=VELODYNE_DTYPE)
    assert np.all(np.diff(pts['time']) >= 0)
    cls = np.load(out / 'seq_0000.labels.npz')['lidar_3d/0000/class_id']
    # The wall's face is x = 10, |y| <= 3: its points, and only they, carry its class.
    face = (np.abs(pts['x'] - 10.0) < 0.01) & (np.abs(pts['y']) <= 3.0)
    assert face.sum() > 20
    np.testing.assert_array_equal(cls == 50, face)
