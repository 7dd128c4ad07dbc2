"""
base_sim's robot state: the wheels' /joint_states and the description's joints on /tf.

With ``robot_description`` (a file, or ``topic``: ros/robot_description.py) base_sim publishes
``joint_states`` (sensor_msgs/JointState) every step: the wheels that the drive plugin names,
their angles integrated from the base's motion (core/motion/wheels.py), with velocities. With
``publish_robot_state`` it also publishes, in place of robot_state_publisher, what it would
(core/robot/joint_frames.py): the fixed joints and the sensor frames that are not links on
/tf_static once (instead of the lidar_pose / laser_pose mounts), the moving joints on /tf every
step at the positions of /joint_states (the wheels' own; other joints from whoever publishes
them on ``joint_states``; 0 before; a mimic joint at its leader's through the mimic's formula,
its own value on ``joint_states`` not read). A sensor node's body then follows the joints.
A ``base_frame`` of PREFIX/ROOT (the description's root link after a prefix, robotK/ in a
fleet of copies) puts every frame of the description under PREFIX, as robot_state_publisher's
``frame_prefix`` does.
"""

import math

from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.core.motion.wheels import WheelOdometer
from ubot_lidar_sim.core.poses import matrix_to_quaternion
from ubot_lidar_sim.core.robot.joint_frames import (fixed_transforms, moving_joints,
                                                    moving_transforms)
from ubot_lidar_sim.ros.frames import transform
from ubot_lidar_sim.ros.robot_description import node_robot


def _tf(stamp, parent, child, matrix):
    """Return the TransformStamped of a (4, 4) parent-from-child."""
    x, y, z, w = matrix_to_quaternion(matrix[:3, :3])
    return transform(stamp, parent, child, matrix[:3, 3], (w, x, y, z))


class RobotStateOutput:
    """The /joint_states and joint transforms of one base_sim (see the module)."""

    @classmethod
    def of(cls, node, cfg, tf_pub):
        """Return the output of a BaseSimConfig's robot_description, or None (empty)."""
        robot = node_robot(node, cfg.robot_description, cfg.robot_args, cfg.model_paths)
        if robot is None:
            return None
        prefix = cfg.base_frame[:-len(robot.root)] if cfg.base_frame.endswith(
            '/' + robot.root) else ''
        return cls(node, robot, cfg.publish_robot_state, tf_pub, prefix)

    def __init__(self, node, robot, publish_state, tf_pub, prefix=''):
        self.robot = robot
        self.prefix = prefix    # of every frame of the description (robotK/ in a fleet)
        self._tf_pub = tf_pub if publish_state else None
        wheels = robot.drive.wheels if robot.drive is not None else None
        known = {j.name for j in robot.joints}
        if wheels is not None and not set(wheels.names) <= known:
            node.get_logger().warning(
                f'drive plugin joints {sorted(set(wheels.names) - known)} are not joints of '
                f'{robot.source}: no /joint_states for its wheels')
            wheels = None
        self.wheels = WheelOdometer(wheels) if wheels is not None else None
        self._own = set(wheels.names) if wheels is not None else set()
        self._moving = set(moving_joints(robot))     # those /joint_states sets (no mimic)
        self._any_moving = bool(moving_transforms(robot, {}))
        self.positions = {}     # joint name -> position (rad or m) of the other joints
        self._pub = node.create_publisher(JointState, 'joint_states', 10)
        if self._tf_pub is not None and self._moving - self._own:
            node.create_subscription(JointState, 'joint_states', self._on_joint_states,
                                     qos_profile_sensor_data)

    def _on_joint_states(self, msg):
        """Keep the positions of the moving joints that base_sim does not drive itself."""
        if len(msg.position) != len(msg.name):
            return      # robot_state_publisher ignores such a message too
        for name, value in zip(msg.name, msg.position):
            if name in self._moving and name not in self._own and math.isfinite(value):
                self.positions[name] = float(value)

    def statics(self, stamp):
        """Return the /tf_static transforms (empty without publish_robot_state)."""
        if self._tf_pub is None:
            return []
        return [_tf(stamp, self.prefix + p, self.prefix + c, m)
                for p, c, m in fixed_transforms(self.robot)]

    def forget(self):
        """Forget the last pose (a teleport): the wheels do not turn for it."""
        if self.wheels is not None:
            self.wheels.forget()

    def publish(self, stamp, pose, dt_s):
        """Step the wheels to the base's true pose, publish /joint_states and the moving joints."""
        positions = dict(self.positions)
        if self.wheels is not None:
            self.wheels.step(pose, dt_s)
            names = self.wheels.wheels.names
            positions.update(zip(names, self.wheels.position.tolist()))
            msg = JointState(name=list(names), position=self.wheels.position.tolist(),
                             velocity=self.wheels.velocity.tolist())
            msg.header.stamp = stamp
            self._pub.publish(msg)
        if self._tf_pub is not None and self._any_moving:
            self._tf_pub.publish(TFMessage(transforms=[
                _tf(stamp, self.prefix + p, self.prefix + c, m)
                for p, c, m in moving_transforms(self.robot, positions)]))
