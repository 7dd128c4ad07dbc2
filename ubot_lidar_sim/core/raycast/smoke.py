"""Smoke: where a ray enters its nearest dense smoke cell (hits get classes.SMOKE_CLASS)."""

import numpy as np


def smoke_entry(origins, dirs, cells, density, radius_scale, threshold, limit_m):
    """
    Return the range (N,) at which each ray enters its nearest dense smoke cell (inf if none).

    origins, dirs (N, 3) float64 (dirs unit); cells (K, 4): x, y, z, radius_m; density (K,). A
    cell counts for a ray when its effective density, density * (1 - (b / r)^2), is > 0 and
    >= threshold, b the ray's closest approach to the centre and r = radius_m * radius_scale: a
    ray through the middle sees the full density, one grazing the rim none. A ray starting inside
    a cell enters at 0; entries beyond limit_m (scalar or (N,)) are inf.
    """
    n = origins.shape[0]
    best = np.full(n, np.inf)
    if cells is None or len(cells) == 0 or n == 0:
        return best
    od = np.sum(origins * dirs, axis=1)[:, None]
    oo = np.sum(origins * origins, axis=1)[:, None]
    for k0 in range(0, len(cells), 32):       # chunks of cells bound the (N, K) temporaries
        c = cells[k0:k0 + 32, :3]
        r2 = (cells[k0:k0 + 32, 3] * radius_scale) ** 2
        tc = dirs @ c.T - od
        b2 = np.maximum(oo - 2.0 * (origins @ c.T) + np.sum(c * c, axis=1) - tc * tc, 0.0)
        eff = density[k0:k0 + 32] * (1.0 - b2 / r2)
        half = np.sqrt(np.maximum(r2 - b2, 0.0))
        ok = (b2 < r2) & (eff > 0.0) & (eff >= threshold) & (tc + half > 0.0)
        t_in = np.where(ok, np.maximum(tc - half, 0.0), np.inf)
        best = np.minimum(best, t_in.min(axis=1))
    return np.where(best < limit_m, best, np.inf)
