"""
Return selection: which detected echoes of a beam become points, and the flags they carry.

Flags (docs/physics.md, "Return selection"): bit 0 first, 1 strongest, 2 last, 3 second
strongest. A multi-return mode emits the union of its echoes (one point when they coincide).
"""

import numpy as np

from ubot_lidar_sim.core.limits import RETURN_MODES
from ubot_lidar_sim.core.physics import radiometry_passes

FLAG_FIRST, FLAG_STRONGEST, FLAG_LAST, FLAG_SECOND_STRONGEST = 1, 2, 4, 8

#: return_mode -> the emitted echoes from the masks (first, strongest, last).
_EMIT = {
    'strongest': lambda first, strongest, last: strongest,
    'first': lambda first, strongest, last: first,
    'last': lambda first, strongest, last: last,
    'dual_strongest_last': lambda first, strongest, last: strongest | last,
    'dual_first_last': lambda first, strongest, last: first | last,
    'triple_first_strongest_last': lambda first, strongest, last: first | strongest | last,
}
assert tuple(_EMIT) == RETURN_MODES, 'core/limits.py lists the modes of _EMIT'


def select_returns(mode: str, beam: np.ndarray, strength: np.ndarray):
    """
    Return flags (D,) uint8 of detected echoes and the mask (D,) of those mode emits.

    beam (D,) int64 and strength (D,) measured signal of the detected echoes in (beam, range)
    order. Strongest and second strongest are ranked by strength, nearest first among ties.
    """
    # Rank 0 and 1 by strength, nearest first among ties (what a stable sort by
    # (beam, -strength) gives), in one compiled pass over each beam's echoes.
    flags = radiometry_passes.first_max_flags(
        np.asarray(beam, np.int64), np.asarray(strength, np.float64), FLAG_FIRST,
        FLAG_STRONGEST, FLAG_LAST, FLAG_SECOND_STRONGEST)
    return flags, _EMIT[mode]((flags & FLAG_FIRST) != 0, (flags & FLAG_STRONGEST) != 0,
                              (flags & FLAG_LAST) != 0)
