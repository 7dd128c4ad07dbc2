"""
The ray-casting backend seam: what the tracer asks of a caster, and how a World gets one.

A caster is built once per world from its ``Geometry`` list (object index = list position) and
answers one question: the first triangle each ray meets, with a set of objects left out. Multi-hit
traces, foliage, smoke, exact quadrics and texture are the tracer's work (raycast/tracer.py), so a
new backend implements ``cast_rays`` only. ``raycast/open3d_caster.py`` is the default backend.
"""

from collections.abc import Callable, Sequence
from typing import NamedTuple, Protocol

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.raycast.geometry import Geometry


class CastResult(NamedTuple):
    """
    The first triangle met by each of M rays (plain numpy arrays, row m for ray m).

    t (M,) float32 or float64 distance along the unit direction (inf for a miss); obj (M,) int32
    object index (-1 for a miss); primitive (M,) integer triangle index within the object's
    ``Geometry.triangles`` (any value for a miss); normal (M, 3) float32 or float64 unit normal of
    that triangle, on the side its winding makes outward (any value for a miss).
    """

    t: NDArray[np.floating]
    obj: NDArray[np.int32]
    primitive: NDArray[np.integer]
    normal: NDArray[np.floating]


class Caster(Protocol):
    """A ray-casting backend over a fixed list of world objects (see the module docstring)."""

    def cast_rays(self, rays: NDArray[np.float32],
                  ignored: frozenset[int] = frozenset()) -> CastResult:
        """
        Cast rays (M, 6) float32 (origin xyz, unit direction xyz, world frame) once each.

        Objects whose index is in ``ignored`` are not hit. A hit at t = 0 (a ray starting on a
        triangle) may or may not be reported; the tracer does not rely on either.
        """


# Builds a caster from a world's geometries: World.load(..., caster=factory). A class whose
# constructor takes the list qualifies; keep it importable at module level so worlds pickle.
CasterFactory = Callable[[Sequence[Geometry]], Caster]
