"""``scan --frames N``'s progress on stderr: lead sweeps done, then a one-line summary."""

import sys
import time

import numpy as np


class SweepProgress:
    """Count the lead sensor's sweeps (the --frames count) of a scan; on_frame of a TappedRig."""

    def __init__(self, total, lead, stream=None):
        self.total, self.lead, self.stream = total, lead, stream or sys.stderr
        self.done, self.points = 0, 0
        self._t0 = time.perf_counter()
        self._tty = self.stream.isatty()

    def __call__(self, fr):
        """Count one frame; on a terminal, rewrite the progress line (a log gets the summary)."""
        points = getattr(fr.result, 'points', None)
        ranges = getattr(fr.result, 'ranges', None)
        if points is not None:
            self.points += len(points)
        elif ranges is not None:    # a LaserScan: each finite range is a point (REP 117)
            self.points += int(np.isfinite(ranges).sum())
        if fr.sensor.name != self.lead:
            return
        self.done += 1
        if self._tty:
            rate = self.done / max(time.perf_counter() - self._t0, 1e-9)
            self.stream.write(f'scan: sweep {self.done}/{self.total} of {self.lead}, '
                              f'{rate:.1f} sweeps/s\r')
            self.stream.flush()

    def summary(self, files):
        """Return the one-line summary of the scan."""
        wall = time.perf_counter() - self._t0
        return (f'scan: {self.done} sweeps of {self.lead} ({self.points} returns: points and '
                f'ranges hit, every sensor) '
                f'in {wall:.1f} s, {self.done / max(wall, 1e-9):.1f} sweeps/s; '
                f'{len(files)} file(s) written')


def chain(*callbacks):
    """Return one on_frame calling each of callbacks (None skipped) in turn."""
    calls = [c for c in callbacks if c is not None]

    def on_frame(fr):
        for c in calls:
            c(fr)
    return on_frame
