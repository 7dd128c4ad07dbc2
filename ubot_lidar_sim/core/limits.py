"""
Limits and choices config shares with the physics: the weather an entrance may send, the modes.

The base layer holds them so that config (which declares them as ranges and choices) and the
physics (which applies them) both import them and config imports no physics.
"""

from ubot_lidar_sim.core.errors import ConfigError

#: Limits of every weather entrance. Rain above ~300 mm/h is a minute-long record; 500 leaves
#: room.
RAIN_MAX_MM_H = 500.0
VISIBILITY_MIN_M = 1.0
RAIN_ALLOWED = f'0 to {RAIN_MAX_MM_H:g} mm/h'
VISIBILITY_ALLOWED = f'inf (clear) or >= {VISIBILITY_MIN_M:g} m'

#: return_mode values, physics/return_selection's order.
RETURN_MODES = ('strongest', 'first', 'last', 'dual_strongest_last', 'dual_first_last',
                'triple_first_strongest_last')
#: The modes with one point per beam (the 2D scanner's).
SINGLE_RETURN_MODES = ('strongest', 'first', 'last')

#: The ray-casting backends by name (core/raycast/casters.py maps them to their classes; the
#: config declares the names without loading open3d or Embree) and the default, chosen by
#: benchmarks/bench_lidar.py's caster rows (docs/performance.md, "Casters").
CASTER_NAMES = ('open3d', 'embree')
DEFAULT_CASTER = 'open3d'

#: What a glass pane is to the rays (docs/physics.md, "Glass and mirrors"): a wall, or a pane
#: that passes the ray on and returns its specular glint.
GLASS_MODELS = ('opaque', 'physical')


def glass_physical(glass: str) -> bool:
    """Return True for glass 'physical', False for 'opaque'; ConfigError for anything else."""
    if glass not in GLASS_MODELS:
        raise ConfigError('glass', glass, ' | '.join(GLASS_MODELS))
    return glass == 'physical'
