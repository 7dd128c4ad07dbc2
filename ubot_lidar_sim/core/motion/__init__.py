"""
The kinematic base of base_sim (docs/nav2.md): drive, limits, footprint collision, ground.

config.py (BaseSimConfig), kinematics.py (commands, limits, integration), footprint.py (the
Nav2 footprint and its collision against a World), ground.py (z, roll, pitch from the ground
under the wheels), odometry.py (seeded drift), base.py (BaseSim: one step of all of them).
No rclpy here; ros/base_sim_node.py converts and publishes.
"""
