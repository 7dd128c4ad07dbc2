"""ROS 2 layer: thin rclpy nodes that convert messages, call the core and publish."""
