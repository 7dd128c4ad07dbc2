"""The one sweep clock: contiguous windows, whole periods skipped, hand values in ns."""

from ubot_lidar_sim.ros.sweep_clock import next_start_ns, overrun_line

P = 100_000_000         # 10 Hz


def test_the_first_sweep_ends_at_the_newest_pose():
    assert next_start_ns(None, 5 * P + 7, P, P) == (4 * P + 7, 0)
    assert next_start_ns(None, 5 * P + 7, P, 0) == (5 * P + 7, 0)     # an instant (terrain)


def test_each_sweep_starts_where_the_last_ended_while_tf_is_within_a_period():
    # The last sweep ended at 1.0 s: the next one is 1.0-1.1 s whether /tf is at 1.05 s (it
    # waits for its poses) or at 1.199 s (less than a period behind).
    assert next_start_ns(10 * P, 10 * P + P // 2, P, P) == (10 * P, 0)
    assert next_start_ns(10 * P, 12 * P - 1, P, P) == (10 * P, 0)


def test_a_node_a_period_or_more_behind_skips_whole_periods():
    # /tf at 1.2 s: the sweep 1.0-1.1 s is skipped, 1.1-1.2 s is the next (one period).
    assert next_start_ns(10 * P, 12 * P, P, P) == (11 * P, 1)
    # /tf at 1.537 s: four whole periods skipped, the sweep 1.4-1.5 s (the last one /tf
    # covers); never off the grid.
    assert next_start_ns(10 * P, 15 * P + 37, P, P) == (14 * P, 4)


def test_a_scanner_whose_scan_is_shorter_than_its_period_keeps_the_period_grid():
    # A 25 ms scan every 100 ms: the window after 1.0 s is 1.0-1.025 s.
    assert next_start_ns(10 * P, 10 * P, P, P // 4) == (10 * P, 0)
    assert next_start_ns(10 * P, 11 * P + P // 4, P, P // 4) == (11 * P, 1)


def test_the_overrun_warning_says_how_far_apart_the_stamps_are():
    # 3 periods of 0.1 s skipped: the next stamp is 4 x 0.1 s after the last.
    line = overrun_line(3, P)
    assert 'skipped 3 sweep periods (overrun): these stamps are 4 x 0.1 s apart' in line
    assert 'skipped 1 sweep period (overrun)' in overrun_line(1, P)


def test_the_first_sweep_notice_names_the_compute_processes():
    from ubot_lidar_sim.ros.lidar_3d_node import first_sweep_line
    assert 'here and in 2 starting compute processes' in first_sweep_line(2)
    assert 'kernels (a few seconds' in first_sweep_line(0)     # no compute process
