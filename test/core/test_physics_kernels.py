"""
The compiled echo kernels (physics/kernels.py) against their plain-numpy references.

Stated tolerance: bit for bit. The kernels add in numpy's order and use only +, -, *, /.
"""

import numpy as np
import pytest

from ubot_lidar_sim.core.physics.kernels import first_max_flags, form_echoes
from ubot_lidar_sim.core.physics.return_selection import (FLAG_FIRST, FLAG_LAST, FLAG_STRONGEST,
                                                          FLAG_SECOND_STRONGEST)


def form_echoes_reference(beam, r, pw, st, gap_m):
    """Chain and sum echoes as echoes.process_beams did with bincounts (numpy reference)."""
    new = np.ones(beam.size, dtype=bool)
    new[1:] = (beam[1:] != beam[:-1]) | (np.diff(r) >= gap_m)
    eid = np.cumsum(new) - 1
    start = np.flatnonzero(new)
    n_e = start.size
    energy = np.bincount(eid, pw, n_e)
    with np.errstate(invalid='ignore', divide='ignore'):
        r_e = np.bincount(eid, pw * r, n_e) / energy
        dark = ~(energy > 0)
        n_c = np.bincount(eid, minlength=n_e)
        r_e = np.where(dark, np.bincount(eid, r, n_e) / np.maximum(n_c, 1), r_e)
    peak = np.bincount(eid, pw * st, n_e)
    is_max = pw == np.maximum.reduceat(pw, start)[eid]
    cand = np.flatnonzero(is_max)
    big = cand[np.r_[True, eid[cand][1:] != eid[cand][:-1]]]
    return start, energy, r_e, peak, big


def _first_max(x, starts, group):
    out = np.zeros(x.size, dtype=bool)
    cand = np.flatnonzero(x == np.maximum.reduceat(x, starts)[group])
    out[cand[np.r_[True, group[cand][1:] != group[cand][:-1]]]] = True
    return out


def flags_reference(beam, strength):
    """Flag echoes as select_returns did with two max passes (numpy reference)."""
    n = beam.size
    first = np.r_[True, beam[1:] != beam[:-1]]
    last = np.r_[beam[1:] != beam[:-1], True]
    starts = np.flatnonzero(first)
    group = np.cumsum(first) - 1
    strongest = _first_max(strength, starts, group)
    rest = np.where(strongest, -np.inf, strength)
    size = np.diff(np.r_[starts, n])
    second = _first_max(rest, starts, group) & (size >= 2)[group]
    return (first * FLAG_FIRST | strongest * FLAG_STRONGEST | last * FLAG_LAST
            | second * FLAG_SECOND_STRONGEST).astype(np.uint8)


def _contributions(seed, m=20000):
    rng = np.random.default_rng(seed)
    beam = np.sort(rng.integers(0, m // 6, m))
    r = rng.uniform(0.5, 80.0, m)
    r[rng.random(m) < 0.3] = 10.0                       # exact ties and gaps of exactly 0
    order = np.lexsort((r, beam))
    pw = rng.exponential(50.0, m)
    pw[rng.random(m) < 0.05] = 0.0                      # dark contributions (some dark echoes)
    pw[rng.random(m) < 0.1] = 7.0                       # ties for the largest contributor
    st = np.where(rng.random(m) < 0.5, 1.0, rng.uniform(0.2, 1.0, m))
    return beam[order], r[order], pw, st


@pytest.mark.parametrize('seed', [1, 2, 3])
def test_echo_formation_kernel_gives_the_bits_of_the_bincount_code(seed):
    beam, r, pw, st = _contributions(seed)
    gap = 0.75 * (1.0 - 1e-9)
    got, ref = form_echoes(beam, r, pw, st, gap), form_echoes_reference(beam, r, pw, st, gap)
    assert 1000 < got[0].size < beam.size and np.any(~(ref[1] > 0))
    for a, b in zip(got, ref):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize('seed', [1, 2])
def test_return_flag_kernel_gives_the_flags_of_the_two_max_passes(seed):
    rng = np.random.default_rng(seed)
    beam = np.sort(rng.integers(0, 3000, 9000))
    strength = np.round(rng.uniform(0.0, 20.0, 9000))   # many ties
    flags = first_max_flags(beam, strength, FLAG_FIRST, FLAG_STRONGEST, FLAG_LAST,
                            FLAG_SECOND_STRONGEST)
    np.testing.assert_array_equal(flags, flags_reference(beam, strength))
    assert first_max_flags(beam[:0], strength[:0], 1, 2, 4, 8).shape == (0,)
