"""
Progress of a dataset run on stderr: sequences done, frames/s, ETA (tqdm when installed).

Frames are the lead sensor's sweeps, as the spec's ``frames`` counts them. The sweeps inside
the running sequences show too: in process (``--workers 1``) as they end, from Ray workers
through a counter actor polled every half second (dataset/ray_pool.py). Without tqdm a plain
line is rewritten in place on a terminal, and printed once per sequence otherwise.
"""

import sys
import time


class Progress:
    """Sequences done of ``total`` (``done`` already there), frames/s and ETA."""

    def __init__(self, total, done=0, enabled=True, stream=None):
        self.total, self.done, self.enabled = total, done, enabled
        self.stream = stream or sys.stderr
        self.frames, self._new = 0, 0
        self._t0 = time.perf_counter()
        self._bar = None
        if enabled:
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self._bar = tqdm(total=total, initial=done, unit='seq', desc='sequences',
                                 file=self.stream, dynamic_ncols=True, smoothing=0.0)

    def sweeps(self, name, total):
        """Return on_sweep() for the running sequence: its sweeps done of total, shown live."""
        count = [0]

        def on_sweep():
            count[0] += 1
            if not self.enabled:
                return
            self._show(f'{name}: sweep {count[0]}/{total}')
        return on_sweep

    def worker_sweeps(self, total):
        """Return on_sweeps(counts) for Ray workers: sweeps done of total, over every sequence."""
        def on_sweeps(counts):
            if not self.enabled:
                return
            self._show(f'sweeps {sum(counts.values())}/{total}')
        return on_sweeps

    def _show(self, text):
        """Show text beside the bar (or the plain line on a terminal) of the sequences."""
        if self._bar is not None:
            self._bar.set_postfix_str(text)
        elif self.stream.isatty():
            self.stream.write(f'{self.line(self._rate())}  {text}\r')
            self.stream.flush()

    def _rate(self):
        return self.frames / max(time.perf_counter() - self._t0, 1e-9)

    def update(self, frames):
        """Count one more finished sequence of ``frames`` frames."""
        self.done += 1
        self._new += 1
        self.frames += frames
        if not self.enabled:
            return
        rate = self._rate()
        if self._bar is not None:
            self._bar.set_postfix_str(f'{rate:.1f} frames/s', refresh=False)
            self._bar.update(1)
            return
        self.stream.write(self.line(rate) + ('\r' if self.stream.isatty() else '\n'))
        self.stream.flush()

    def line(self, rate):
        """Return the plain progress line."""
        elapsed = time.perf_counter() - self._t0
        left = self.total - self.done
        eta = elapsed / self._new * left if self._new else float('nan')
        eta_text = time.strftime('%H:%M:%S', time.gmtime(eta)) if eta == eta else '?'
        return (f'sequences {self.done}/{self.total}  {rate:.1f} frames/s  ETA {eta_text}')

    def close(self):
        """End the bar (newline)."""
        if self._bar is not None:
            self._bar.close()
        elif self.enabled and self.stream.isatty():
            self.stream.write('\n')
