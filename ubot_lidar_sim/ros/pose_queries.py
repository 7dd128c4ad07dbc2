"""
The pose queries of a sensor node, which its sweeps and its SweepClock call back.

A mixin of SensorNode (ros/sensor_node.py): it reads the node's ``config``, ``intake`` (the
/tf buffer and its lock), ``tf_buffer``, ``sweep_clock``, ``continuous`` and ``_posed``; the
limits below are the node's stale and gap rules.
"""

import math

from ubot_lidar_sim.ros.diagnostics import SkipScan
from ubot_lidar_sim.ros.tf_buffer import TransformError

TF_MAX_AGE_S = 0.5         # a sweep whose newest pose is older than this is skipped (stale)
TF_MAX_GAP_S = 1.0         # no pose is interpolated between transforms further apart than this


class PoseQueries:
    """Sweep windows and world_frame poses of a SensorNode, under its intake's lock."""

    def sweep_window(self, frame_id, now_ns):
        """
        Return (start_ns, end_ns) of this node's next sweep once /tf covers it.

        Continuous triggers: the next window of the sweep clock, contiguous with the last;
        'service': the newest window /tf covers. The caller computes the sweep, then calls
        ``end_sweep``. Raises SkipScan (no or stale transform, a gap, the node stops).
        """
        return self.sweep_clock.covered_window(frame_id, now_ns, self.continuous)

    def end_sweep(self, frame_id, start_ns, end_ns):
        """Close a computed sweep: SkipScan on a gap in its /tf, else the clock moves on."""
        self.sweep_clock.finish(frame_id, start_ns, end_ns)

    def newest_pose_s(self, frame_id, now_s):
        """
        Return the stamp (s) of the newest world_frame -> frame_id pose.

        SkipScan 'no_transform' without one, 'stale_transform' when it is more than
        TF_MAX_AGE_S older than now_s; 'no_new_transform' until a first pose has been found
        while no transform of the world frame has arrived (a node just started, its /tf not
        yet discovered: a waiting ~/sample call waits on, services.RETRY_REASONS).
        """
        world = self.config.world_frame
        with self.intake.lock:
            try:
                latest_s = self.tf_buffer.latest_common_time(world, frame_id)
                self._posed = True
            except TransformError as exc:
                if not self._posed and not self.tf_buffer.knows(world):
                    self.say_waiting(frame_id)
                    raise SkipScan('no_new_transform', f'no transform of {world!r} has '
                                   f'arrived yet: {exc}', warn=False) from None
                raise SkipScan('no_transform', f'no pose of {frame_id!r} in {world!r}: '
                               f'{exc}') from None
        if latest_s < now_s - TF_MAX_AGE_S:
            raise SkipScan('stale_transform', f'newest {world} -> {frame_id} is '
                           f'{now_s - latest_s:.3f} s old (limit {TF_MAX_AGE_S} s)')
        return latest_s

    def say_waiting(self, frame_id):
        """Warn once, before the first pose, which transform the node waits for and where."""
        if getattr(self, '_said_waiting', False):
            return
        self._said_waiting = True
        world = self.config.world_frame
        self.get_logger().warning(
            f'waiting for /tf: no transform from {world!r} to {frame_id!r} has arrived; a '
            f'sweep needs {world} -> ... -> {frame_id} on /tf (a robot driver, '
            f'`demo_driver_node` (a robot driving a loop), `python -m ubot_lidar_sim run`, or '
            f'with ROS installed `ros2 run tf2_ros static_transform_publisher --frame-id {world} '
            f'--child-frame-id {frame_id}`)')

    def oldest_pose_s(self, frame_id):
        """Return the stamp (s) of the oldest world_frame -> frame_id pose held (-inf: static)."""
        with self.intake.lock:
            try:
                return self.tf_buffer.earliest_common_time(self.config.world_frame, frame_id)
            except TransformError:
                return -math.inf    # newest_pose_s says what is missing

    def check_gap(self, frame_id, start_ns, end_ns):
        """Raise SkipScan 'transform_gap' when /tf leaves > TF_MAX_GAP_S of a sweep undescribed."""
        world = self.config.world_frame
        with self.intake.lock:
            gap_s = self.tf_buffer.largest_gap(world, frame_id, start_ns * 1e-9, end_ns * 1e-9)
        if gap_s > TF_MAX_GAP_S:
            # A sweep needs poses at its own times: a transform stamped far ahead of the last
            # one (or an outage) leaves a stretch that no transform describes.
            raise SkipScan('transform_gap', f'{world} -> {frame_id} has no transform for '
                           f'{gap_s:.3f} s around the sweep (limit {TF_MAX_GAP_S} s)')

    def lookup_many(self, target, source, times_s):
        """Thread-safe TransformBuffer.lookup_many: (C,) s -> (C, 4, 4) target-from-source."""
        with self.intake.lock:
            return self.tf_buffer.lookup_many(target, source, times_s)
