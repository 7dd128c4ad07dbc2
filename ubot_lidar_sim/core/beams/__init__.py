"""The beams a sensor fires: directions and firing times of a sweep (grid, planar, rosette)."""
