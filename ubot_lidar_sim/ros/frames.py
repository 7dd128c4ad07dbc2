"""
TransformStamped builders shared by the nodes that publish /tf: demo_driver and base_sim.

``transform`` is one parent -> child transform; ``sensor_statics`` the base -> sensor frames
(x y z m, roll pitch yaw deg, as the nodes' lidar_pose / laser_pose parameters give them) that
go out once on /tf_static (REP 105 leaves the sensor frames below the base frame).
"""

import math

from geometry_msgs.msg import Quaternion, Transform, TransformStamped, Vector3
from std_msgs.msg import Header
import transforms3d


def transform(stamp, parent, child, xyz, quat_wxyz):
    """Return a TransformStamped parent -> child: xyz in m, quaternion (w, x, y, z)."""
    px, py, pz = (float(v) for v in xyz)
    w, x, y, z = (float(v) for v in quat_wxyz)
    return TransformStamped(
        header=Header(stamp=stamp, frame_id=parent), child_frame_id=child,
        transform=Transform(translation=Vector3(x=px, y=py, z=pz),
                            rotation=Quaternion(x=x, y=y, z=z, w=w)))


def rpy_quaternion(roll, pitch, yaw):
    """Return the (w, x, y, z) quaternion of fixed-axis roll, pitch, yaw (rad)."""
    return transforms3d.euler.euler2quat(roll, pitch, yaw, 'sxyz')


def sensor_statics(stamp, base_frame, poses_and_frames):
    """Return base_frame -> frame transforms of ((x, y, z, roll, pitch, yaw deg), frame) pairs."""
    out = []
    for pose, frame in poses_and_frames:
        x, y, z, r, p, ya = pose
        quat = rpy_quaternion(*(math.radians(a) for a in (r, p, ya)))
        out.append(transform(stamp, base_frame, frame, (x, y, z), quat))
    return out
