"""
The messages of base_sim's state: nav_msgs/Odometry, sensor_msgs/Imu and its /tf chain.

Covariances are row-major 6 x 6 over (x, y, z, rotation about x, y, z), as both messages define
them. Odometry's pose covariance is the drift model's (core/motion/odometry.py) over x, y and
yaw; z, roll and pitch follow the ground exactly, and so does the twist (the true velocity):
their entries are 0.

``StepMessages`` builds each message once and refills it every step: rclpy serializes a message
when it is published, so the next step may change it; building the nested messages anew cost
more than the rest of a step's publishing (~0.3 ms of the base's ~1 ms on 2 shared cores).
"""

from geometry_msgs.msg import TransformStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.ros.frames import fill_transform

POSE_INDEX = (0, 1, 5)      # x, y, yaw in the 6 x 6 pose covariance
DIAGONAL_3X3 = (0, 4, 8)    # the variances of a row-major 3 x 3 covariance


class StepMessages:
    """The /tf, odom and imu messages of base_sim, refilled each step (see the module)."""

    def __init__(self):
        self._tf = TFMessage()
        self._odom = Odometry()
        self._imu = Imu()
        self._imu_sigmas = None

    def tf(self, stamp, links):
        """Return the TFMessage of links, (parent, child, xyz m, quaternion (w, x, y, z)) each."""
        transforms = self._tf.transforms
        if len(transforms) != len(links):
            self._tf.transforms = transforms = [TransformStamped() for _ in links]
        for t, (parent, child, xyz, quat) in zip(transforms, links):
            fill_transform(t, stamp, parent, child, xyz, quat)
        return self._tf

    def odometry(self, stamp, odom_frame, base_frame, step, quat_wxyz):
        """Return the Odometry of a core Step: odom pose, z, orientation quat_wxyz, velocity."""
        odom = self._odom
        odom.header.stamp, odom.header.frame_id = stamp, odom_frame
        odom.child_frame_id = base_frame
        p = odom.pose.pose
        (p.position.x, p.position.y), p.position.z = step.odom[:2], step.pose[2]
        p.orientation.w, p.orientation.x, p.orientation.y, p.orientation.z = quat_wxyz
        cov = odom.pose.covariance          # float64 (36,), zero outside x, y and yaw
        for i, a in enumerate(POSE_INDEX):
            for j, b in enumerate(POSE_INDEX):
                cov[6 * a + b] = step.odom_covariance[i][j]
        vx, vy, wz = step.velocity
        odom.twist.twist.linear.x, odom.twist.twist.linear.y = vx, vy
        odom.twist.twist.angular.z = wz
        return odom

    def imu(self, stamp, frame, sample, gyro_sigma, accel_sigma):
        """Return the Imu of a core Imu.sample (quaternion, rates, accelerations), its sigmas."""
        quat, omega, accel = sample
        msg = self._imu
        msg.header.stamp, msg.header.frame_id = stamp, frame
        o = msg.orientation
        o.w, o.x, o.y, o.z = (float(v) for v in quat)
        msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z = (
            float(v) for v in omega)
        a = msg.linear_acceleration
        a.x, a.y, a.z = (float(v) for v in accel)
        if self._imu_sigmas != (gyro_sigma, accel_sigma):
            self._imu_sigmas = gyro_sigma, accel_sigma
            msg.angular_velocity_covariance = [gyro_sigma ** 2 if i in DIAGONAL_3X3 else 0.0
                                               for i in range(9)]
            msg.linear_acceleration_covariance = [
                accel_sigma ** 2 if i in DIAGONAL_3X3 else 0.0 for i in range(9)]
        return msg
