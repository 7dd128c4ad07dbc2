"""Child processes that end with their parent (Linux PR_SET_PDEATHSIG)."""

import ctypes
import signal

_PR_SET_PDEATHSIG = 1       # linux/prctl.h


def die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the parent's thread that started it ends."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass        # not Linux: the parent's own clean-up still stops its children
