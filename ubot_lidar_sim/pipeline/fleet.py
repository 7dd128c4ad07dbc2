"""
A fleet of demo robots (no rclpy): robot k of n in namespace robotK, its frames under robotK/.

Each robot's three sensors draw the others' bodies (``fleet_frames``: their base frames), and
its demo driver drives its own loop around the yard's centre (radii LOOP_RADII_M), so that
every LiDAR of the fleet sees the other robots pass. Robot 1's driver alone plays the weather
cycle on the one ``/environment`` the whole fleet shares. Used by ``python -m ubot_lidar_sim run
--robots N`` (``make demo DEMO_ROBOTS=N``) and by the launch files' ``robots:=N``.
"""

# Loops inside the 64 m demo yard, the single robot's 12 m first.
LOOP_RADII_M = (12.0, 8.0, 16.0, 20.0, 24.0)
MAX_ROBOTS = len(LOOP_RADII_M)


def check_robots(n):
    """Raise ValueError unless n is a robot count 1..MAX_ROBOTS."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_ROBOTS:
        raise ValueError(f'robots: got {n!r}, allowed an int 1-{MAX_ROBOTS} (one loop each '
                         'in the demo yard)')


def robots_argument(text):
    """Return the robot count of a launch argument robots:=TEXT; ValueError naming robots."""
    try:
        n = int(str(text).strip())
    except ValueError:
        raise ValueError(f'robots: got {text!r}, allowed an int 1-{MAX_ROBOTS} (one loop each '
                         'in the demo yard)') from None
    check_robots(n)
    return n


def robot_namespace(k, n):
    """Return robot k's namespace ('' for a single robot: the nodes keep their plain names)."""
    return f'robot{k}' if n > 1 else ''


def robot_parameters(k, n):
    """Return {node name: {parameter: value}} of robot k (1..n) of a fleet of n (n > 1)."""
    check_robots(n)
    ns = robot_namespace(k, n)
    base, others = f'{ns}/base_link', [f'robot{j}/base_link' for j in range(1, n + 1) if j != k]
    # One weather source per graph: robot 1's driver plays the cycle (or not: weather_cycle as
    # given) on the shared /environment; the others' cycles would interleave with it.
    quiet = {} if k == 1 else {'weather_cycle': False}
    return {'lidar_3d': {'frame_id': f'{ns}/lidar_3d', 'sensor_id': f'{ns}/lidar_3d',
                         'fleet_frames': others},
            'laser_scan': {'frame_id': f'{ns}/laser', 'fleet_frames': others},
            'terrain_sensor': {'base_frame': base, 'fleet_frames': others},
            'demo_driver': {'odom_frame': f'{ns}/odom', 'base_frame': base,
                            'lidar_frame': f'{ns}/lidar_3d', 'laser_frame': f'{ns}/laser',
                            'loop_radius_m': LOOP_RADII_M[k - 1], **quiet}}
