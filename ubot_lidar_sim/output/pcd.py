"""
PCD files (Point Cloud Library format, version 0.7): one binary file per sweep, written by pypcd4.

The PCD header declares each field's name, SIZE (bytes), TYPE (F float, U unsigned, I signed)
and COUNT; ``DATA binary`` stores the records packed, in the order of the header
(pointclouds.org, "The PCD (Point Cloud Data) file format"). The file holds the fields of the
sensor's ``point_layout`` (core/sensors/point_layouts.py), in the sensor frame, with the header's
default VIEWPOINT (0 0 0 1 0 0 0). Types PCD has: F of 4 or 8 bytes, U and I of 1, 2, 4 or 8
bytes; a layout field of any other type (float16, say) is refused before a sweep is computed.
"""

from pathlib import Path
from typing import Union

import numpy as np
from pypcd4 import pypcd4

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.sensors.point_layouts import LAYOUT_DTYPES

#: numpy element type -> (PCD TYPE, SIZE): pypcd4's own table, the types of the PCD format.
PCD_TYPES = pypcd4.NUMPY_TYPE_TO_PCD_TYPE


def check_dtype(dtype: np.dtype, layout: str) -> None:
    """Raise ConfigError('point_layout', ...) when a field of dtype has no PCD type."""
    for name in dtype.names:
        field = dtype.fields[name][0]
        if field.subdtype is not None or np.dtype(field.str) not in PCD_TYPES:
            raise ConfigError('point_layout', layout,
                              f'a layout whose fields PCD can hold (field {name!r} is '
                              f'{field.str}; PCD has float32/64 and (u)int8/16/32/64)')


def check_layout(point_layout: str) -> None:
    """Raise ConfigError('point_layout', ...) when PCD cannot hold a lidar point layout."""
    check_dtype(LAYOUT_DTYPES[point_layout], point_layout)


def save_pcd(path: Union[str, Path], points: np.ndarray, layout: str = 'full',
             height: int = 1) -> None:
    """
    Write a structured point array (P,) as a binary PCD, one PCD field per array field.

    height > 1: an organised cloud of height rows (WIDTH P / height, HEIGHT height), as PCL
    writes one (the ouster layout's rows; empty cells NaN).

    Not atomic by itself: files.write_pcd_result and staged trees call it on temporary names.
    """
    points = np.ascontiguousarray(points)
    check_dtype(points.dtype, layout)
    types = [PCD_TYPES[np.dtype(points.dtype.fields[n][0].str)] for n in points.dtype.names]
    meta = pypcd4.MetaData(fields=points.dtype.names, size=tuple(s for _, s in types),
                           type=tuple(t for t, _ in types), count=(1,) * len(types),
                           points=len(points), width=len(points) // height, height=height,
                           data=pypcd4.Encoding.BINARY)
    pypcd4.PointCloud(meta, points).save(str(path), encoding=pypcd4.Encoding.BINARY)
