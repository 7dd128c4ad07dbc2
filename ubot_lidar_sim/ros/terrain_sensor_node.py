"""
terrain_sensor node: one forward body ray and four downward tire rays (docs/physics.md).

Publishes ``terrain`` (ubot_lidar_sim_msgs/TerrainSensor, world frame) and, when
``trace_visualization``, ``~/rays`` (MarkerArray: hit rays green, misses red). With the
``*_source`` parameters ``external`` it takes ``~/vehicle_center_to_front`` (std_msgs/Float64)
and ``~/tire_radii`` (std_msgs/Float64MultiArray, 4 values); a bad message is refused with a
warning and the last good value stays.
"""

import math

import numpy as np
from std_msgs.msg import Float64, Float64MultiArray

from ubot_lidar_sim.core.config import TerrainConfig
from ubot_lidar_sim.core.sensors.terrain import TerrainSensor
from ubot_lidar_sim.output import messages
from ubot_lidar_sim.ros.conversions import to_rclpy
from ubot_lidar_sim.ros.markers import ray_markers
from ubot_lidar_sim.ros.run import run_node
from ubot_lidar_sim.ros.sensor_node import SensorNode
from ubot_lidar_sim.ros.tf_buffer import TransformError
from ubot_lidar_sim_msgs.msg import TerrainSensor as TerrainSensorMsg
from visualization_msgs.msg import MarkerArray

_TIRES = ('front left', 'front right', 'rear left', 'rear right')
_WARN_S = 5.0


class TerrainSensorNode(SensorNode):
    """Samples the five terrain rays from the TF pose of base_frame at rate_hz."""

    default_name = 'terrain_sensor'
    count_unit = 'rays'

    def __init__(self, **kwargs):
        super().__init__(self.default_name, TerrainConfig, **kwargs)
        cfg = self.config
        self.sensor = self.sweeper(cfg)
        self.vehicle_center_to_front_m = float(cfg.vehicle_center_to_front_m)
        self.tire_radii_m = np.asarray(cfg.tire_radii_m, dtype=np.float64)
        self._missing = set()
        self._pub = self.create_publisher(TerrainSensorMsg, 'terrain', self.output_qos)
        self._rays_pub = self.create_publisher(MarkerArray, '~/rays', 10)
        self.create_subscription(Float64, '~/vehicle_center_to_front', self._on_center, 10,
                                 callback_group=self._input_group)
        self.create_subscription(Float64MultiArray, '~/tire_radii', self._on_radii, 10,
                                 callback_group=self._input_group)
        self.start_trigger(duration_s=0.0)     # a sample is an instant

    # -- external inputs ----------------------------------------------------------------------
    def _refuse(self, topic, why):
        # rclpy throttles per call site, so each input gets its own child logger here: a bad
        # ~/vehicle_center_to_front must not hide the warning about a bad ~/tire_radii.
        self.get_logger().get_child(topic.strip('~/')).warning(
            f'{topic}: {why}; keeping the last good value', throttle_duration_sec=_WARN_S)

    def _on_center(self, msg):
        if self.config.vehicle_center_source != 'external':
            return self._refuse('~/vehicle_center_to_front',
                                'ignored because vehicle_center_source is constant')
        if not (math.isfinite(msg.data) and 0.0 <= msg.data <= 100.0):
            return self._refuse('~/vehicle_center_to_front',
                                f'got {msg.data!r}, allowed a finite value 0 to 100 m')
        self.vehicle_center_to_front_m = float(msg.data)

    def _on_radii(self, msg):
        if self.config.tire_radii_source != 'external':
            return self._refuse('~/tire_radii', 'ignored because tire_radii_source is constant')
        radii = np.asarray(msg.data, dtype=np.float64)
        if radii.shape != (4,) or not np.all(np.isfinite(radii)) or np.any(radii < 0) \
                or np.any(radii > 10.0):
            return self._refuse('~/tire_radii', f'got {radii.tolist()!r}, allowed 4 finite '
                                'values 0 to 10 m (FL, FR, RL, RR)')
        self.tire_radii_m = radii

    def build_sweeper(self, cfg):
        """Return the core TerrainSensor of cfg (built when a set is checked, see SensorNode)."""
        return TerrainSensor(cfg, self.world)

    def on_config_changed(self, names):
        """Take the new config's core sensor; constants follow their parameters if constant."""
        cfg = self.config
        self.sensor = self.sweeper(cfg)
        if cfg.vehicle_center_source == 'constant':
            self.vehicle_center_to_front_m = float(cfg.vehicle_center_to_front_m)
        if cfg.tire_radii_source == 'constant':
            self.tire_radii_m = np.asarray(cfg.tire_radii_m, dtype=np.float64)

    # -- sampling -----------------------------------------------------------------------------
    def has_subscribers(self):
        """Return True when ``terrain`` or, with visualization on, ``~/rays`` has a listener."""
        return self._pub.get_subscription_count() > 0 or (
            self.config.trace_visualization and self._rays_pub.get_subscription_count() > 0)

    def _tire_centres(self, t_s):
        """
        Return the tire centres (4, 3) in base_frame at time t_s; NaN rows for missing frames.

        A missing tire frame is reported once; the core sensor then uses tire_positions_m
        (tire_frames_fallback) or disables that ray.
        """
        cfg = self.config
        centres = np.asarray(cfg.tire_positions_m, dtype=np.float64).reshape(4, 3).copy()
        for k, frame in enumerate(cfg.tire_frames):  # four tires, not a per-ray loop
            if not frame:
                continue
            try:
                centres[k] = self.lookup_many(cfg.base_frame, frame, [t_s])[0][:3, 3]
                if frame in self._missing:
                    self._missing.discard(frame)
                    self.get_logger().info(f'tire frame {frame!r} is available again')
            except TransformError as exc:
                centres[k] = np.nan
                if frame not in self._missing:
                    self._missing.add(frame)
                    action = ('using tire_positions_m' if cfg.tire_frames_fallback
                              else 'the ray is reported disabled')
                    self.get_logger().warning(
                        f'tire frame {frame!r} ({_TIRES[k]}) not available: {exc}; {action}')
        return centres

    def scan_once(self, now_ns):
        """Sample the rays at the next instant of the clock and publish; return rays traced."""
        cfg = self.config
        _, stamp_ns = self.sweep_window(cfg.base_frame, now_ns)
        t_s = stamp_ns * 1e-9
        pose = self.lookup_many(cfg.world_frame, cfg.base_frame, [t_s])[0]
        res = self.sensor.sample(pose, self.vehicle_center_to_front_m, self.tire_radii_m,
                                 self._tire_centres(t_s), t_s, self.actor_frames.poses([t_s]))
        msg = to_rclpy(messages.terrain(res, cfg.world_frame, stamp_ns))
        self.end_sweep(cfg.base_frame, stamp_ns, stamp_ns)
        self._pub.publish(msg)
        enabled = res.enabled.astype(bool)
        if cfg.trace_visualization and self._rays_pub.get_subscription_count() > 0:
            hit = res.hit_flg.astype(bool)
            ends = np.where(hit[:, None], res.hit_loc, res.end_loc)
            self._rays_pub.publish(ray_markers(
                res.start_loc[enabled], ends[enabled], hit[enabled],
                cfg.world_frame, msg.header.stamp, lifetime_s=max(2.0 / cfg.rate_hz, 0.1),
                width_m=0.03))
        return int(np.count_nonzero(enabled))

    def diagnostics_values(self):
        """Report the inputs in use and the missing tire frames."""
        return [('vehicle_center_to_front_m', f'{self.vehicle_center_to_front_m:.4f}'),
                ('tire_radii_m', ' '.join(f'{r:.4f}' for r in self.tire_radii_m)),
                ('missing_tire_frames', ' '.join(sorted(self._missing)))]


def main(args=None):
    """Run the terrain_sensor node (console script ``terrain_sensor_node``)."""
    return run_node(TerrainSensorNode, args)


if __name__ == '__main__':
    raise SystemExit(main())
