"""
The kinematic base of base_sim (docs/nav2.md): drive, limits, footprint collision, ground, IMU.

config.py (BaseSimConfig), kinematics.py (commands, limits, integration), footprint.py (the
Nav2 footprint and its collision against a World), sweep.py (the footprint swept over a move
against the world's triangles), ground.py (z, roll, pitch from the ground under the wheels),
odometry.py (seeded drift and its covariance), imu.py (the IMU's readings and noise), base.py
(BaseSim: one step of all of them, teleport). No rclpy here; ros/base_sim_node.py converts and
publishes.
"""
