"""
The lidar_3d node (docs/nodes.md): a spinning 3D LiDAR publishing PointCloud2.

Each sweep looks up world_frame -> frame_id at every column's firing time (vectorised), calls
the core LidarSimulator once, packs the requested point layout and publishes it. The field of
view is published once, latched, on ~/fov_markers (a range preview, ros/markers.py); the
actors' 3D boxes at each sweep's stamp on ~/boxes while it has a subscriber
(ros/box_markers.py). With livox_custom_msg, each sweep also goes out as
livox_ros_driver2/CustomMsg on livox/lidar, as raw CDR (output/messages.custom_msg_cdr: no
message object per point).
Services ``~/sample`` and ``~/get_latest`` (ubot_lidar_sim_msgs/GetLatestCloud): see
ros/services.py.
"""

from sensor_msgs.msg import PointCloud2

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.execution.blocks import BlockPipeline
from ubot_lidar_sim.core.execution.failures import ScanProcessExited, ScanProcessHung
from ubot_lidar_sim.core.execution.worker import compute_pool
from ubot_lidar_sim.core.sensors.column_blocks import merge_columns
from ubot_lidar_sim.core.sensors.driver_order import driver_points
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.sensors.organised_rows import layout_cloud
from ubot_lidar_sim.core.sensors.point_layouts import returned_count
from ubot_lidar_sim.core.sensors.sweep import Sweep
from ubot_lidar_sim.output.boxes import actor_boxes
from ubot_lidar_sim.output.messages import custom_msg_cdr, livox_custom_msg
from ubot_lidar_sim.ros.box_markers import box_markers
from ubot_lidar_sim.ros.conversions import array_to_pointcloud2, livox_custom_msg_class
from ubot_lidar_sim.ros.diagnostics import SkipScan
from ubot_lidar_sim.ros.markers import FovMarkerThread
from ubot_lidar_sim.ros.qos import latched_qos
from ubot_lidar_sim.ros.run import run_node
from ubot_lidar_sim.ros.sensor_node import SensorNode
from ubot_lidar_sim.ros.services import LatestMessage
from ubot_lidar_sim.ros.world_wait import LOAD_NOTICE_S, said_when_slow
from ubot_lidar_sim_msgs.srv import GetLatestCloud
from visualization_msgs.msg import MarkerArray

# A compute process that failed skips the sweep under a name of its own (not 'error' or
# 'overrun'); the next sweeps run in new processes. While those start, the pool computes the
# blocks in this process (the same bytes), so a failed child costs one sweep.
COMPUTE_SKIPS = ((ScanProcessHung, 'compute_hung'), (ScanProcessExited, 'compute_exited'))
FAILED_CHILD = tuple(kind for kind, _ in COMPUTE_SKIPS)


def first_sweep_line(workers):
    """Return the line of a node whose first sweep takes longer than LOAD_NOTICE_S."""
    where = (f' here and in {workers} starting compute process{"es" if workers > 1 else ""}'
             if workers else '')
    return (f'first sweep: loading the compiled numba kernels{where} (a few seconds, more on '
            'a busy machine); the first cloud follows')


def _skip(exc):
    """Return the SkipScan of a failed compute process (COMPUTE_SKIPS)."""
    return SkipScan(next(name for kind, name in COMPUTE_SKIPS if isinstance(exc, kind)),
                    str(exc))


class Lidar3DNode(SensorNode):
    """
    The lidar_3d node: ``points`` (PointCloud2), ``~/fov_markers``, the two services.

    With livox_custom_msg also ``livox/lidar`` (livox_ros_driver2/CustomMsg); the node does not
    start (exit 2, one line) when livox_ros_driver2 is not installed.
    """

    default_name = 'lidar_3d'

    def __init__(self, node_name='lidar_3d', **kwargs):
        super().__init__(node_name, LidarConfig, **kwargs)
        cfg = self.config
        # Before the compute processes start: a refusal leaves nothing running.
        self._custom_pub = (self.create_publisher(livox_custom_msg_class(), 'livox/lidar',
                                                  self.output_qos)
                            if cfg.livox_custom_msg else None)
        self._sim = self.sweeper(cfg)
        # The child processes (compute_process, compute_workers) compute the column blocks on
        # their own GILs. While new ones start after a failure, continuous sweeps are computed
        # here by the pool; a ~/sample call waits for them.
        self._proc = compute_pool(cfg, self.world, self.materials,
                                  wait_for_start=cfg.trigger == 'service')
        self._points_pub = self.create_publisher(PointCloud2, 'points', self.output_qos)
        self._marker_pub = self.create_publisher(MarkerArray, '~/fov_markers', latched_qos(1))
        self._fov = FovMarkerThread(self._marker_pub.publish, cfg)
        self._boxes_pub = self.create_publisher(MarkerArray, '~/boxes', self.output_qos)
        self.latest = LatestMessage(self, GetLatestCloud, 'cloud', self._input_group)
        self._beams = cfg.channels * cfg.horizontal_samples
        self._core_ms = {}
        self._in_process = 0        # sweeps computed (partly) here while children restarted
        self._first_said = False    # first_sweep_line is said at most once
        self.start_trigger(cfg.rate_hz, cfg.trigger)

    def has_subscribers(self):
        """Return True while ``points`` (or ``livox/lidar``) has a subscriber."""
        return (self._points_pub.get_subscription_count() > 0 or self._custom_pub is not None
                and self._custom_pub.get_subscription_count() > 0)

    def build_sweeper(self, cfg):
        """Return the LidarSimulator of cfg (built when a set is checked, see SensorNode)."""
        return LidarSimulator(cfg, self.world, self.materials)

    def on_config_changed(self, names):
        """Take the simulator of the new config; republish the FOV if the range moved."""
        self._sim = self.sweeper(self.config)
        if self._proc is not None:
            self._proc.set_config(self.config)
        if names & {'max_range_m', 'min_range_m'}:
            self._fov.update(self.config)       # drawn on its own thread

    def scan_once(self, now_ns):
        """Compute the next sweep block by block as its poses arrive, publish it; point count."""
        cfg, sim = self.config, self._sim
        # Each block waits for its own poses (sweep_clock.await_pose), not the whole window.
        start_ns, end_ns = self.sweep_clock.next_window(cfg.frame_id, now_ns, self.continuous)
        stamp_ns = start_ns if cfg.stamp_at == 'start' else end_ns
        blocks = BlockPipeline(sim, self._proc)
        here = self._proc.in_process_blocks if self._proc is not None else 0
        # The first sweep loads the cached kernels (seconds on 2 busy cores): say so once.
        with said_when_slow(self._say_first_sweep, LOAD_NOTICE_S):
            return self._sweep(cfg, sim, blocks, here, stamp_ns, start_ns, end_ns)

    def _say_first_sweep(self):
        if not self._first_said and self.stats.counts['published'] == 0:
            self._first_said = True
            self.get_logger().warning(first_sweep_line(
                self.config.compute_workers if self._proc is not None else 0))

    def _sweep(self, cfg, sim, blocks, here, stamp_ns, start_ns, end_ns):
        """Compute the blocks of one sweep as their poses arrive and publish it; point count."""
        stamp_s, weather = stamp_ns * 1e-9, self.weather
        try:
            for j in range(len(sim.block_columns)):
                times = sim.block_pose_times(stamp_s, j, j + 1)
                self.sweep_clock.await_pose(cfg.frame_id, float(times.max()))
                poses = self.lookup_many(cfg.world_frame, cfg.frame_id, times)
                blocks.submit(j, poses, Sweep(stamp_s, weather, self.scan_index,
                                              self.actor_frames.poses(times)))
            results = blocks.results()
        except FAILED_CHILD as exc:
            raise _skip(exc) from None
        finally:
            blocks.abandon()
        if self._proc is not None and self._proc.in_process_blocks > here:
            self._in_process += 1
        self.end_sweep(cfg.frame_id, start_ns, end_ns)
        result, _ = merge_columns(results, sim.block_columns, cfg.channels)
        return self._publish(result, stamp_ns)

    def _publish(self, result, stamp_ns):
        """Pack the sweep's points in the configured layout and publish them; point count."""
        cfg = self.config
        points, _, height = layout_cloud(result, cfg, stamp_ns)
        msg = array_to_pointcloud2(points, cfg.frame_id, stamp_ns, height)
        self._points_pub.publish(msg)
        if self._custom_pub is not None:
            self._custom_pub.publish(custom_msg_cdr(
                livox_custom_msg(driver_points(result.points, cfg), cfg.frame_id, stamp_ns)))
        count = returned_count(points)
        self.latest.remember(msg, f'{count} points')
        if self.world.actors and self._boxes_pub.get_subscription_count() > 0:
            stamp_s = stamp_ns * 1e-9
            items, poses = actor_boxes(self.world, self.actor_frames.poses([stamp_s]) or {},
                                       stamp_s, result.sensor_pose)
            self._boxes_pub.publish(box_markers(items, poses, cfg.frame_id, stamp_ns,
                                                2.0 / cfg.rate_hz))
        self._beams = result.n_beams
        self._core_ms = result.timing_ms
        return count

    def destroy_node(self):
        """Stop the scan worker, then the compute process (if any), then destroy the node."""
        fov = getattr(self, '_fov', None)
        if fov is not None:
            fov.close()
        try:
            return super().destroy_node()
        finally:
            # getattr: a node whose __init__ failed is destroyed too (before _proc existed).
            proc = getattr(self, '_proc', None)
            if proc is not None:
                proc.close(timeout_s=0.5)   # a stopped child is killed, not waited for

    def sensor_label(self):
        """Return sensor_id, the sensor's name on /diagnostics."""
        return self.config.sensor_id

    def status_warnings(self):
        """Name a compute process that does not answer, or the restart after a failed one."""
        if self._proc is None:
            return []
        out = []
        # Read from the diagnostics timer while the scan thread waits on the child.
        waiting = self._proc.waiting()
        if waiting is not None and waiting[0] > self._period_s:
            out.append(f'compute_waiting: compute process '
                       f'{" ".join(map(str, self._proc.pids))} has not answered for '
                       f'{waiting[0]:.1f} s (killed at {waiting[1]:.1f} s)')
        if self._proc.restarting:
            out.append(f'compute processes restarting after: {self._proc.last_failure}; the '
                       'node computes the sweeps meanwhile')
        return out

    def diagnostics_values(self):
        """Return lidar-specific diagnostics: beams, layout, weather in use."""
        w = self.weather
        core = [(f'core.{k}', f'{v:.1f}') for k, v in self._core_ms.items()]
        return core + [
            ('beams_per_scan', str(self._beams)), ('point_layout', self.config.point_layout),
            ('compute_process', ' '.join(f'pid {pid}' for pid in self._proc.pids)
             if self._proc is not None and self._proc.pids else 'off'),
            ('compute_restarts', str(self._proc.restarts if self._proc is not None else 0)),
            ('compute_in_process_sweeps', str(self._in_process)),
            ('compute_last_failure', self._proc.last_failure if self._proc is not None else ''),
            # + 0.0: a -0.0 of the weather reads 0, not -0.
            ('rain_mm_h', f'{w.rain_mm_h + 0.0:g}'), ('visibility_m', f'{w.visibility_m:g}'),
            ('snowfall_mm_h', f'{w.snowfall_rate_mm_h + 0.0:g}')]


def main(args=None):
    """Run the lidar_3d node until Ctrl-C; return the exit code."""
    return run_node(Lidar3DNode, args)


if __name__ == '__main__':
    raise SystemExit(main())
