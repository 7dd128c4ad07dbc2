"""
Smoke: where a ray enters its nearest dense smoke cell (hits get labels.SMOKE_CLASS).

A sweep has ~10^5 rays and a scene up to 1024 smoke cells, so the rule is not evaluated for
every pair. First the cells that cannot stop any ray are dropped (``cells_that_can_stop``): too
thin for the threshold, or out of reach. Then the rays are cut into blocks of consecutive rays
(neighbours in a sweep's firing order point almost the same way), each block gets a bounding cone
of its directions, and a block meets only the cells whose angular size, seen from its origins,
overlaps its cone. Each (ray, cell) pair is computed the same way wherever it is evaluated, so
the entry ranges do not depend on the culling.
"""

import numpy as np
from numpy.typing import ArrayLike, NDArray

BLOCK_RAYS = 64             # rays per bounding cone
MAX_PAIRS = 1 << 22         # (ray, cell) pairs per evaluation, bounds the temporaries


def bounds(origins: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """
    Return the corners lo, hi (3,) of the box around origins (N, 3).

    One column at a time: numpy's min / max over axis 0 of an (N, 3) array walks it in an
    order that takes ~20x longer (6 ms for a 7-sub-ray VLP-16 sweep's 201,600 origins).
    """
    lo = np.array([origins[:, c].min() for c in range(3)])
    hi = np.array([origins[:, c].max() for c in range(3)])
    return lo, hi


def cells_that_can_stop(box: tuple[NDArray[np.float64], NDArray[np.float64]],
                        cells: NDArray[np.float64], density: NDArray[np.float64],
                        radius_scale: float, threshold: float, limit_m: ArrayLike
                        ) -> NDArray[np.int64]:
    """
    Return the indices of the cells that may stop a ray from within box (lo, hi) within limit_m.

    A cell whose density is below threshold (or 0) never reaches it, as its effective density
    is at most its density; one whose sphere lies farther than limit_m (the largest, for an
    array) from the box (bounds of the rays' origins) is never entered in range.
    """
    lo, hi = box
    r = cells[:, 3] * radius_scale
    gap = np.linalg.norm(np.maximum(np.maximum(lo - cells[:, :3], cells[:, :3] - hi), 0.0),
                         axis=1)
    keep = (density > 0.0) & (density >= threshold) & (gap - r < np.max(limit_m))
    return np.flatnonzero(keep)


def _entry(o: NDArray[np.float64], d: NDArray[np.float64], od: NDArray[np.float64],
           oo: NDArray[np.float64], c: NDArray[np.float64], cc: NDArray[np.float64],
           r2: NDArray[np.float64], dens: NDArray[np.float64],
           threshold: float) -> NDArray[np.float64]:
    """Return the entry ranges of rays o, d (..., 1, 3), o.d, o.o (..., 1) in cells (..., k)."""
    tc = d[..., 0] * c[..., 0] + d[..., 1] * c[..., 1] + d[..., 2] * c[..., 2] - od
    oc = o[..., 0] * c[..., 0] + o[..., 1] * c[..., 1] + o[..., 2] * c[..., 2]
    oc2 = oo - 2.0 * oc + cc
    b2 = np.maximum(oc2 - tc * tc, 0.0)
    eff = dens * (1.0 - b2 / r2)
    half = np.sqrt(np.maximum(r2 - b2, 0.0))
    # A cell around the ray's origin does not stop it (physics/smoke_inside.py: its echo and
    # its attenuation); the others stop it where it enters them.
    ok = (b2 < r2) & (eff > 0.0) & (eff >= threshold) & (tc + half > 0.0) & (oc2 >= r2)
    return np.where(ok, np.maximum(tc - half, 0.0), np.inf)


def _candidates(box: tuple[NDArray[np.float64], NDArray[np.float64]], dirs: NDArray[np.float64],
                cells: NDArray[np.float64], radius_scale: float
                ) -> tuple[NDArray[np.int64], NDArray[np.bool_], NDArray[np.bool_]]:
    """
    Return (block ray indices (B, BLOCK_RAYS), valid mask, candidate cells (B, K) bool).

    box (lo, hi): the corners of the box around the rays' origins.
    """
    n = dirs.shape[0]
    rays = np.arange(-(-n // BLOCK_RAYS) * BLOCK_RAYS).reshape(-1, BLOCK_RAYS)
    valid = rays < n
    rays = np.minimum(rays, n - 1)
    d = dirs[rays]
    axis = d.sum(axis=1)
    axis /= np.maximum(np.linalg.norm(axis, axis=1), 1e-300)[:, None]
    spread = np.arccos(np.clip(np.einsum('bij,bj->bi', d, axis).min(axis=1), -1.0, 1.0))
    lo, hi = box
    centre = 0.5 * (lo + hi)
    reach = 0.5 * np.linalg.norm(hi - lo)
    r = cells[:, 3] * radius_scale + reach
    to_cell = cells[:, :3] - centre
    dist = np.linalg.norm(to_cell, axis=1)
    near = dist <= r * (1.0 + 1e-9) + 1e-9
    size = np.arcsin(np.clip(r / np.maximum(dist, 1e-300), 0.0, 1.0))
    toward = to_cell / np.maximum(dist, 1e-300)[:, None]
    # A ray from within reach of centre that meets a cell points within size of its centre
    # direction; a block's rays lie within spread of its axis (1e-6 rad of rounding slack).
    bound = np.cos(np.minimum(size[None, :] + spread[:, None] + 1e-6, np.pi))
    return rays, valid, near[None, :] | (axis @ toward.T >= bound)


def smoke_entry(origins: NDArray[np.float64], dirs: NDArray[np.float64],
                cells: NDArray[np.float64], density: NDArray[np.float64], radius_scale: float,
                threshold: float, limit_m: ArrayLike) -> NDArray[np.float64]:
    """
    Return the range (N,) at which each ray enters its nearest dense smoke cell (inf if none).

    origins, dirs (N, 3) float64 (dirs unit); cells (K, 4): x, y, z, radius_m; density (K,). A
    cell counts for a ray when its effective density, density * (1 - (b / r)^2), is > 0 and
    >= threshold, b the ray's closest approach to the centre and r = radius_m * radius_scale: a
    ray through the middle sees the full density, one grazing the rim none. A cell around a ray's
    origin does not stop that ray (smoke_inside gives its path in it); entries beyond limit_m
    (scalar or (N,)) are inf.
    """
    n = origins.shape[0]
    best = np.full(n, np.inf)
    if cells is None or len(cells) == 0 or n == 0:
        return best
    box = bounds(origins)
    keep = cells_that_can_stop(box, cells, density, radius_scale, threshold, limit_m)
    if keep.size == 0:
        return best
    cells, density = cells[keep], density[keep]
    rays, valid, cand = _candidates(box, dirs, cells, radius_scale)
    od = np.sum(origins * dirs, axis=1)
    oo = np.sum(origins * origins, axis=1)
    c = cells[:, :3]
    cc = c[:, 0] * c[:, 0] + c[:, 1] * c[:, 1] + c[:, 2] * c[:, 2]
    r2 = (cells[:, 3] * radius_scale) ** 2
    count = cand.sum(axis=1)
    # Blocks with a like number of candidate cells go together, padded to the most of them.
    group = np.ceil(np.log2(np.maximum(count, 1))).astype(np.int64)
    for g in np.unique(group[count > 0]):
        blocks = np.flatnonzero((group == g) & (count > 0))
        width = int(count[blocks].max())
        order = np.argsort(~cand[blocks], axis=1, kind='stable')[:, :width]
        pad = np.arange(width)[None, :] >= count[blocks][:, None]
        step = max(1, MAX_PAIRS // (BLOCK_RAYS * width))
        for s in range(0, len(blocks), step):
            b, k, p = blocks[s:s + step], order[s:s + step], pad[s:s + step]
            ray = rays[b]
            t = _entry(origins[ray][..., None, :], dirs[ray][..., None, :],
                       od[ray][..., None], oo[ray][..., None], c[k][:, None], cc[k][:, None],
                       r2[k][:, None], np.where(p, 0.0, density[k])[:, None], threshold)
            ok = valid[b]
            best[ray[ok]] = t.min(axis=2)[ok]
    return np.where(best < limit_m, best, np.inf)


def smoke_inside(origins: NDArray[np.float64], dirs: NDArray[np.float64],
                 cells: NDArray[np.float64] | None, density: NDArray[np.float64],
                 radius_scale: float, threshold: float
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """
    Return the smoke cells around the rays' origins: effective density (N, J), exit range (N, J).

    J = the cells (of cells (K, 4), density (K,)) around at least one origin (0 when none).
    For ray i and cell j around its origin: the effective density of the entry rule
    (density (1 - (b / r)^2), b the closest approach of the ray's line to the centre) where it
    is > 0 and >= threshold, else 0, and the range (m) at which the ray leaves the sphere.
    The effective density is 0 where the origin lies outside the cell.
    """
    n = origins.shape[0]
    if cells is None or len(cells) == 0 or n == 0:
        return np.zeros((n, 0)), np.zeros((n, 0))
    r = cells[:, 3] * radius_scale
    lo, hi = bounds(origins)
    gap = np.linalg.norm(np.maximum(np.maximum(lo - cells[:, :3], cells[:, :3] - hi), 0.0),
                         axis=1)
    near = np.flatnonzero((gap < r) & (density > 0.0) & (density >= threshold))
    c, r2, dens = cells[near, :3], r[near] ** 2, density[near]
    to_c = c[None, :, :] - origins[:, None, :]                   # (N, J, 3)
    oc2 = np.einsum('njk,njk->nj', to_c, to_c)
    tc = np.einsum('njk,nk->nj', to_c, dirs)
    b2 = np.maximum(oc2 - tc * tc, 0.0)
    eff = dens[None, :] * (1.0 - b2 / r2[None, :])
    inside = (oc2 < r2[None, :]) & (eff > 0.0) & (eff >= threshold)
    keep = np.flatnonzero(inside.any(axis=0))
    exit_m = tc + np.sqrt(np.maximum(r2[None, :] - b2, 0.0))
    return (np.where(inside, eff, 0.0)[:, keep], np.where(inside, exit_m, 0.0)[:, keep])
