"""
TransformStamped builders shared by the nodes that publish /tf: demo_driver and base_sim.

``transform`` is one parent -> child transform; ``sensor_statics`` the base -> sensor frames
(x y z m, roll pitch yaw deg, as the nodes' lidar_pose / laser_pose parameters give them) that
go out once on /tf_static (REP 105 leaves the sensor frames below the base frame).
"""

import math

from geometry_msgs.msg import TransformStamped

from ubot_lidar_sim.core.poses import rpy_quaternion


def transform(stamp, parent, child, xyz, quat_wxyz):
    """Return a TransformStamped parent -> child: xyz in m, quaternion (w, x, y, z)."""
    return fill_transform(TransformStamped(), stamp, parent, child, xyz, quat_wxyz)


def fill_transform(t, stamp, parent, child, xyz, quat_wxyz):
    """Set TransformStamped t to parent -> child (as transform) and return it; no new message."""
    t.header.stamp, t.header.frame_id, t.child_frame_id = stamp, parent, child
    p, q = t.transform.translation, t.transform.rotation
    p.x, p.y, p.z = (float(v) for v in xyz)
    q.w, q.x, q.y, q.z = (float(v) for v in quat_wxyz)
    return t


def sensor_statics(stamp, base_frame, poses_and_frames):
    """Return base_frame -> frame transforms of ((x, y, z, roll, pitch, yaw deg), frame) pairs."""
    out = []
    for pose, frame in poses_and_frames:
        x, y, z, r, p, ya = pose
        quat = rpy_quaternion(*(math.radians(a) for a in (r, p, ya)))
        out.append(transform(stamp, base_frame, frame, (x, y, z), quat))
    return out
