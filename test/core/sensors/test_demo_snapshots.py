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


def test_the_snow_snapshot_title_lies_inside_the_figure(tmp_path, monkeypatch):
    from matplotlib import pyplot as plt
    from ubot_lidar_sim.core.physics.weather import Weather
    from ubot_lidar_sim.ros.demo.scenario import phase_text
    from ubot_lidar_sim.ros.demo.snapshots import cloud_top_view

    boxes = []
    close = plt.close

    def measure_then_close(fig):
        # After savefig the layout is final: the title's box in figure pixels.
        boxes.append((fig.axes[0].title.get_window_extent(fig.canvas.get_renderer()), fig.bbox))
        close(fig)
    monkeypatch.setattr(plt, 'close', measure_then_close)
    # The demo's snow phase at its peak (default demo_driver parameters).
    weather = Weather(visibility_m=2900.0, snowfall_rate_mm_h=5.0, snow_depth_m=0.05,
                      surface_wetness=0.4)
    title = f'3D LiDAR velodyne_vlp16 — 28000 points, {phase_text("snow", weather)}\ntop view'
    rng = np.random.default_rng(0)
    cloud_top_view(rng.uniform(-20.0, 20.0, (500, 3)), rng.uniform(0, 255, 500), np.zeros(3),
                   str(tmp_path / 'snow.png'), title)
    (box, fig), = boxes
    assert fig.x0 <= box.x0 and box.x1 <= fig.x1, (box, fig)
    assert fig.y0 <= box.y0 and box.y1 <= fig.y1, (box, fig)
