"""
The lidar_3d node's ``~/boxes``: the 3D box of every actor at each sweep's stamp (MarkerArray).

One CUBE per actor (ns ``boxes``, id its track id: the instance_id) in the sensor frame, posed
and sized as output/boxes.py computes them for the datasets (the actor's extent in its own
frame, placed by its pose at the stamp: a trajectory actor by its motion, a /tf frame actor by
the node's /tf lookup: output/boxes.actor_boxes), and a TEXT_VIEW_FACING label with the
actor's name (ns ``labels``): output/messages.box_markers, the markers a recording writes too.
Each marker lives two sweep periods, so boxes of actors that leave vanish.
"""

from ubot_lidar_sim.output import messages
from ubot_lidar_sim.ros.conversions import to_rclpy


def box_markers(items, poses, frame_id, stamp_ns, lifetime_s):
    """Return the rclpy MarkerArray of Shapes items at sensor-from-box poses (B, 4, 4)."""
    return to_rclpy(messages.box_markers(items, poses, frame_id, stamp_ns, lifetime_s))
