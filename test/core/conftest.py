"""
The core tests, one folder per subpackage of ubot_lidar_sim/core (the base modules' here).

pytest puts this folder on sys.path (a conftest.py's folder, import mode prepend), so the tests
of every subfolder import the shared helpers beside it (sdf_helpers, robot_files).
"""
