"""Output: point layouts and file writers (no rclpy)."""
