"""
The messages of base_sim's state: nav_msgs/Odometry and sensor_msgs/Imu (no state kept here).

Covariances are row-major 6 x 6 over (x, y, z, rotation about x, y, z), as both messages define
them. Odometry's pose covariance is the drift model's (core/motion/odometry.py) over x, y and
yaw; z, roll and pitch follow the ground exactly, and so does the twist (the true velocity):
their entries are 0.
"""

from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu

POSE_INDEX = (0, 1, 5)      # x, y, yaw in the 6 x 6 pose covariance


def odometry_msg(stamp, odom_frame, base_frame, step, quat_wxyz):
    """Return the Odometry of a core Step: odom pose, z, orientation quat_wxyz, velocity."""
    odom = Odometry()
    odom.header.stamp, odom.header.frame_id = stamp, odom_frame
    odom.child_frame_id = base_frame
    p = odom.pose.pose
    (p.position.x, p.position.y), p.position.z = step.odom[:2], step.pose[2]
    p.orientation.w, p.orientation.x, p.orientation.y, p.orientation.z = quat_wxyz
    cov = [0.0] * 36
    for i, a in enumerate(POSE_INDEX):
        for j, b in enumerate(POSE_INDEX):
            cov[6 * a + b] = float(step.odom_covariance[i][j])
    odom.pose.covariance = cov
    vx, vy, wz = step.velocity
    odom.twist.twist.linear.x, odom.twist.twist.linear.y = vx, vy
    odom.twist.twist.angular.z = wz
    return odom


def imu_msg(stamp, frame, sample, gyro_sigma, accel_sigma):
    """Return the Imu of a core Imu.sample (quaternion, rates, accelerations) with its sigmas."""
    quat, omega, accel = sample
    msg = Imu()
    msg.header.stamp, msg.header.frame_id = stamp, frame
    o = msg.orientation
    o.w, o.x, o.y, o.z = (float(v) for v in quat)
    msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z = (
        float(v) for v in omega)
    a = msg.linear_acceleration
    a.x, a.y, a.z = (float(v) for v in accel)
    msg.angular_velocity_covariance = [gyro_sigma ** 2 if i in (0, 4, 8) else 0.0
                                       for i in range(9)]
    msg.linear_acceleration_covariance = [accel_sigma ** 2 if i in (0, 4, 8) else 0.0
                                          for i in range(9)]
    return msg
