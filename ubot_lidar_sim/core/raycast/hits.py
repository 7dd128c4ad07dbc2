"""The record a trace returns: every surface the rays met, flat and sorted by (ray, range)."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray


@dataclass(frozen=True)
class Hits:
    """
    Surfaces met by a set of rays, flat and sorted by (ray, range); H rows.

    ray (H,) int64 index of the ray; range_m (H,) float64 along the unit direction; point (H, 3)
    float64 world; normal (H, 3) float32 world, unit, facing the ray (micro-relief applied);
    cos_inc (H,) float32 |cos| of incidence; material (H,) uint8 material byte; class_id (H,)
    uint16 (core/class_ids.py); foliage, ground (H,) bool flags of the object hit; albedo (H,)
    float32 ground-texture multiplier (1 off the ground); smoke (H,) bool; obj (H,) int32 object
    index (-1 for smoke); instance_id (H,) uint16: 0 the static world and smoke, 1.. the world's
    actors (None: all 0).
    point and normal are None when the trace was asked not to compute them.
    """

    ray: NDArray[np.int64]
    range_m: NDArray[np.float64]
    point: NDArray[np.float64] | None
    normal: NDArray[np.float32] | None
    cos_inc: NDArray[np.float32]
    material: NDArray[np.uint8]
    class_id: NDArray[np.uint16]
    foliage: NDArray[np.bool_]
    ground: NDArray[np.bool_]
    albedo: NDArray[np.float32]
    smoke: NDArray[np.bool_]
    obj: NDArray[np.int32]
    instance_id: NDArray[np.uint16] | None = None

    def __len__(self) -> int:
        """Return the number of hits H."""
        return int(self.ray.shape[0])


def take_hits(hits: Hits, rows: ArrayLike) -> Hits:
    """Return the rows (K,) int of hits, as a Hits."""
    def pick(x: object) -> NDArray[Any] | None:
        return None if x is None else np.asarray(x)[rows]
    return Hits(*(pick(getattr(hits, f)) for f in Hits.__dataclass_fields__))


def concat_hits(parts: Sequence[tuple[Hits, NDArray[np.int64]]]) -> Hits:
    """
    Join (Hits, ray ids (H,)) parts into one Hits sorted by ray id, ray = those ids.

    No ray id is in two parts, and each part keeps a ray's rows in range order.
    """
    ids = np.concatenate([p[1] for p in parts])
    order = np.argsort(ids, kind='stable')

    def join(name: str) -> NDArray[Any] | None:
        cols = [getattr(h, name) for h, _ in parts]
        if any(c is None for c in cols):
            return None
        return np.concatenate([np.asarray(c) for c in cols])[order]

    fields = {f: join(f) for f in Hits.__dataclass_fields__ if f != 'ray'}
    return Hits(ray=ids[order], **fields)
