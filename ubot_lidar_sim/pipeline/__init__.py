"""
The pipeline: a rig of sensors on a pose source in a world, run and recorded (no rclpy).

rig, trajectory, record, writers, interrupts and fleet sit between the core and its front ends
(cli, dataset, ros, the launch files); ``run`` (the all-in-one ``python -m ubot_lidar_sim run``)
starts the ROS nodes, so it alone sits above ros/ (docs/architecture.md).
"""
