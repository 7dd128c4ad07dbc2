"""Robot descriptions (URDF, xacro, SDF model): links, joints, sensors, base, own body."""
