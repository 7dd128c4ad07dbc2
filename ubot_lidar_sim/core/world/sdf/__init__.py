"""Gazebo SDF worlds (docs/worlds.md, "Gazebo SDF worlds"): read, resolved, built into objects."""
