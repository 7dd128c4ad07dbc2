"""
Skip accounting of a sensor node and its /diagnostics status.

Every scan either publishes or is skipped for a reason (the diagnostics key): 'no_subscribers',
'overrun', 'busy', 'no_transform', 'stale_transform', 'error', ... ``ScanStats`` counts both and
turns the counts into one DiagnosticStatus: OK 'publishing' only while the measured rate is
within RATE_WARN_FRACTION of the target, every text value cut to MAX_TEXT characters.
"""

from collections import deque
import time

from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

WARN_THROTTLE_S = 5.0
RATE_WARN_FRACTION = 0.8    # a publishing node below 80 % of its target rate is WARN
RATE_WINDOW_S = 2.0         # the measured rate spans this, or three periods when longer
MAX_TEXT = 400              # characters of a status message or value (a frame list can be huge)


def shorten(text, limit=MAX_TEXT):
    """Return text cut to limit characters, saying how many were left out."""
    text = str(text)
    if len(text) <= limit:
        return text
    return f'{text[:limit]}... ({len(text) - limit} more characters)'


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
    'compute_ms' (last 50), 'points' (of the last scan), 'tf_rejected', 'env_rejected',
    'clock_jumps'. ``now_s``: the clock of the target rate (the node's: wall or /clock), s.
    """

    def __init__(self, logger, period_s=1.0, now_s=time.monotonic):
        self._logger = logger
        self._now_s = now_s
        self.window_s = max(RATE_WINDOW_S, 3.0 * period_s)
        self.counts = {'published': 0, 'skipped': {}, 'last_skip': '',
                       'compute_ms': deque(maxlen=50), 'points': 0, 'tf_rejected': 0,
                       'env_rejected': 0, 'last_status': '', 'clock_jumps': 0}
        self._pub_times = deque(maxlen=200)
        self._idle = False

    def idle(self, idle):
        """Log one line when the node starts to idle for want of a subscriber (once per spell)."""
        if idle and not self._idle:
            self._logger.info('idle: nobody subscribes to its output yet; sweeping starts when a '
                              'subscriber matches (~/sample scans on demand)')
        self._idle = idle

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
            self._logger.warning(shorten(f'scan skipped ({reason}): {detail}'),
                                 throttle_duration_sec=WARN_THROTTLE_S)
        return False, f'{reason}: {detail}'

    def published(self, n, compute_ms):
        """Count one published scan of n points (or rays) that took compute_ms."""
        self.counts['compute_ms'].append(compute_ms)
        self.counts['points'] = int(n)
        self.counts['published'] += 1
        self.counts['last_status'] = 'ok'
        self._pub_times.append(self._now_s())

    def clock_jumped(self):
        """Count a clock jump and forget the publish times (they are on the old time line)."""
        self.counts['clock_jumps'] += 1
        self._pub_times.clear()

    def measured_rate_hz(self):
        """Return the publish rate over the last window_s of the node's clock (Hz)."""
        now = self._now_s()
        # list() copies the deque in one step under the GIL; iterating it directly raced
        # with the scan thread's append (RuntimeError: deque mutated during iteration).
        recent = [t for t in list(self._pub_times) if 0.0 <= now - t <= self.window_s]
        if len(recent) < 2:
            return 0.0
        return (len(recent) - 1) / max(recent[-1] - recent[0], 1e-9)

    def status(self, name, hardware_id, target_rate_hz, extra=(), warnings=()):
        """
        Return the DiagnosticStatus: level and message, the counts, then the extra pairs.

        The level comes from the last scan and the measured rate; ``warnings`` are texts that
        make it at least WARN (they lead the message).
        """
        s = self.counts
        ms = list(s['compute_ms'])
        status = DiagnosticStatus(name=name, hardware_id=hardware_id)
        last = s['last_status']
        rate = self.measured_rate_hz()
        if last == 'ok' and s['published'] >= 2 and rate < RATE_WARN_FRACTION * target_rate_hz:
            status.level = DiagnosticStatus.WARN
            status.message = (f'publishing below the target rate: {rate:.2f} Hz of '
                              f'{target_rate_hz:.2f} Hz')
        elif last in ('ok', 'no_subscribers', ''):
            status.level = DiagnosticStatus.OK
            status.message = {'ok': 'publishing', 'no_subscribers': 'idle: no subscribers',
                              '': 'waiting for the first scan'}[last]
        else:
            status.level = DiagnosticStatus.ERROR if last == 'error' else DiagnosticStatus.WARN
            status.message = f'skipping scans: {s["last_skip"]}'
        if warnings:
            status.level = max(status.level, DiagnosticStatus.WARN)
            status.message = '; '.join(list(warnings) + [status.message])
        status.message = shorten(status.message)
        values = [
            ('rate_hz', f'{rate:.2f}'),
            ('target_rate_hz', f'{target_rate_hz:.2f}'),
            ('compute_ms_last', f'{ms[-1]:.2f}' if ms else 'nan'),
            ('compute_ms_mean', f'{sum(ms) / len(ms):.2f}' if ms else 'nan'),
            ('points_last', str(s['points'])),
            ('scans_published', str(s['published'])),
            ('scans_skipped', str(sum(s['skipped'].values()))),
            ('last_skip', s['last_skip']),
            ('transforms_rejected', str(s['tf_rejected'])),
            ('environment_rejected', str(s['env_rejected'])),
            ('clock_jumps', str(s['clock_jumps'])),
        ] + [(f'skipped.{k}', str(v)) for k, v in sorted(s['skipped'].items())]
        values += list(extra)
        status.values = [KeyValue(key=k, value=shorten(v)) for k, v in values]
        return status
