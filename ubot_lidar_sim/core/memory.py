"""Memory tuning of a process that computes sweeps (glibc malloc thresholds)."""

import ctypes
import sys

_MALLOC_TUNED = []


def keep_freed_memory() -> None:
    """
    Let glibc malloc keep freed scan buffers for the next scan instead of returning them.

    A sweep allocates and frees hundreds of arrays of 0.1-30 MB; by default glibc maps the large
    ones afresh each time and the kernel zero-fills every page again (tens of thousands of page
    faults per sweep, ~10-15 % of its CPU time). With the mmap threshold at its 32 MB maximum,
    a 1 GB trim threshold and a 64 MB top pad the pages are reused. Process-wide and harmless
    elsewhere; a no-op off glibc. Called once by the first LidarSimulator.
    """
    if _MALLOC_TUNED or not sys.platform.startswith('linux'):
        return
    _MALLOC_TUNED.append(True)
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3   # glibc malloc.h
    mallopt(m_mmap_threshold, 32 << 20)
    mallopt(m_trim_threshold, 1 << 30)
    mallopt(m_top_pad, 64 << 20)
