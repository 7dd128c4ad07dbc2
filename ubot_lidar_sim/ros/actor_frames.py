"""
A sensor node's view of the world's actors (docs/worlds.md, "Actors"): their poses per sweep.

A ``{frame: NAME}`` actor is looked up in world_frame at the sweep's pose times (its columns)
from the node's /tf buffer, under the sensor frame's rules: a frame that /tf does not know, whose
newest transform is older than the stale limit (TF_MAX_AGE_S) at the sweep's end, or that leaves
a gap over TF_MAX_GAP_S is not drawn. Columns after the frame's newest transform (its /tf comes
a little later than the sensor's) hold that newest pose, as the sensor's own frame is awaited.
The node says so once in its log (and once again when the frame is back) and as a
/diagnostics warning while it lasts. Trajectory actors run on the node's clock from its first
sweep (their t = 0).

A frame actor's pose between two neighbouring knots is interpolated as one transform (position
linear, rotation slerped). That is /tf's own interpolation when one edge of the path moves and
ends at the actor's frame (a robot's base_link); otherwise the difference is second order in
the motion between two /tf stamps: a frame hung at an offset c from a frame that turns by theta
between two stamps is off the arc by at most |c| theta^2 / 8 (1 m, 1 rad/s, 50 Hz: 0.05 mm).
"""

import numpy as np

from ubot_lidar_sim.core.poses import Delayed, SampledPath
from ubot_lidar_sim.ros.tf_buffer import TransformError


class ActorFrames:
    """Per-sweep actor poses of one sensor node (see the module docstring)."""

    def __init__(self, node, max_gap_s, max_age_s):
        """Keep the node (a SensorNode) and its limits TF_MAX_GAP_S and TF_MAX_AGE_S (s)."""
        self._node = node
        self._max_gap_s, self._max_age_s = float(max_gap_s), float(max_age_s)
        actors = node.world.actors
        self._frames = [(a.name, a.frame) for a in actors if a.frame is not None]
        self._paths = [(a.name, a.trajectory) for a in actors if a.trajectory is not None]
        self._start_s = None
        self.missing = {}               # actor name -> why it is not drawn

    def poses(self, times_s):
        """
        Return {actor name: pose_at} for a sweep (or block) whose poses are at times_s (s).

        None when the world has no actors. A frame actor's pose is a poses.SampledPath
        (picklable, for the compute processes) over the ends of the times and the /tf stamps of
        its path between them (``knots``): a handful per sweep, not one lookup per column.
        """
        if not self._frames and not self._paths:
            return None
        times = np.unique(np.asarray(times_s, np.float64))
        if self._start_s is None:
            self._start_s = float(times[0])
        out = {name: Delayed(path, self._start_s) for name, path in self._paths}
        node, world = self._node, self._node.config.world_frame
        for name, frame in self._frames:        # a few actors, not a per-ray loop
            try:
                with node.intake.lock:
                    newest = node.tf_buffer.latest_common_time(world, frame)
                    if times[-1] - newest > self._max_age_s:
                        raise TransformError(f'newest transform {times[-1] - newest:.3f} s '
                                             f'old (limit {self._max_age_s} s)')
                    held = np.minimum(times, newest)
                    gap = node.tf_buffer.largest_gap(world, frame, held[0], held[-1])
                    if gap > self._max_gap_s:
                        raise TransformError(f'no transform for {gap:.3f} s around the sweep '
                                             f'(limit {self._max_gap_s} s)')
                    knots = np.unique(np.concatenate((
                        held[:1], node.tf_buffer.stamps_between(world, frame, held[0],
                                                                held[-1]), held[-1:])))
                    poses = node.tf_buffer.lookup_many(world, frame, knots)
            except TransformError as exc:
                self._lost(name, frame, str(exc))
                continue
            if self.missing.pop(name, None) is not None:
                node.get_logger().info(f'actor {name!r}: frame {frame!r} is available again')
            out[name] = SampledPath(knots, poses)
        return out

    def _lost(self, name, frame, why):
        """Record that actor name is not drawn; log it when it was drawn before."""
        if name not in self.missing:
            self._node.get_logger().warning(
                f'actor {name!r} not drawn: frame {frame!r} in '
                f'{self._node.config.world_frame!r}: {why}')
        self.missing[name] = f'{frame}: {why}'

    def warnings(self):
        """Return /diagnostics warnings: one per actor not drawn, with the reason."""
        return [f'actor {name!r} not drawn: frame {why}' for name, why in self.missing.items()]
