"""ubot_lidar_sim: radiometric LiDAR, 2D scanner and terrain sensor simulation for ROS 2."""

__version__ = '0.5.0'
