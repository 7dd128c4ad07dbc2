"""
A model's base plugin -> base_sim's kinematics and limits (core/motion/config.py names).

- gz-sim DiffDrive (gz-sim-diff-drive-system, gz::sim::systems::DiffDrive): max_linear_velocity,
  max_angular_velocity, max_linear_acceleration, max_angular_acceleration (gz-sim
  src/systems/diff_drive/DiffDrive.hh, the SpeedLimiter elements), topic (default
  /model/<model>/cmd_vel).
- gz-sim AckermannSteering: wheel_base, steering_limit (rad), the same limits.
- gazebo_ros_diff_drive (Gazebo classic): max_wheel_acceleration (m/s^2 at the wheel rim, so the
  linear acceleration limit); it has no speed limit (gazebo_plugins/src/gazebo_ros_diff_drive.cpp
  :257-258); topic cmd_vel of its node.
The wheel joints, radius and separation (and an Ackermann base's steering joints, wheel base and
kingpin width) give base_sim's /joint_states (core/motion/wheels.py), with gz-sim's defaults
where a tag is absent: DiffDrive wheel_separation 1.0, wheel_radius 0.2 (DiffDrive.cc:109-112),
AckermannSteering also kingpin_width 0.8, wheel_base 1.0 (AckermannSteering.cc:144-156; gz-sim
commit 93bbf3e); gazebo_ros_diff_drive wheel_separation 0.34, wheel_diameter 0.15
(gazebo_plugins/src/gazebo_ros_diff_drive.cpp:310, 326, ros2 branch d52f7c4).
"""

import math
from xml.etree.ElementTree import Element

from ubot_lidar_sim.core.motion.wheels import Wheels
from ubot_lidar_sim.core.robot.description import Drive, Note, RobotError
from ubot_lidar_sim.core.robot.sensors import float_at, ros_topic, text_at

GZ_DIFF = ('gz-sim-diff-drive-system', 'ignition-gazebo-diff-drive-system',
           'libgz-sim-diff-drive-system.so')
GZ_ACKERMANN = ('gz-sim-ackermann-steering-system', 'ignition-gazebo-ackermann-steering-system')
CLASSIC_DIFF = ('libgazebo_ros_diff_drive.so',)
# Plugins that drive joints or publish state and leave the rays alone.
NOT_SIMULATED = {'joint_state_publisher': 'robot_state_publisher / base_sim publish the frames',
                 'odometry_publisher': 'base_sim publishes odom'}
LIMITS = (('max_linear_velocity', 'max_linear_m_s'), ('max_angular_velocity', 'max_angular_rad_s'),
          ('max_linear_acceleration', 'max_linear_accel_m_s2'),
          ('max_angular_acceleration', 'max_angular_accel_rad_s2'))


def _kind(plugin):
    """Return 'diff', 'ackermann', 'classic_diff' or None by the plugin's filename and name."""
    names = (plugin.get('filename') or '', plugin.get('name') or '')
    if any(n in GZ_DIFF or n.endswith('systems::DiffDrive') for n in names):
        return 'diff'
    if any(n in GZ_ACKERMANN or n.endswith('systems::AckermannSteering') for n in names):
        return 'ackermann'
    if any(n in CLASSIC_DIFF for n in names):
        return 'classic_diff'
    return None


def read_drive(plugin: Element, model: str, where: str, notes: list[Note]) -> Drive | None:
    """Return the Drive of a base plugin element, or None (the plugin listed in notes)."""
    kind = _kind(plugin)
    filename = plugin.get('filename') or ''
    here = f"{where}: plugin '{filename}'"
    if kind is None:
        why = next((v for k, v in NOT_SIMULATED.items() if k in filename.replace('-', '_')),
                   'unknown model plugin: not simulated')
        notes.append(Note(where, f"plugin filename='{filename}'", why))
        return None
    values, own = {}, []
    if kind == 'classic_diff':
        accel = float_at(plugin, 'max_wheel_acceleration', here, 0.0)
        values['drive'] = 'diff'
        if accel > 0:
            values['max_linear_accel_m_s2'] = accel
        topic = ros_topic(plugin, 'cmd_vel')     # its node subscribes cmd_vel, remapped
        if plugin.find('max_wheel_torque') is not None:
            own.append(Note(here, 'max_wheel_torque', "base_sim's base is kinematic"))
        wheels = _wheels(plugin, float_at(plugin, 'wheel_diameter', here, 0.15) / 2.0,
                         float_at(plugin, 'wheel_separation', here, 0.34), here)
        return Drive(filename, 'diff', values, topic, tuple(own), wheels)
    values['drive'] = kind
    for tag, name in LIMITS:
        value = float_at(plugin, tag, here, None)
        if value is None and tag == 'max_linear_velocity':
            value = float_at(plugin, 'max_velocity', here, None)      # the deprecated name
        if value is not None:
            values[name] = abs(value)
    if kind == 'ackermann':
        base = float_at(plugin, 'wheel_base', here, None)
        if base is not None:
            values['wheelbase_m'] = base
        limit = float_at(plugin, 'steering_limit', here, None)
        if limit is not None:
            values['max_steering_deg'] = math.degrees(limit)
    if plugin.find('odom_publish_frequency') is not None:
        own.append(Note(here, 'odom_publish_frequency', "odometry at base_sim's rate_hz"))
    wheels = _wheels(plugin, float_at(plugin, 'wheel_radius', here, 0.2),
                     float_at(plugin, 'wheel_separation', here, 1.0), here,
                     kind == 'ackermann')
    topic = text_at(plugin, 'topic', f'/model/{model}/cmd_vel')
    return Drive(filename, kind, values, topic, tuple(own), wheels)


def _wheels(plugin, radius, separation, here, ackermann=False):
    """Return the plugin's Wheels (None without left or right joints); RobotError if bad."""
    left = tuple(el.text.strip() for el in plugin.findall('left_joint') if el.text)
    right = tuple(el.text.strip() for el in plugin.findall('right_joint') if el.text)
    if not left or not right:
        return None
    if not radius > 0:
        raise RobotError(f'{here}: wheel radius {radius:g} m, allowed > 0')
    steering = ()
    if ackermann:
        steering = (text_at(plugin, 'left_steering_joint'),
                    text_at(plugin, 'right_steering_joint'))
        steering = () if None in steering else steering
    return Wheels(left, right, radius, separation, steering,
                  float_at(plugin, 'wheel_base', here, 1.0),
                  float_at(plugin, 'kingpin_width', here, 0.8))
