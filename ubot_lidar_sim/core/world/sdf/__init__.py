"""Gazebo SDF worlds (docs/worlds.md, "Gazebo SDF worlds"): read, resolved and built into objects."""
