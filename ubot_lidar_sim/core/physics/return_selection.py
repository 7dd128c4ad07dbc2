"""
Return selection: which detected echoes of a beam become points, and the flags they carry.

Flags (CONTRACT §7 return_flags): bit 0 first, 1 strongest, 2 last, 3 second strongest. A
multi-return mode emits the union of its echoes (one point when they coincide).
"""

import numpy as np

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
RETURN_MODES = tuple(_EMIT)
#: The modes with one point per beam (the 2D scanner's).
SINGLE_RETURN_MODES = ('strongest', 'first', 'last')


def _first_max(x, starts, group):
    """Mask (D,) of the first maximum of x in each run (starts (G,), group (D,) run index)."""
    out = np.zeros(x.size, dtype=bool)
    cand = np.flatnonzero(x == np.maximum.reduceat(x, starts)[group])
    out[cand[np.r_[True, group[cand][1:] != group[cand][:-1]]]] = True
    return out


def select_returns(mode: str, beam: np.ndarray, strength: np.ndarray):
    """
    Return flags (D,) uint8 of detected echoes and the mask (D,) of those mode emits.

    beam (D,) int64 and strength (D,) measured signal of the detected echoes in (beam, range)
    order. Strongest and second strongest are ranked by strength, nearest first among ties.
    """
    n = beam.size
    if n:
        first = np.r_[True, beam[1:] != beam[:-1]]
        last = np.r_[beam[1:] != beam[:-1], True]
        starts = np.flatnonzero(first)
        group = np.cumsum(first) - 1
        # Rank 0 and 1 by strength, nearest first among ties (what a stable sort by
        # (beam, -strength) gives), from two max passes instead of a sort.
        strongest = _first_max(strength, starts, group)
        rest = np.where(strongest, -np.inf, strength)
        size = np.diff(np.r_[starts, n])
        second = _first_max(rest, starts, group) & (size >= 2)[group]
    else:
        first = last = strongest = second = np.zeros(0, bool)
    flags = (first * FLAG_FIRST | strongest * FLAG_STRONGEST | last * FLAG_LAST
             | second * FLAG_SECOND_STRONGEST).astype(np.uint8)
    return flags, _EMIT[mode](first, strongest, last)
