"""
The geometry a world hands to ray casting: world-frame triangles per object, plus its exact shape.

Spheres and cylinders are cast as tessellated triangles; ``kind`` and the shape fields let the
tracer move their hits onto the analytic surface (raycast/quadrics.py) and find where a ray
leaves a closed volume without casting again (raycast/volumes.py).
"""

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

KIND_MESH, KIND_SPHERE, KIND_CYLINDER, KIND_BOX = 0, 1, 2, 3


@dataclass(frozen=True)
class Geometry:
    """
    World-frame triangles of one object plus its analytic shape (spheres, cylinders, boxes).

    vertices (V, 3) float64, triangles (T, 3) int64. For a cylinder the first ``n_side`` triangles
    are the side wall; ``axis`` is its unit axis and ``half_height_m`` half its length. A box has
    its centre, ``frame`` (3, 3) whose columns are its world-frame axes, and ``half_size_m`` (3,)
    along them. closed: the triangles bound a volume (box, sphere, cylinder).
    """

    vertices: NDArray[np.float64]
    triangles: NDArray[np.int64]
    kind: int = KIND_MESH
    closed: bool = False
    center: NDArray[np.float64] = field(default_factory=lambda: np.zeros(3))
    axis: NDArray[np.float64] = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    radius_m: float = 0.0
    half_height_m: float = 0.0
    n_side: int = 0
    frame: NDArray[np.float64] = field(default_factory=lambda: np.eye(3))
    half_size_m: NDArray[np.float64] = field(default_factory=lambda: np.zeros(3))
