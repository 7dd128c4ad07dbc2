"""
Skip accounting of a sensor node and its /diagnostics status.

Every scan either publishes or is skipped for a reason (the diagnostics key): 'no_subscribers',
'overrun', 'busy', 'no_transform', 'stale_transform', 'error', ... ``ScanStats`` counts both and
turns the counts into one DiagnosticStatus.
"""

from collections import deque
import time

from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

WARN_THROTTLE_S = 5.0


class SkipScan(Exception):
    """Raised by a sensor to skip this scan; ``reason`` is the diagnostics key."""

    def __init__(self, reason, detail='', warn=True):
        super().__init__(f'{reason}: {detail}' if detail else reason)
        self.reason = reason
        self.detail = detail
        self.warn = warn


class ScanStats:
    """
    Published and skipped scans of one node, compute times and rejected inputs.

    ``counts`` is a dict: 'published', 'skipped' ({reason: n}), 'last_skip', 'last_status',
    'compute_ms' (last 50), 'points' (of the last scan), 'tf_rejected', 'env_rejected'.
    """

    def __init__(self, logger):
        self._logger = logger
        self.counts = {'published': 0, 'skipped': {}, 'last_skip': '',
                       'compute_ms': deque(maxlen=50), 'points': 0, 'tf_rejected': 0,
                       'env_rejected': 0, 'last_status': ''}
        self._pub_times = deque(maxlen=200)

    def count(self, reason, n=1):
        """Count n skipped scans for reason (no warning)."""
        skipped = self.counts['skipped']
        skipped[reason] = skipped.get(reason, 0) + n

    def skip(self, reason, detail, warn=True):
        """Count one skipped scan, warn (throttled) unless warn is false; return (False, text)."""
        self.count(reason)
        self.counts['last_skip'] = f'{reason}: {detail}'
        self.counts['last_status'] = reason
        if warn:
            self._logger.warning(f'scan skipped ({reason}): {detail}',
                                 throttle_duration_sec=WARN_THROTTLE_S)
        return False, f'{reason}: {detail}'

    def published(self, n, compute_ms):
        """Count one published scan of n points (or rays) that took compute_ms."""
        self.counts['compute_ms'].append(compute_ms)
        self.counts['points'] = int(n)
        self.counts['published'] += 1
        self.counts['last_status'] = 'ok'
        self._pub_times.append(time.monotonic())

    def measured_rate_hz(self):
        """Return the publish rate over the last 2 s (Hz)."""
        now = time.monotonic()
        # list() copies the deque in one step under the GIL; iterating it directly raced
        # with the scan thread's append (RuntimeError: deque mutated during iteration).
        recent = [t for t in list(self._pub_times) if now - t <= 2.0]
        if len(recent) < 2:
            return 0.0
        return (len(recent) - 1) / max(recent[-1] - recent[0], 1e-9)

    def status(self, name, hardware_id, target_rate_hz, extra=()):
        """Return the DiagnosticStatus: level from the last scan, the counts, then extra pairs."""
        s = self.counts
        ms = list(s['compute_ms'])
        status = DiagnosticStatus(name=name, hardware_id=hardware_id)
        last = s['last_status']
        if last in ('ok', 'no_subscribers', ''):
            status.level = DiagnosticStatus.OK
            status.message = {'ok': 'publishing', 'no_subscribers': 'idle: no subscribers',
                              '': 'waiting for the first scan'}[last]
        else:
            status.level = DiagnosticStatus.ERROR if last == 'error' else DiagnosticStatus.WARN
            status.message = f'skipping scans: {s["last_skip"]}'
        values = [
            ('rate_hz', f'{self.measured_rate_hz():.2f}'),
            ('target_rate_hz', f'{target_rate_hz:.2f}'),
            ('compute_ms_last', f'{ms[-1]:.2f}' if ms else 'nan'),
            ('compute_ms_mean', f'{sum(ms) / len(ms):.2f}' if ms else 'nan'),
            ('points_last', str(s['points'])),
            ('scans_published', str(s['published'])),
            ('scans_skipped', str(sum(s['skipped'].values()))),
            ('last_skip', s['last_skip']),
            ('transforms_rejected', str(s['tf_rejected'])),
            ('environment_rejected', str(s['env_rejected'])),
        ] + [(f'skipped.{k}', str(v)) for k, v in sorted(s['skipped'].items())]
        values += list(extra)
        status.values = [KeyValue(key=k, value=v) for k, v in values]
        return status
