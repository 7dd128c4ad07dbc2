"""
The node's clock read against the steady clock: clock jumps and a pause.

The sweep clock (sweep_clock.py) ticks ``TimerSchedule`` once per sweep with the newest pose's
time. A node that fell behind skips periods (overrun); a jump of the node's clock (an NTP step
of the system time, a /clock publisher that seeks) moves that time as well, but no sweep was
due in between: ``TimerSchedule`` tells the two apart by comparing the step of the node's clock
with the step of the steady clock. ``ClockWatch`` sees a simulated clock that has stopped
advancing.
"""

CLOCK_JUMP_S = 1.0      # the node's clock moved this much more than expected: a jump


class TimerSchedule:
    """
    Jumps of the node's clock, from the scheduled next call of a timer of period_s at each tick.

    ``tick(next_ns, steady_ns)`` returns the jump in s or 0.0. The node's clock
    may run at a steady multiple of real time (a simulation faster than real time): that
    speed is learnt from the ticks, and only a step more than CLOCK_JUMP_S beyond it is a jump.
    """

    def __init__(self, period_s):
        self.period_s = float(period_s)
        self._last = None       # (scheduled next call on the node's clock, steady time), ns
        self._clock_s = self._steady_s = 1.0   # decaying sums of normal steps: the speed

    def reset(self):
        """Forget the last tick (after a jump the schedule starts again)."""
        self._last = None

    def tick(self, next_ns, steady_ns):
        """Return the clock jump in s: > 0 forward, < 0 backward, else 0.0."""
        last, self._last = self._last, (next_ns, steady_ns)
        if last is None:
            return 0.0
        d_clock = (next_ns - last[0]) * 1e-9
        d_steady = max((steady_ns - last[1]) * 1e-9, 0.0)
        if d_clock < -CLOCK_JUMP_S:
            return d_clock
        beyond = d_clock - d_steady * self._clock_s / self._steady_s
        if beyond > max(CLOCK_JUMP_S, 10.0 * self.period_s):
            return beyond
        if d_clock <= 0.0:
            return 0.0
        if round(d_clock / self.period_s) <= 1 and d_steady <= max(1.0, 5.0 * self.period_s):
            # A step on schedule (not a pause of /clock, not a stall): learn the speed.
            self._clock_s = 0.9 * self._clock_s + d_clock
            self._steady_s = 0.9 * self._steady_s + d_steady
        return 0.0


class ClockWatch:
    """Seconds for which the node's clock has read the same time (a paused /clock)."""

    def __init__(self):
        self._clock_ns = None
        self._since_s = None

    def paused_s(self, clock_ns, steady_s):
        """Return how long (steady s) clock_ns has not changed; 0.0 while it advances."""
        if clock_ns != self._clock_ns:
            self._clock_ns, self._since_s = clock_ns, steady_s
            return 0.0
        return steady_s - self._since_s
