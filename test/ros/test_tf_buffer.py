"""Tests of the package's own transform buffer (pure numpy, no rclpy)."""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.poses import (matrix_to_quaternion, quaternion_to_matrix, SampledPath,
                                       slerp)
from ubot_lidar_sim.ros.tf_buffer import (CycleError, ExtrapolationError, FrameNotFoundError,
                                          InvalidTransformError, TransformBuffer)

IDENT_Q = (0.0, 0.0, 0.0, 1.0)


def yaw_q(yaw_rad):
    return (0.0, 0.0, math.sin(yaw_rad / 2), math.cos(yaw_rad / 2))


def test_static_chain_composes_translations_and_rotations():
    buf = TransformBuffer()
    buf.set_transform('map', 'base_link', 0.0, (1.0, 2.0, 0.0), yaw_q(math.pi / 2), static=True)
    buf.set_transform('base_link', 'lidar', 0.0, (1.0, 0.0, 0.5), IDENT_Q, static=True)
    m = buf.lookup('map', 'lidar', 123.0)
    # lidar origin: base (1, 2) + yaw 90 deg applied to (1, 0) -> (1, 3), z 0.5
    # bound: float64 quaternion / matrix arithmetic of exact inputs, a few eps64 << the atol
    np.testing.assert_allclose(m[:3, 3], [1.0, 3.0, 0.5], atol=1e-12)
    np.testing.assert_allclose(m[:3, :3] @ [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], atol=1e-12)


def test_inverse_lookup_is_the_matrix_inverse():
    buf = TransformBuffer()
    buf.set_transform('map', 'a', 0.0, (1.0, -2.0, 3.0), yaw_q(0.3), static=True)
    buf.set_transform('map', 'b', 0.0, (0.0, 5.0, 0.0), yaw_q(-1.1), static=True)
    ab = buf.lookup('a', 'b', 0.0)
    ba = buf.lookup('b', 'a', 0.0)
    # bound: float64 quaternion / matrix arithmetic of exact inputs, a few eps64 << the atol
    np.testing.assert_allclose(ab @ ba, np.eye(4), atol=1e-12)
    expected = np.linalg.inv(buf.lookup('map', 'a', 0.0)) @ buf.lookup('map', 'b', 0.0)
    np.testing.assert_allclose(ab, expected, atol=1e-12)


def test_same_frame_lookup_is_identity():
    buf = TransformBuffer()
    buf.set_transform('map', 'a', 0.0, (1.0, 0.0, 0.0), IDENT_Q, static=True)
    # bound: float64 interpolation of exact inputs, a few ulps; default rtol 1e-7
    np.testing.assert_allclose(buf.lookup('a', 'a', 5.0), np.eye(4))


def test_dynamic_translation_interpolates_linearly():
    buf = TransformBuffer()
    buf.set_transform('map', 'base', 10.0, (0.0, 0.0, 0.0), IDENT_Q)
    buf.set_transform('map', 'base', 11.0, (2.0, 0.0, 0.0), IDENT_Q)
    out = buf.lookup_many('map', 'base', np.array([10.0, 10.25, 10.5, 11.0]))
    assert out.shape == (4, 4, 4)
    # bound: float64 quaternion / matrix arithmetic of exact inputs, a few eps64 << the atol
    np.testing.assert_allclose(out[:, 0, 3], [0.0, 0.5, 1.0, 2.0], atol=1e-12)


def test_rotation_interpolates_by_slerp_at_constant_rate():
    buf = TransformBuffer()
    buf.set_transform('map', 'base', 0.0, (0.0, 0.0, 0.0), yaw_q(0.0))
    buf.set_transform('map', 'base', 1.0, (0.0, 0.0, 0.0), yaw_q(math.radians(90)))
    out = buf.lookup_many('map', 'base', np.linspace(0.0, 1.0, 5))
    yaws = np.degrees(np.arctan2(out[:, 1, 0], out[:, 0, 0]))
    # bound: float64 quaternion / matrix arithmetic of exact inputs, a few eps64 << the atol
    np.testing.assert_allclose(yaws, [0.0, 22.5, 45.0, 67.5, 90.0], atol=1e-9)


def test_slerp_takes_the_short_way_round_for_opposite_sign_quaternions():
    q0 = np.array([yaw_q(0.0)])
    q1 = -np.array([yaw_q(math.radians(20))])
    q = slerp(q0, q1, np.array([0.5]))
    yaw = math.degrees(math.atan2(2 * q[0, 2] * q[0, 3], 1 - 2 * q[0, 2] ** 2))
    # bound: float64 quaternion / matrix arithmetic of exact inputs, a few eps64 << the atol
    assert yaw == pytest.approx(10.0, abs=1e-9)


def test_quaternion_matrix_round_trip():
    q = np.array([0.1, -0.3, 0.5, 0.8])
    q /= np.linalg.norm(q)
    # bound: float64 quaternion / matrix arithmetic of exact inputs, a few eps64 << the atol
    np.testing.assert_allclose(matrix_to_quaternion(quaternion_to_matrix(q)), q, atol=1e-12)


def test_extrapolation_past_tolerance_raises_and_within_tolerance_holds():
    buf = TransformBuffer(tolerance_s=0.1)
    buf.set_transform('map', 'base', 1.0, (0.0, 0.0, 0.0), IDENT_Q)
    buf.set_transform('map', 'base', 2.0, (1.0, 0.0, 0.0), IDENT_Q)
    # bound: float64 interpolation of exact inputs, a few ulps; default rtol 1e-7
    np.testing.assert_allclose(buf.lookup('map', 'base', 2.05)[0, 3], 1.0)
    with pytest.raises(ExtrapolationError, match='outside the history'):
        buf.lookup('map', 'base', 2.2)
    with pytest.raises(ExtrapolationError):
        buf.lookup('map', 'base', 0.5)


def test_unknown_and_disconnected_frames_raise_frame_not_found():
    buf = TransformBuffer()
    buf.set_transform('map', 'a', 0.0, (0, 0, 0), IDENT_Q, static=True)
    buf.set_transform('odom', 'b', 0.0, (0, 0, 0), IDENT_Q, static=True)
    with pytest.raises(FrameNotFoundError, match="'nope' does not exist"):
        buf.lookup('map', 'nope', 0.0)
    with pytest.raises(FrameNotFoundError, match='not connected'):
        buf.lookup('a', 'b', 0.0)


def test_cycle_is_refused_and_tree_is_unchanged():
    buf = TransformBuffer()
    buf.set_transform('a', 'b', 0.0, (1, 0, 0), IDENT_Q, static=True)
    buf.set_transform('b', 'c', 0.0, (1, 0, 0), IDENT_Q, static=True)
    with pytest.raises(CycleError, match='loop'):
        buf.set_transform('c', 'a', 0.0, (1, 0, 0), IDENT_Q, static=True)
    with pytest.raises(CycleError):
        buf.set_transform('a', 'a', 0.0, (1, 0, 0), IDENT_Q)
    # bound: float64 interpolation of exact inputs, a few ulps; default rtol 1e-7
    np.testing.assert_allclose(buf.lookup('a', 'c', 0.0)[0, 3], 2.0)


@pytest.mark.parametrize('trans, quat, match', [
    ((math.nan, 0.0, 0.0), IDENT_Q, 'translation'),
    ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0), 'zero'),
    ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.01), 'norm'),
    ((0.0, 0.0, 0.0), (math.nan, 0.0, 0.0, 1.0), 'quaternion'),
])
def test_bad_transforms_are_refused_with_a_reason(trans, quat, match):
    buf = TransformBuffer()
    with pytest.raises(InvalidTransformError, match=match):
        buf.set_transform('map', 'base', 0.0, trans, quat)
    assert buf.frames() == set()


def test_nearly_unit_quaternion_is_accepted_and_normalised():
    buf = TransformBuffer()
    buf.set_transform('map', 'base', 0.0, (0, 0, 0), (0.0, 0.0, 0.0, 1.0005), static=True)
    # bound: float64 quaternion / matrix arithmetic of exact inputs, a few eps64 << the atol
    np.testing.assert_allclose(buf.lookup('map', 'base', 0.0), np.eye(4), atol=1e-12)


def test_frame_ids_with_leading_slash_are_refused():
    with pytest.raises(InvalidTransformError, match='must not start'):
        TransformBuffer().set_transform('/map', 'base', 0.0, (0, 0, 0), IDENT_Q)


def test_history_is_bounded_to_cache_time():
    buf = TransformBuffer(cache_time_s=1.0)
    for i in range(500):
        buf.set_transform('map', 'base', i * 0.01, (i * 0.01, 0.0, 0.0), IDENT_Q)
    with pytest.raises(ExtrapolationError):
        buf.lookup('map', 'base', 3.0)
    # bound: float64 quaternion / matrix arithmetic of exact inputs, a few eps64 << the atol
    np.testing.assert_allclose(buf.lookup('map', 'base', 4.5)[0, 3], 4.5, atol=1e-12)
    assert len(buf.stamps_between('map', 'base', -math.inf, math.inf)) <= 101


def test_data_older_than_history_is_refused():
    buf = TransformBuffer(cache_time_s=1.0)
    buf.set_transform('map', 'base', 10.0, (0, 0, 0), IDENT_Q)
    with pytest.raises(InvalidTransformError, match='older than the history'):
        buf.set_transform('map', 'base', 8.0, (0, 0, 0), IDENT_Q)


def test_out_of_order_insert_is_sorted():
    buf = TransformBuffer()
    buf.set_transform('map', 'base', 2.0, (2.0, 0, 0), IDENT_Q)
    buf.set_transform('map', 'base', 0.0, (0.0, 0, 0), IDENT_Q)
    buf.set_transform('map', 'base', 1.0, (1.0, 0, 0), IDENT_Q)
    out = buf.lookup_many('map', 'base', np.array([0.5, 1.5]))
    # bound: float64 quaternion / matrix arithmetic of exact inputs, a few eps64 << the atol
    np.testing.assert_allclose(out[:, 0, 3], [0.5, 1.5], atol=1e-12)


def test_latest_common_time_is_min_over_dynamic_edges_and_inf_when_static():
    buf = TransformBuffer()
    buf.set_transform('map', 'odom', 5.0, (0, 0, 0), IDENT_Q)
    buf.set_transform('odom', 'base', 7.0, (0, 0, 0), IDENT_Q)
    buf.set_transform('base', 'lidar', 0.0, (0, 0, 0), IDENT_Q, static=True)
    assert buf.latest_common_time('map', 'lidar') == 5.0
    assert buf.latest_common_time('base', 'lidar') == math.inf


def test_earliest_common_time_is_max_over_dynamic_edges_and_minus_inf_when_static():
    buf = TransformBuffer()
    for t in (2.0, 3.0):
        buf.set_transform('map', 'odom', t, (0, 0, 0), IDENT_Q)
    for t in (4.0, 9.0):
        buf.set_transform('odom', 'base', t, (0, 0, 0), IDENT_Q)
    buf.set_transform('base', 'lidar', 0.0, (0, 0, 0), IDENT_Q, static=True)
    # map -> lidar is known from 4 s on (odom -> base starts there), not before.
    assert buf.earliest_common_time('map', 'lidar') == 4.0
    assert buf.earliest_common_time('base', 'lidar') == -math.inf
    with pytest.raises(FrameNotFoundError):
        buf.earliest_common_time('map', 'nowhere')


def test_chained_dynamic_lookup_many_matches_single_lookups():
    buf = TransformBuffer()
    for t in np.linspace(0.0, 1.0, 11):
        buf.set_transform('map', 'odom', t, (t, 0.0, 0.0), yaw_q(0.5 * t))
        buf.set_transform('odom', 'base', t, (0.0, 2 * t, 0.0), yaw_q(-0.2 * t))
    buf.set_transform('base', 'lidar', 0.0, (0.3, 0.0, 1.0), IDENT_Q, static=True)
    times = np.array([0.05, 0.33, 0.71, 0.99])
    many = buf.lookup_many('map', 'lidar', times)
    singles = np.stack([buf.lookup('map', 'lidar', t) for t in times])
    # bound: float64 quaternion / matrix arithmetic of exact inputs, a few eps64 << the atol
    np.testing.assert_allclose(many, singles, atol=1e-12)


def test_reparenting_a_child_replaces_its_edge():
    buf = TransformBuffer()
    buf.set_transform('map', 'base', 0.0, (1, 0, 0), IDENT_Q, static=True)
    buf.set_transform('odom', 'base', 0.0, (2, 0, 0), IDENT_Q, static=True)
    # bound: float64 interpolation of exact inputs, a few ulps; default rtol 1e-7
    np.testing.assert_allclose(buf.lookup('odom', 'base', 0.0)[0, 3], 2.0)
    with pytest.raises(FrameNotFoundError):
        buf.lookup('map', 'base', 0.0)


def test_stamps_between_are_the_paths_dynamic_stamps_strictly_inside_the_interval():
    buf = TransformBuffer()
    buf.set_transform('map', 'odom', 0.0, (0.0, 0.0, 0.0), IDENT_Q, static=True)
    for t in (0.0, 0.02, 0.04, 0.06):
        buf.set_transform('odom', 'base', t, (t, 0.0, 0.0), yaw_q(t))
    for t in (0.01, 0.03):
        buf.set_transform('map', 'cart', t, (0.0, t, 0.0), IDENT_Q)
    np.testing.assert_array_equal(buf.stamps_between('map', 'base', 0.005, 0.04), [0.02])
    np.testing.assert_array_equal(buf.stamps_between('map', 'base', -1.0, 1.0),
                                  [0.0, 0.02, 0.04, 0.06])
    # Both ends of a path between two moving frames, once each, sorted.
    np.testing.assert_array_equal(buf.stamps_between('cart', 'base', 0.0, 0.05),
                                  [0.01, 0.02, 0.03, 0.04])
    assert buf.stamps_between('map', 'odom', -1.0, 1.0).size == 0      # static only
    with pytest.raises(FrameNotFoundError):
        buf.stamps_between('map', 'ghost', 0.0, 1.0)


def test_a_path_sampled_at_the_ends_and_stamps_between_is_the_lookup_at_any_time_inside():
    # One moving edge (as a fleet robot's base_link): one transform interpolated between two
    # neighbouring stamps is /tf's own interpolation (actor_frames.py).
    buf = TransformBuffer()
    buf.set_transform('map', 'odom', 0.0, (1.0, 2.0, 0.0), yaw_q(0.7), static=True)
    for t in (0.0, 0.02, 0.04, 0.06):
        buf.set_transform('odom', 'base', t, (3.0 * t, t * t, 0.4), yaw_q(10.0 * t))
    t0, t1 = 0.013, 0.051
    knots = np.concatenate(([t0], buf.stamps_between('map', 'base', t0, t1), [t1]))
    path = SampledPath(knots, buf.lookup_many('map', 'base', knots))
    times = np.linspace(t0, t1, 97)
    # bound: float64 slerp and matrix products of the same inputs in another order, a few
    # eps64 << the atol
    np.testing.assert_allclose(path(times), buf.lookup_many('map', 'base', times), atol=1e-12)
