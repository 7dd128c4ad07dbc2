"""
A sweep over several processes: where to cut its beams, and joining the parts' results.

parts.py says what crosses the cuts so that the parts give the bytes of the whole sweep.
"""

from typing import Optional, Sequence

import numpy as np

from ubot_lidar_sim.core.sensors.lidar import ScanResult
from ubot_lidar_sim.output.layouts import concat_records


def merge_parts(results: Sequence[ScanResult]) -> ScanResult:
    """
    Join the ScanResults of consecutive beam ranges of one sweep (in beam order) into one.

    timing_ms holds, per phase, the slowest part's time.
    """
    if len(results) == 1:
        return results[0]
    first = results[0]
    timing = {key: max(r.timing_ms.get(key, 0.0) for r in results) for key in first.timing_ms}
    return ScanResult(
        points=concat_records([r.points for r in results]),
        beam=np.concatenate([r.beam for r in results]), stamp_s=first.stamp_s,
        sensor_pose=first.sensor_pose, n_beams=sum(r.n_beams for r in results),
        too_close=np.concatenate([r.too_close for r in results]),
        hit_range_m=np.concatenate([r.hit_range_m for r in results]),
        n_echoes=sum(r.n_echoes for r in results), timing_ms=timing)


def split_beams(n_beams: int, parts_n: int, cost: Optional[np.ndarray] = None) -> np.ndarray:
    """
    Split beams 0..n_beams into parts_n contiguous ranges of about equal cost; (parts_n + 1,).

    cost (B,) a per-beam weight (e.g. the last sweep's hits); None: equal beams. Every range
    has at least one beam when n_beams >= parts_n.
    """
    parts_n = max(1, min(int(parts_n), max(int(n_beams), 1)))
    if cost is None or np.shape(cost) != (n_beams,):
        bounds = np.linspace(0, n_beams, parts_n + 1).round().astype(np.int64)
    else:
        cum = np.cumsum(np.asarray(cost, dtype=np.float64))
        total = cum[-1] if cum.size else 0.0
        targets = total * np.arange(1, parts_n) / parts_n
        inner = np.searchsorted(cum, targets, side='left') + 1 if total > 0 else \
            np.linspace(0, n_beams, parts_n + 1).round().astype(np.int64)[1:-1]
        bounds = np.concatenate([[0], inner, [n_beams]]).astype(np.int64)
    # Keep the ranges non-empty: bounds - k non-decreasing and at most n_beams - parts_n.
    step = np.arange(parts_n + 1)
    bounds = np.maximum.accumulate(np.clip(bounds, 0, n_beams) - step) + step
    return np.minimum(bounds, max(n_beams - parts_n, 0) + step)
