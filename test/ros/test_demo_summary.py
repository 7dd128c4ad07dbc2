"""The demo summary's per-phase rates count only the time a sensor could publish."""

from types import SimpleNamespace

from ubot_lidar_sim.ros.demo.monitor import TopicRate
from ubot_lidar_sim.ros.demo.status import phase_rates, print_summary

# The demo's cycle: 5 s per phase.
SPANS = {'clear': 5.0, 'rain': 5.0, 'fog': 5.0, 'smoke': 5.0, 'snow': 5.0}
PHASES = ['clear', 'rain', 'fog', 'smoke', 'snow']


def _late_lidar():
    """Return a 10 Hz sensor whose first message came 1 s into fog (11 s after the start)."""
    rate = TopicRate(skip_s=1.0)
    t = 11.0
    for phase, n in (('fog', 40), ('smoke', 50), ('snow', 50)):
        for _ in range(n):
            rate.add(1000, phase, t, {'clear': 5.0, 'rain': 5.0, 'fog': 1.0}
                     if rate.count == 0 else None)
            t += 0.1
    return rate


def test_phases_before_the_first_message_read_dash_and_the_rest_their_rate():
    # fog: 40 messages in the 4 s after the first one; smoke and snow 50 in 5 s.
    assert phase_rates(_late_lidar(), SPANS, PHASES) == ['-', '-', '10.00', '10.00', '10.00']


def test_a_sensor_that_never_published_reads_dash_everywhere():
    assert phase_rates(TopicRate(), SPANS, PHASES) == ['-'] * 5


def test_the_summary_shows_no_zero_rate_for_a_phase_the_sensor_missed(capsys):
    monitor = SimpleNamespace(rates={'lidar_3d': _late_lidar()},
                              phase_seconds=lambda: dict(SPANS))
    print_summary(monitor, {'lidar_3d': 10.0}, 25.0, None)
    row = [ln for ln in capsys.readouterr().out.splitlines() if 'lidar_3d' in ln][0]
    assert row.split()[-5:] == ['-', '-', '10.00', '10.00', '10.00']
    assert '0.00' not in row.split()[-5:]


def test_the_summary_names_the_empty_scans_of_each_phase_and_only_then(capsys):
    rate = _late_lidar()
    monitor = SimpleNamespace(rates={'lidar_3d': rate}, phase_seconds=lambda: dict(SPANS))
    print_summary(monitor, {'lidar_3d': 10.0}, 25.0, None)
    assert 'empty scans' not in capsys.readouterr().out
    for _ in range(2):
        rate.add(0, 'smoke', 30.0)
    print_summary(monitor, {'lidar_3d': 10.0}, 25.0, None)
    assert '  lidar_3d: empty scans smoke 2' in capsys.readouterr().out.splitlines()
