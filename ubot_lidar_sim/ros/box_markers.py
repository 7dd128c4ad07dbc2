"""
The lidar_3d node's ``~/boxes``: the 3D box of every actor at each sweep's stamp (MarkerArray).

One CUBE per actor (ns ``boxes``, id its track id: the instance_id) in the sensor frame, posed
and sized as output/boxes.py computes them for the datasets (the actor's extent in its own
frame, placed by its pose at the stamp: a trajectory actor by its motion, a /tf frame actor by
the node's /tf lookup), and a TEXT_VIEW_FACING label with the actor's name (ns ``labels``).
Each marker lives two sweep periods, so boxes of actors that leave vanish.
"""

import numpy as np

from ubot_lidar_sim.core.poses import matrix_to_quaternion
from ubot_lidar_sim.output import boxes as boxes_mod
from ubot_lidar_sim.ros.markers import _duration
from visualization_msgs.msg import Marker, MarkerArray

BOX_RGBA = (1.0, 0.6, 0.0, 0.5)


def sweep_boxes(world, poses, stamp_s, sensor_pose):
    """Return (Shapes, (B, 4, 4) sensor-from-box) of world's actors at stamp_s (see module)."""
    items = boxes_mod.shapes(world, (), poses)
    return items, boxes_mod.box_poses(items, stamp_s, sensor_pose)


def box_markers(items, poses, frame_id, stamp, lifetime_s):
    """Return the MarkerArray of Shapes items at sensor-from-box poses (B, 4, 4)."""
    out = MarkerArray()
    for item, pose in zip(items, poses):
        for ns, kind in (('boxes', Marker.CUBE), ('labels', Marker.TEXT_VIEW_FACING)):
            m = Marker()
            m.header.frame_id, m.header.stamp = frame_id, stamp
            m.ns, m.id, m.type, m.action = ns, int(item.track_id), kind, Marker.ADD
            m.pose.position.x, m.pose.position.y, m.pose.position.z = map(float, pose[:3, 3])
            q = np.asarray(matrix_to_quaternion(pose[:3, :3]), np.float64)
            m.pose.orientation.x, m.pose.orientation.y, m.pose.orientation.z, \
                m.pose.orientation.w = map(float, q)
            m.color.r, m.color.g, m.color.b, m.color.a = BOX_RGBA
            m.lifetime = _duration(lifetime_s)
            if kind == Marker.CUBE:
                m.scale.x, m.scale.y, m.scale.z = map(float, item.size)
            else:
                m.scale.z, m.text, m.color.a = 0.5, item.name, 1.0
            out.markers.append(m)
    return out
