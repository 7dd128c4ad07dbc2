"""
lidar_3d's ``trigger: stream``: back-to-back sweeps, each column block computed as it is fired.

A spinning LiDAR's sweeps follow one another without a gap, and its driver receives each sweep
column by column while it fires. With trigger 'stream' the node does the same: a sweep starts
where the last one ended, and each column block (core/sensors/column_blocks.py) is computed as
soon as the /tf history covers the block's last column, so that only the last block is left to
compute when the sweep ends; the cloud is published then, not at a timer tick. A node that has
fallen two sweeps behind the newest transform goes on with the sweep that ends there (the sweeps
in between count as 'overrun'); the first sweep, and the first after a skip, is that one too.
The time a sweep waits for its poses is not counted in its compute time.
"""

import math
import time

from ubot_lidar_sim.ros.diagnostics import SkipScan

POSE_POLL_S = 0.001     # how often a block waiting for its poses looks at /tf
POSE_WAIT_S = 2.0       # a block waits at most max(this, 4 periods), steady (a paused clock)


class SweepStream:
    """The sweep windows and pose waits of a node streaming its sweeps (see the module)."""

    def __init__(self, node):
        self._node = node

    def _newest_s(self, frame_id, fresh=True):
        """Return SensorNode.newest_pose_s at the node's now (fresh false: never stale)."""
        node = self._node
        now_s = node.get_clock().now().nanoseconds * 1e-9 if fresh else -math.inf
        return node.newest_pose_s(frame_id, now_s)

    def window(self, frame_id, period_ns):
        """Return the start (ns) of the next sweep: where the last ended, or see the module."""
        node = self._node
        latest_ns = int(math.floor(self._newest_s(frame_id) * 1e9))
        last = node._last_end_ns
        if last is not None and node.stats.counts['last_status'] != 'ok':
            # After a skip (nobody listened, no pose): start at the newest transform again,
            # never before the last published sweep's end; the time between is not overrun.
            start_ns = max(latest_ns - period_ns, last)
        elif last is None:
            start_ns = latest_ns - period_ns
        elif latest_ns >= last + 2 * period_ns:
            node.stats.count('overrun', (latest_ns - last) // period_ns - 1)
            start_ns = latest_ns - period_ns
        else:
            start_ns = last
        if start_ns <= 0:
            raise SkipScan('clock_not_started', 'the clock is younger than one period')
        return start_ns

    def await_pose(self, frame_id, t_s, period_s):
        """Return once /tf covers world -> frame_id at t_s (s); SkipScan when it stays old."""
        node = self._node
        t0 = time.monotonic()
        limit_s = t0 + max(POSE_WAIT_S, 4.0 * period_s)
        while True:
            latest_s = self._newest_s(frame_id, fresh=False)    # a covered block goes on
            if latest_s >= t_s:
                node.waited_s += time.monotonic() - t0     # not compute time
                return
            self._newest_s(frame_id)        # SkipScan once the newest pose is stale
            if time.monotonic() > limit_s:
                raise SkipScan('no_new_transform', f'no {node.config.world_frame} -> '
                               f'{frame_id} newer than {latest_s:.3f} s arrived', warn=False)
            if node._stop.wait(POSE_POLL_S):
                raise SkipScan('shutting_down', 'the node stops', warn=False)
            node.intake.take()      # the transforms queued since: at once, not at the poll

    def finish(self, frame_id, start_ns, end_ns):
        """Close the sweep start_ns..end_ns: refuse a gap in its /tf, then remember its end."""
        node = self._node
        try:
            node.check_gap(frame_id, start_ns, end_ns)
        except SkipScan:
            node._last_end_ns = None        # start again at the newest transform
            raise
        node._last_end_ns = end_ns
