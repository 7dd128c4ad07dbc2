"""
BaseSimConfig: the parameters of the base_sim node, one frozen field each (docs/nav2.md).

world_file, world_frame, model_paths and sdf_geometry mean what they mean for the sensors
(core/config/shared.py WorldParams); seed keys the odometry drift.
real_time_factor 0 means 'max': simulated time advances as fast as the watched sensors publish
their sweeps (Gazebo's real_time_update_rate 0 means the same: as fast as it can).
"""

from dataclasses import dataclass
import json
import math

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.config.fields import parameter as _p, Validated
from ubot_lidar_sim.core.config.shared import WorldParams
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.motion.imu import ACCEL_DENSITY_M_S2_SQRT_HZ, GYRO_DENSITY_RAD_S_SQRT_HZ

DRIVES = ('diff', 'omni', 'ackermann')
CIRCLE_VERTICES = 16        # a footprint_radius_m becomes this regular polygon


@dataclass(frozen=True)
class SensorMounts(Validated):
    """Where the robot carries its LiDAR and laser: base frame -> sensor frame (base_sim, demo)."""

    lidar_pose: tuple = _p((0.0, 0.0, 1.2, 0.0, 0.0, 0.0),
                           'base frame -> lidar_frame: x y z (m) roll pitch yaw (deg).',
                           item_type=float, length=6, read_only=True)
    laser_pose: tuple = _p((0.3, 0.0, 0.3, 0.0, 0.0, 0.0),
                           'base frame -> laser_frame: x y z (m) roll pitch yaw (deg).',
                           item_type=float, length=6, read_only=True)


@dataclass(frozen=True)
class BaseSimConfig(SensorMounts, WorldParams):
    """Parameters of the base_sim node (units in the names; docs/nav2.md)."""

    seed: int = _p(0, 'Seed of the odometry drift.', min=0, max=2**63 - 1, read_only=True)
    odom_frame: str = _p('odom', 'Odometry frame.', read_only=True, nonempty=True)
    base_frame: str = _p('base_link', 'Vehicle base frame.', read_only=True, nonempty=True)
    footprint_frame: str = _p('base_footprint', 'Ground projection of base_frame (REP 120): '
                              'odom_frame -> it (x, y, yaw, ground z) -> base_frame '
                              '(base_height_m, roll, pitch). Empty: odom_frame -> base_frame.',
                              read_only=True)
    localization_frame: str = _p('', 'Frame whose -> odom_frame a localiser (AMCL, SLAM) '
                                 'publishes; base_sim then publishes world_frame -> it, so '
                                 'that the tree stays one. Empty: world_frame -> odom_frame.',
                                 read_only=True)
    drive: str = _p('diff', 'Kinematics.', choices=DRIVES, read_only=True)
    initial_pose: tuple = _p((0.0, 0.0, 0.0), 'Start pose in world_frame: x (m), y (m), yaw '
                             '(deg).', item_type=float, length=3, min=-1.0e6, max=1.0e6,
                             read_only=True)
    footprint_polygon: str = _p('', "Nav2's footprint format '[[x, y], ...]' in base_frame "
                                '(m); empty: the circle of footprint_radius_m.',
                                read_only=True)
    footprint_radius_m: float = _p(0.3, 'Radius of a round footprint.', 'm', min=0.01,
                                   max=50.0, read_only=True)
    body_height_m: float = _p(0.5, 'Height of the body above the ground (collision).', 'm',
                              min=0.02, max=20.0, read_only=True)
    ground_clearance_m: float = _p(0.05, 'Lowest collision height above the ground: lower '
                                   'objects are driven over.', 'm', min=0.0, max=10.0,
                                   read_only=True)
    contact_margin_m: float = _p(0.02, 'The base stops this far from an object.', 'm',
                                 min=0.001, max=1.0, read_only=True)
    base_height_m: float = _p(0.0, 'Height of base_frame above the ground under it.', 'm',
                              min=-10.0, max=10.0, read_only=True)
    follow_ground: bool = _p(True, 'z, roll and pitch follow the ground objects under the '
                             'footprint (else z = base_height_m, level).', read_only=True)
    max_step_m: float = _p(0.3, 'Highest ground step the wheels climb in one move.', 'm',
                           min=0.0, max=10.0, read_only=True)
    max_linear_m_s: float = _p(1.0, 'Speed limit along x.', 'm/s', min=0.0, max=100.0)
    max_lateral_m_s: float = _p(1.0, 'Speed limit along y (omni).', 'm/s', min=0.0, max=100.0)
    max_angular_rad_s: float = _p(1.5, 'Yaw-rate limit.', 'rad/s', min=0.0, max=100.0)
    max_linear_accel_m_s2: float = _p(1.0, 'Acceleration limit (x and y).', 'm/s^2',
                                      min=0.001, max=1000.0)
    max_angular_accel_rad_s2: float = _p(3.0, 'Yaw acceleration limit.', 'rad/s^2',
                                         min=0.001, max=1000.0)
    wheelbase_m: float = _p(0.5, 'Ackermann wheelbase.', 'm', min=0.01, max=20.0,
                            read_only=True)
    max_steering_deg: float = _p(30.0, 'Ackermann steering limit.', 'deg', min=0.1,
                                 max=89.0, read_only=True)
    cmd_vel_timeout_s: float = _p(0.5, 'The base brakes to a stop when no command arrived '
                                  'for this long.', 's', min=0.01, max=60.0)
    cmd_vel_stamped: bool = _p(True, 'cmd_vel is subscribed as geometry_msgs/TwistStamped '
                               "(Nav2's enable_stamped_cmd_vel default from Kilted on), false: "
                               'Twist (Jazzy).', read_only=True)
    cmd_vel_follow_type: bool = _p(True, 'Subscribe cmd_vel with the type its publishers use '
                                   '(warned once, naming both types); false: keep '
                                   'cmd_vel_stamped and only warn.', read_only=True)
    rate_hz: float = _p(50.0, 'Rate of the integration, odom and /tf.', 'Hz', min=1.0,
                        max=1000.0, read_only=True)
    publish_clock: bool = _p(False, 'Own the simulated time: publish /clock, advancing by '
                             'real_time_factor.', read_only=True)
    real_time_factor: float = _p(1.0, 'Simulated seconds per wall second with publish_clock, '
                                 "at most: time also waits for the sync_topics' sensors; 0: "
                                 'max (wait only for them).', min=0.0,
                                 max=1000.0, read_only=True)
    sync_topics: tuple = _p(('/scan', '/points', '/terrain'), 'With publish_clock: '
                            'sensor outputs whose stamps simulated time waits for (those '
                            'with a publisher).',
                            item_type=str, read_only=True)
    sync_lag_s: float = _p(0.25, 'With publish_clock: how far the newest stamp of each '
                           'synced topic may lag simulated time.', 's', min=0.0, max=60.0,
                           read_only=True)
    sync_timeout_s: float = _p(2.0, 'With publish_clock: wall time one step waits for '
                               'the sensors before going on (counted).', 's', min=0.01,
                               max=600.0, read_only=True)
    sync_start_timeout_s: float = _p(30.0, 'With publish_clock: wall time simulated '
                                     'time waits at start for every sync topic to have a '
                                     'publisher, and for its first message.', 's',
                                     min=0.0, max=3600.0, read_only=True)
    odom_noise_m_per_m: float = _p(0.0, 'Odometry position drift: 1-sigma error after 1 m, '
                                   'growing with the square root of the distance.', 'm',
                                   min=0.0, max=1.0, read_only=True)
    odom_noise_rad_per_rad: float = _p(0.0, 'Odometry heading drift: 1-sigma error after '
                                       '1 rad turned, growing with its square root.', 'rad',
                                       min=0.0, max=1.0, read_only=True)
    imu_enabled: bool = _p(True, 'Publish imu (sensor_msgs/Imu in base_frame) every step.',
                           read_only=True)
    imu_gyro_noise_density: float = _p(GYRO_DENSITY_RAD_S_SQRT_HZ, 'IMU angular-rate white '
                                       'noise density (Bosch BMI088: 0.014 deg/s/sqrt(Hz)).',
                                       'rad/s/sqrt(Hz)', min=0.0, max=1.0, read_only=True)
    imu_accel_noise_density: float = _p(ACCEL_DENSITY_M_S2_SQRT_HZ, 'IMU acceleration white '
                                        'noise density (Bosch BMI088: 175 ug/sqrt(Hz)).',
                                        'm/s^2/sqrt(Hz)', min=0.0, max=10.0, read_only=True)
    imu_topic: str = _p('imu', "Topic of the IMU (a robot description's <topic>).",
                        read_only=True, nonempty=True)
    imu_frame: str = _p('', 'frame_id of the IMU messages; empty = base_frame.', read_only=True)
    imu_rate_hz: float = _p(0.0, 'IMU publishing rate (at most one per step); 0 = every step.',
                            'Hz', min=0.0, max=10000.0, read_only=True)
    imu_gyro_stddev_rad_s: float = _p(-1.0, 'IMU angular-rate noise per sample (a Gazebo '
                                      '<noise> stddev); negative = from the density.', 'rad/s',
                                      min=-1.0, max=10.0, read_only=True)
    imu_accel_stddev_m_s2: float = _p(-1.0, 'IMU acceleration noise per sample (a Gazebo '
                                      '<noise> stddev); negative = from the density.', 'm/s^2',
                                      min=-1.0, max=100.0, read_only=True)
    robot_description: str = _p('', 'The robot (a URDF, xacro or SDF file; topic / topic:NAME '
                                "for robot_state_publisher's text, waited for): its wheels' "
                                '/joint_states and, with publish_robot_state, its joints on '
                                '/tf_static and /tf (docs/robots.md). Empty = none.',
                                read_only=True)
    robot_args: str = _p('', "xacro arguments of robot_description, 'name:=value ...'.",
                         read_only=True)
    publish_robot_state: bool = _p(True, 'With robot_description: publish its fixed joints on '
                                   '/tf_static and its moving ones on /tf (from /joint_states, '
                                   'the wheels from the motion, else 0), as '
                                   'robot_state_publisher does; false where one runs.',
                                   read_only=True)
    lidar_frame: str = _p('lidar_3d', 'Frame of the 3D LiDAR.', read_only=True, nonempty=True)
    laser_frame: str = _p('laser', 'Frame of the 2D laser scanner.', read_only=True,
                          nonempty=True)

    @property
    def material_table_file(self) -> str:
        """Return '' (the default material table): base_sim has no materials_file."""
        return ''

    def _check_cross(self):
        super()._check_cross()
        footprint_outline(self)


def parse_footprint(text: str) -> NDArray[np.float64]:
    """
    Return the (P, 2) float64 polygon of a Nav2 footprint string '[[x, y], [x, y], ...]'.

    The format of Nav2's costmap footprint parameter (nav2_costmap_2d, 'footprint'): at least
    3 points, metres in the robot frame. ConfigError names footprint_polygon otherwise (the
    name footprint is lidar_3d's, a shared '/**' parameter block reaches both nodes).
    """
    allowed = "'[[x, y], [x, y], [x, y], ...]': 3 or more finite points (m)"
    try:
        pts = np.array(json.loads(text), dtype=np.float64)
    except (ValueError, TypeError) as exc:
        raise ConfigError('footprint_polygon', text, allowed) from exc
    if pts.ndim != 2 or pts.shape[1] != 2 or len(pts) < 3 or not np.isfinite(pts).all():
        raise ConfigError('footprint_polygon', text, allowed)
    return pts


def footprint_outline(cfg: BaseSimConfig) -> NDArray[np.float64]:
    """Return the footprint (P, 2) in base_frame: the polygon, or a 16-gon around the circle."""
    if cfg.footprint_polygon.strip():
        return parse_footprint(cfg.footprint_polygon)
    a = np.arange(CIRCLE_VERTICES) * (2.0 * math.pi / CIRCLE_VERTICES)
    # Circumscribed: every edge touches the circle, so the polygon holds all of it.
    r = cfg.footprint_radius_m / math.cos(math.pi / CIRCLE_VERTICES)
    return r * np.c_[np.cos(a), np.sin(a)]
