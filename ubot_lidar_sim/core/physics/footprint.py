"""
The beam's footprint as sub-rays: their pattern, weights and directions around each beam.

A beam diverges (docs/physics.md, "Beam divergence and sub-rays"); the model samples its
footprint with 1 or 7 sub-rays, each carrying a share of the pulse energy.
"""

import math
from typing import Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.errors import ScanError


def sub_ray_pattern(sub_rays: int, divergence_mrad: float,
                    ) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
    """
    Return the sub-ray pattern: offsets (S, 2) rad and weights (S,).

    docs/physics.md, "Beam divergence and sub-rays".

    The offsets lie in the beam's perpendicular plane (see sub_ray_directions).

    1: the centre, weight 1. 7: the centre (0.25) plus six rays on a hexagon of radius
    0.35 x divergence (0.125 each).
    """
    if sub_rays == 1:
        return np.zeros((1, 2)), np.ones(1)
    if sub_rays != 7:
        raise ScanError(f'sub_rays: got {sub_rays!r}, allowed 1 or 7')
    radius = 0.35 * divergence_mrad * 1e-3
    ang = np.arange(6) * (math.pi / 3.0)
    ring = radius * np.stack([np.cos(ang), np.sin(ang)], axis=1)
    offsets = np.vstack([np.zeros((1, 2)), ring])
    weights = np.concatenate([[0.25], np.full(6, 0.125)])
    return offsets, weights


def perpendicular_basis(dirs: ArrayLike) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
    """
    Two unit vectors orthogonal to each unit direction: u horizontal, v = d x u ((N, 3) each).

    u = z x d normalised (the azimuth direction); along +-z it falls back to x x d.
    """
    d = np.asarray(dirs, dtype=np.float64)
    u = np.stack([-d[:, 1], d[:, 0], np.zeros(len(d))], axis=1)  # z x d
    norm = np.linalg.norm(u, axis=1)
    vertical = norm < 1e-9
    if np.any(vertical):
        u[vertical] = np.cross(np.array([1.0, 0.0, 0.0]), d[vertical])
        norm[vertical] = np.linalg.norm(u[vertical], axis=1)
    u /= norm[:, None]
    v = np.cross(d, u)
    return u, v


def sub_ray_directions(dirs: ArrayLike, offsets: ArrayLike) -> NDArray[np.float64]:
    """
    Sub-ray unit directions (B * S, 3); sub-ray k of beam b at row b * S + k.

    Offset (a, b) turns the beam by the angle |(a, b)| towards a u + b v (u, v from
    perpendicular_basis), so the six hexagon rays sit exactly 0.35 x divergence off the centre.
    """
    d = np.asarray(dirs, dtype=np.float64)
    off = np.asarray(offsets, dtype=np.float64)
    if off.shape[0] == 1 and not np.any(off):
        return d.copy()
    u, v = perpendicular_basis(d)
    ang = np.hypot(off[:, 0], off[:, 1])
    unit = off / np.where(ang > 0.0, ang, 1.0)[:, None]
    cos_a = np.cos(ang)[None, :, None]
    sin_a = np.sin(ang)[None, :, None]
    side = unit[None, :, 0, None] * u[:, None, :] + unit[None, :, 1, None] * v[:, None, :]
    out = cos_a * d[:, None, :] + sin_a * side
    return out.reshape(-1, 3)
