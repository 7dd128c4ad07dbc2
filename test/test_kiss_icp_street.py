"""The 10 m segment error of benchmarks/kiss_icp_street.py on hand-built trajectories."""

import importlib
from pathlib import Path
import sys

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'benchmarks'))
street = importlib.import_module('kiss_icp_street')


def _line(step_m, n):
    poses = np.tile(np.eye(4), (n, 1, 1))
    poses[:, 0, 3] = step_m * np.arange(n)
    return poses


def test_a_one_percent_long_odometry_gives_one_percent_on_every_10_m_segment():
    # Ground truth 1 m steps along x, 21 poses: segments start at 0..10 m and end 10 m on (11);
    # an odometry 1 % long is 0.1 m off over each 10 m: 1 %.
    gt = _line(1.0, 21)
    err = street.segment_errors(_line(1.01, 21), gt)
    assert err.size == 11
    # bound: float64 sums of 1.0 and 1.01 steps, a few ulps of 10 m
    np.testing.assert_allclose(err, 0.01, atol=1e-12)
    assert street.segment_errors(gt, gt) == pytest.approx(np.zeros(11), abs=1e-15)  # bound: exact


def test_the_street_world_has_every_object_kind():
    kinds = {o['name'].rstrip('0123456789') for o in street.street_world()['objects']}
    assert kinds == {'ground', 'bld', 'pole', 'car', 'trunk', 'crown'}
