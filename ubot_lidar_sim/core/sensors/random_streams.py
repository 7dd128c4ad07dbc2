"""
The random streams of a LiDAR sweep: one table, the keys scan_rng derives from it.

A sweep draws from these streams only; describe() prints the table. Stream k is the k-th
entry of STREAMS; adding a stream appends to it, so that the others keep their draws.
"""

from typing import Optional
import zlib

import numpy as np

#: (name, what it draws), stream k = index k.
STREAMS = (
    ('noise', 'detection and range noise of the echoes'),
    ('clutter', 'the clutter of the air: rain drops'),
    ('roughness', 'the ground roughness, one normal per beam'),
    ('snow', 'the snow flakes'),
    ('fog', "the fog's pulse factor"),
    ('calibration', 'the per-laser calibration residuals, keyed by (calibration_serial, '
     'sensor, 0): fixed for a sensor instance'),
    ('false_alarm', "the background's false alarms: event and range per beam"),
)
STREAM = {name: k for k, (name, _) in enumerate(STREAMS)}
(STREAM_NOISE, STREAM_CLUTTER, STREAM_ROUGHNESS, STREAM_SNOW, STREAM_FOG, STREAM_CALIBRATION,
 STREAM_FALSE_ALARM) = (STREAM[n] for n in ('noise', 'clutter', 'roughness', 'snow', 'fog',
                                            'calibration', 'false_alarm'))


def scan_rng(seed: int, sensor_id: str, scan_index: int, stream: int,
             block: Optional[int] = None) -> np.random.Generator:
    """
    Return the Generator of one random stream of one scan (docs/architecture.md).

    block: the column block of a sweep cut in blocks (column_blocks.py), a fifth key entry.
    """
    key = [int(seed), zlib.crc32(sensor_id.encode('utf-8')), int(scan_index), int(stream)]
    if block is not None:
        key.append(int(block))
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(key)))


def describe_streams() -> str:
    """Return the streams as text: '0 noise (...), 1 clutter (...), ...'."""
    return ', '.join(f'{k} {name} ({what})' for k, (name, what) in enumerate(STREAMS))
