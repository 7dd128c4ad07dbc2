"""
The one sweep clock of the sensor nodes: contiguous sweeps, as a spinning sensor fires them.

A spinning LiDAR's sweeps follow one another without a gap or an overlap, and a deskewing
pipeline takes the header stamps at face value. So every continuous trigger ('timer', and
'stream', its alias) publishes sweep k + 1 starting where sweep k ended: stamps exactly one
period apart. A sweep is computed once /tf covers its window (a column block of lidar_3d as
soon as /tf covers the block's last column, so that only the last block is left when the
sweep ends). A node that has fallen behind the newest transform by a period or more skips
whole periods, counted as 'overrun' and said in a (throttled) warning, so the stamps stay on the
grid, a whole number of periods apart; after a skipped sweep
(nobody listened, no pose) it goes on from the grid point at the newest transform, not counted
as overrun (the skip was counted). The first sweep, and the first after a clock jump or
``reset``, ends at the newest transform, or begins at the oldest one the node holds when that
is less than a period (a node just started): no window reaches back before its /tf. A jump
of the node's clock (an NTP step, a /clock that seeks; ros/schedule.py tells it from a stall)
is reported once, not as missed periods.
'service' sweeps are not continuous: a ~/sample call takes the newest window /tf covers.
The time a sweep waits for its poses is not counted in its compute time.
"""

import math
import time

from ubot_lidar_sim.ros.diagnostics import SkipScan, WARN_THROTTLE_S
from ubot_lidar_sim.ros.schedule import TimerSchedule

POSE_POLL_S = 0.005     # a sweep waiting for its poses wakes at each /tf applied, or this often
POSE_WAIT_S = 2.0       # a sweep waits at most max(this, 4 periods), steady (a paused clock)


def overrun_line(skipped, period_ns):
    """Return the warning of a node that skipped `skipped` periods of period_ns to catch up."""
    return (f'falling behind /tf: skipped {skipped} sweep period{"s" if skipped > 1 else ""} '
            f'(overrun): these stamps are {skipped + 1} x {period_ns * 1e-9:g} s apart; '
            'lower rate_hz or the number of beams')


def next_start_ns(next_ns, latest_ns, period_ns, duration_ns):
    """
    Return (start ns, whole periods skipped) of the sweep after one that ended at next_ns.

    latest_ns: the newest pose. The sweep starts at next_ns unless the newest pose is a period
    or more past that sweep's end: then it starts k whole periods later, at the last grid point
    whose sweep /tf covers. next_ns None: the first sweep, ending at latest_ns.
    """
    if next_ns is None:
        return latest_ns - duration_ns, 0
    behind = latest_ns - (next_ns + duration_ns)
    k = behind // period_ns if behind >= period_ns else 0
    return next_ns + k * period_ns, int(k)


class SweepClock:
    """The sweep windows and pose waits of a SensorNode (see the module)."""

    def __init__(self, node, period_s, duration_s):
        self._node = node
        self.period_ns = int(round(period_s * 1e9))
        self.duration_ns = int(round(duration_s * 1e9))
        self._next_ns = None            # start of the next continuous sweep
        self._last_end_ns = None        # end of the last sweep ('service': never again)
        self._schedule = TimerSchedule(period_s)

    def reset(self):
        """Forget the grid (a backward clock jump): the next sweep ends at the newest pose."""
        self._next_ns = self._last_end_ns = None
        self._schedule.reset()

    def _newest_ns(self, frame_id, fresh=True):
        """
        Return the time (ns) up to which sweeps are covered: the newest pose or now if earlier.

        A static transform (newest pose +inf) covers every time up to now: a sweep never ends
        after the node's clock. fresh false: a stale newest pose is no SkipScan here.
        """
        node = self._node
        now_ns = node.get_clock().now().nanoseconds
        latest_s = node.newest_pose_s(frame_id, now_ns * 1e-9 if fresh else -math.inf)
        return now_ns if latest_s * 1e9 >= now_ns else int(math.floor(latest_s * 1e9))

    def window(self, frame_id):
        """Return (start_ns, end_ns) of the next continuous sweep (see the module)."""
        node = self._node
        latest_ns = self._newest_ns(frame_id)
        jump_s = self._schedule.tick(latest_ns, time.monotonic_ns())
        if jump_s:
            node.stats.clock_jumped()
            if jump_s > 0:      # a backward jump is reported where it clears the TF buffer
                node.get_logger().warning(
                    f'clock jumped forward by {jump_s:.1f} s: the sweeps restart there (the '
                    'periods in between are not counted as overrun)')
            self._next_ns = None
        start_ns, skipped = next_start_ns(self._next_ns, latest_ns, self.period_ns,
                                          self.duration_ns)
        if skipped and node.stats.counts['last_status'] == 'ok':
            node.stats.count('overrun', skipped)
            if node.stats.counts['published'] > 1:  # not the catch-up after the first sweep
                node.get_logger().warning(overrun_line(skipped, self.period_ns),
                                          throttle_duration_sec=WARN_THROTTLE_S)
        start_ns = self._within_history(frame_id, start_ns)
        if start_ns <= 0:
            raise SkipScan('clock_not_started', 'the clock is younger than one period')
        return start_ns, start_ns + self.duration_ns

    def _within_history(self, frame_id, start_ns):
        """
        Return start_ns, moved to the first window whose start /tf still holds.

        A sweep that began before the oldest pose the node holds (it started less than a
        period ago, or its buffer was cleared) could never be traced: the first sweep then
        begins at that pose, a later one at the next grid point after it (whole periods).
        """
        oldest_s = self._node.oldest_pose_s(frame_id)
        if math.isinf(oldest_s) or start_ns >= oldest_s * 1e9:
            return start_ns
        oldest_ns = int(math.ceil(oldest_s * 1e9))
        if self._next_ns is None:
            return oldest_ns
        return start_ns + -(-(oldest_ns - start_ns) // self.period_ns) * self.period_ns

    def newest_window(self, frame_id, now_ns):
        """
        Return (start_ns, end_ns) of the newest window /tf covers ('service' sweeps).

        It ends at now or at the newest transform, whichever is earlier, so every column time
        is interpolated, never extrapolated. SkipScan when no transform is newer than the last
        sweep's end.
        """
        node = self._node
        end_ns = min(now_ns, self._newest_ns(frame_id))
        if self._last_end_ns is not None and end_ns <= self._last_end_ns:
            raise SkipScan('no_new_transform', f'newest {node.config.world_frame} -> '
                           f'{frame_id} is the one the last sweep used', warn=False)
        start_ns = end_ns - self.duration_ns
        if start_ns <= 0:
            raise SkipScan('clock_not_started', 'the clock is younger than one period')
        oldest_s = node.oldest_pose_s(frame_id)
        if start_ns < oldest_s * 1e9:
            # Just started (or the buffer was cleared): /tf does not reach back one sweep yet.
            raise SkipScan('no_new_transform', f'{node.config.world_frame} -> {frame_id} is '
                           f'held for {end_ns * 1e-9 - oldest_s:.3f} s of the '
                           f'{self.duration_ns * 1e-9:g} s sweep so far', warn=False)
        return start_ns, end_ns

    def await_pose(self, frame_id, t_s):
        """Return once /tf covers world -> frame_id at t_s (s); SkipScan when it stays old."""
        node = self._node
        t0 = time.monotonic()
        limit_s = t0 + max(POSE_WAIT_S, 4.0 * self.period_ns * 1e-9)
        intake = node.intake
        while True:
            seen = intake.applied
            latest_ns = self._newest_ns(frame_id, fresh=False)  # a covered block goes on
            if latest_ns * 1e-9 >= t_s:
                node.waited_s += time.monotonic() - t0     # not compute time
                return
            self._newest_ns(frame_id)        # SkipScan once the newest pose is stale
            if time.monotonic() > limit_s:
                raise SkipScan('no_new_transform', f'no {node.config.world_frame} -> '
                               f'{frame_id} newer than {latest_ns * 1e-9:.3f} s arrived',
                               warn=False)
            if node.stopping():
                raise SkipScan('shutting_down', 'the node stops', warn=False)
            intake.take()      # the transforms queued since: at once, not at the poll
            intake.wait_applied(seen, POSE_POLL_S)

    def next_window(self, frame_id, now_ns, continuous):
        """Return (start_ns, end_ns): the next window (continuous) or the newest /tf covers."""
        return self.window(frame_id) if continuous else self.newest_window(frame_id, now_ns)

    def covered_window(self, frame_id, now_ns, continuous):
        """Return next_window once /tf covers it (the newest window is covered already)."""
        start_ns, end_ns = self.next_window(frame_id, now_ns, continuous)
        self.await_pose(frame_id, end_ns * 1e-9)
        return start_ns, end_ns

    def finish(self, frame_id, start_ns, end_ns):
        """Close the sweep start_ns..end_ns: refuse a gap in its /tf, then remember its end."""
        try:
            self._node.check_gap(frame_id, start_ns, end_ns)
        except SkipScan:
            self._next_ns = None        # start again at the newest transform
            raise
        self._next_ns = start_ns + self.period_ns
        self._last_end_ns = end_ns
