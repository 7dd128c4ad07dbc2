"""Demo snapshots colour every point layout by the calibrated intensity byte."""

import numpy as np
import pytest

from ubot_lidar_sim.core.sensors.point_layouts import FULL_DTYPE, to_layout
from ubot_lidar_sim.ros.demo.snapshots import intensity_byte


@pytest.mark.parametrize('layout', ['full', 'velodyne', 'ouster'])
def test_every_layout_is_coloured_by_the_calibrated_byte_not_the_signal(layout):
    pts = np.zeros(3, FULL_DTYPE)
    pts['intensity'] = [10.0, 100.0, 255.0]     # the calibrated byte
    pts['signal'] = [900, 16000, 65000]         # counts: what ouster's 'intensity' carries
    pts['range'] = 5.0
    out = to_layout(pts, layout)
    np.testing.assert_array_equal(intensity_byte(out), [10.0, 100.0, 255.0])
