"""
Numpy values as JSON types.

A module of its own, so that ``describe`` writes JSON without loading pypcd4 or numba.
"""

from typing import Any

import numpy as np


def jsonable(value: Any) -> Any:
    """Return value with numpy arrays, numpy scalars and tuples turned into JSON types."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    return value
