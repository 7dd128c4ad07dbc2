"""
Return selection: which detected echoes of a beam become points, and the flags they carry.

Flags (docs/physics.md, "Return selection"): bit 0 first, 1 strongest, 2 last, 3 second
strongest, 4 ghost (a surface seen through a mirror, sensors/ghosts.py), 5 false alarm (the
background's noise crossing the threshold, physics/false_alarms.py). A multi-return mode
emits the union of its echoes (one point when they coincide).

Velodyne's dual rule (``second_when_last``): in ``dual_strongest_last``, when a beam's strongest
echo is also its last, the other return is the second strongest echo (VLP-16 User Manual
63-9243 Rev D, p. 57, and VLP-32C User Manual 63-9325 Rev C, p. 57: "If the strongest return
is also the last return, then the second-strongest return is provided"; the Hesai PandarXT-16
manual, section 3.1.2.3, states the same rule for its "Last and Strongest" mode).
"""

from typing import Tuple

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.limits import RETURN_MODES
from ubot_lidar_sim.core.physics import radiometry_passes

FLAG_FIRST, FLAG_STRONGEST, FLAG_LAST, FLAG_SECOND_STRONGEST = 1, 2, 4, 8
FLAG_GHOST = 16
FLAG_FALSE_ALARM = 32

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


def select_returns(mode: str, beam: np.ndarray, strength: np.ndarray,
                   second_when_last: bool = False,
                   ) -> Tuple[NDArray[np.uint8], NDArray[np.bool_]]:
    """
    Return flags (D,) uint8 of detected echoes and the mask (D,) of those mode emits.

    beam (D,) int64 and strength (D,) measured signal of the detected echoes in (beam, range)
    order. Strongest and second strongest are ranked by strength, nearest first among ties.
    second_when_last applies Velodyne's dual rule to dual_strongest_last (module docstring).
    """
    # Rank 0 and 1 by strength, nearest first among ties (what a stable sort by
    # (beam, -strength) gives), in one compiled pass over each beam's echoes.
    flags = radiometry_passes.first_max_flags(
        np.asarray(beam, np.int64), np.asarray(strength, np.float64), FLAG_FIRST,
        FLAG_STRONGEST, FLAG_LAST, FLAG_SECOND_STRONGEST)
    emit = _EMIT[mode]((flags & FLAG_FIRST) != 0, (flags & FLAG_STRONGEST) != 0,
                       (flags & FLAG_LAST) != 0)
    if second_when_last and mode == 'dual_strongest_last':
        emit = emit | _second_where_strongest_is_last(np.asarray(beam, np.int64), flags)
    return flags, emit


def _second_where_strongest_is_last(beam: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """Return the mask (D,) of second strongest echoes of beams whose strongest is the last."""
    both = FLAG_STRONGEST | FLAG_LAST
    beams = beam[(flags & both) == both]     # sorted: one strongest per beam, beams ascending
    second = (flags & FLAG_SECOND_STRONGEST) != 0
    if beams.size == 0:
        return np.zeros(beam.shape[0], bool)
    at = np.minimum(np.searchsorted(beams, beam), beams.size - 1)
    return second & (beams[at] == beam)
