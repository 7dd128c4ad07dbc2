"""
A RobotSensor becomes our laser_scan (one vertical ray) or lidar_3d (several).

Its parameters, an overlay keyed by sensor name, and the Gazebo ray grid it traces.

Gazebo's model is geometric (first surface, no weather) and its rays fire at one instant:
``model: geometric`` and ``motion_distortion: false`` unless the overlay says otherwise. The
overlay ({sensor name: {parameter: value}}) may set any of our parameters; its key
``physics_preset: NAME`` is ``preset: NAME`` with ``model: physical``: the preset's optics and
radiometry, while the Gazebo values still fix the frame, rate, ray grid and range limits
unless the overlay names them.
"""

import math
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.beams.firing import Beams, grid_beams
from ubot_lidar_sim.core.config.configure import effective_config
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.robot.description import RobotDescription, RobotSensor
from ubot_lidar_sim.core.robot.sensors import SCAN
from ubot_lidar_sim.core.robot.tree import link_poses
from ubot_lidar_sim.core.yaml_io import read_yaml

LASER, LIDAR = 'laser_scan', 'lidar_3d'
# Ranges inside the sensor's own housing: our configs take min_range_m <= 1000, max <= 10000.
MAX_RANGE_M = 10000.0


def sensor_kind(sensor: RobotSensor) -> str:
    """Return 'laser_scan' for a LaserScan (one vertical ray), else 'lidar_3d'."""
    return LASER if sensor.message_type == SCAN else LIDAR


def gazebo_params(sensor: RobotSensor) -> dict:
    """Return our parameters {name: value} that carry the sensor's Gazebo tags."""
    h, v = sensor.horizontal, sensor.vertical
    common = {'frame_id': sensor.frame_id, 'rate_hz': sensor.update_rate_hz,
              'model': 'geometric', 'motion_distortion': False,
              'min_range_m': sensor.range_min_m,
              'max_range_m': min(sensor.range_max_m, MAX_RANGE_M),
              'range_noise_std_m': sensor.noise_stddev_m,
              'noise_enabled': sensor.noise_stddev_m > 0 or sensor.noise_mean_m != 0}
    span_deg = math.degrees(h.max_angle - h.min_angle)
    if sensor_kind(sensor) == LASER:
        step_deg = math.degrees(h.step) if h.count > 1 else max(span_deg, 0.01)
        # The config's fov and resolution describe the rays; the traced azimuths are
        # azimuths(sensor) exactly (LaserScanner(azimuth_rad=...)).
        mid_deg = math.degrees((h.min_angle + h.max_angle) / 2.0)
        return {**common, 'fov_deg': min(max(span_deg + step_deg / 2.0, 0.01), 360.0),
                'resolution_deg': step_deg, 'fov_centre_deg': max(-180.0, min(180.0, mid_deg))}
    el = np.degrees(v.angles())
    return {**common, 'sensor_id': sensor.name, 'channels': v.count,
            'horizontal_samples': h.count, 'horizontal_fov_deg': min(max(span_deg, 0.01), 360.0),
            'vertical_fov_up_deg': max(float(el.max()), 0.0),
            'vertical_fov_down_deg': max(-float(el.min()), 0.0),
            'elevations_deg': [float(x) for x in el],
            'max_rays_per_scan': max(h.count * v.count, 1)}


def robot_sensor_params(description: RobotDescription, name: str, kind: str) -> dict:
    """Return the Gazebo values of sensor name for a node of kind (ConfigError: another kind)."""
    sensor = description.sensor(name)
    if sensor_kind(sensor) != kind:
        names = [s.name for s in description.sensors if sensor_kind(s) == kind]
        raise ConfigError('robot_sensor', name, f'a {kind} sensor of {description.source} '
                          f"({', '.join(names) or 'none'}); '{name}' is a {sensor_kind(sensor)}")
    return gazebo_params(sensor)


def imu_params(description: RobotDescription, imu: RobotSensor) -> tuple[dict, list[str]]:
    """
    Return (base_sim parameters, notes) of an imu sensor: base_sim's IMU becomes it.

    Its <topic> (or plugin topic), frame, update_rate (0: every base_sim step) and per-sample
    noise stddevs (gz-sensors draws <noise> per sample: core/robot/sensors.py _imu). base_sim
    measures the base's motion at base_frame's origin in its axes: a mount rotated from the
    root link is published in base_frame (the measurement's own axes), an offset one without
    the lever arm's accelerations; both are noted.
    """
    root_from_imu = (np.linalg.inv(link_poses(description)[description.root])
                     @ link_poses(description)[imu.link] @ imu.link_from_sensor)
    frame, notes = imu.frame_id, []
    if not np.allclose(root_from_imu[:3, :3], np.eye(3), atol=1e-9):
        frame = description.root
        notes.append(f"imu '{imu.name}': mounted rotated from {description.root}; published "
                     f'in {description.root}, the axes base_sim measures in')
    if np.linalg.norm(root_from_imu[:3, 3]) > 1e-9:
        notes.append(f"imu '{imu.name}': {np.linalg.norm(root_from_imu[:3, 3]):.3f} m from "
                     f'{description.root}: measured at its origin (no lever-arm acceleration)')
    return {'imu_enabled': True, 'imu_topic': imu.topic, 'imu_frame': frame,
            'imu_rate_hz': imu.update_rate_hz,
            'imu_gyro_stddev_rad_s': imu.angular_velocity_stddev,
            'imu_accel_stddev_m_s2': imu.linear_acceleration_stddev}, notes


def sensor_config(sensor: RobotSensor, overlay: dict | None = None,
                  params_file: str | None = None) -> tuple[str, object]:
    """Return (kind, config) of a robot sensor: Gazebo's values < params file < overlay."""
    kind = sensor_kind(sensor)
    own = dict((overlay or {}).get(sensor.name, {}))
    if 'physics_preset' in own:
        preset = own.pop('physics_preset')
        own = {'model': 'physical', **own, 'preset': preset}
    try:
        return kind, effective_config(kind, params_file, {**gazebo_params(sensor), **own})
    except ConfigError as exc:
        raise ConfigError(f'sensor {sensor.name!r}: {exc.name}', exc.value,
                          exc.allowed) from None


def read_overlay(path: str | Path) -> dict[str, dict[str, Any]]:
    """Return an overlay file's {sensor name: {parameter: value}} (ConfigError if not so)."""
    data = read_yaml(path) or {}
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ConfigError('robot_overlay', str(path), 'a YAML mapping {sensor name: '
                          '{parameter: value}}')
    return data


def azimuths(sensor: RobotSensor) -> NDArray[np.float64]:
    """Return the traced azimuths, (C,) rad: min_angle + k step (gz-sensors Lidar.cc:357)."""
    return sensor.horizontal.angles()


def beams(sensor: RobotSensor) -> Beams:
    """Return the Beams of a 3D sensor's Gazebo grid (all rays at one instant)."""
    az = azimuths(sensor)
    return grid_beams(az, sensor.vertical.angles(), np.zeros(len(az)))
