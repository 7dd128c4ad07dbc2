"""The ways a compute process fails (worker.py), as the errors its callers catch."""

from ubot_lidar_sim.core.errors import ScanError


class ScanProcessError(ScanError):
    """The compute process failed (exited, hung or refused a request)."""


class ScanProcessExited(ScanProcessError):
    """A compute process exited or was killed; the next call starts new ones."""


class ScanProcessHung(ScanProcessError):
    """A compute process did not answer in time (stopped, hung); it was killed."""


class ScanProcessStarting(ScanProcessError):
    """The compute processes are still starting (only with wait_for_start false)."""
