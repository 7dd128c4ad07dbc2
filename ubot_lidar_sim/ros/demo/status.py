"""The demo's console output: one live status line per sensor, and the final summary."""

import shutil
import sys

from ubot_lidar_sim.ros.demo.scenario import PHASES

_UNITS = {'lidar_3d': 'points/scan', 'laser_scan': 'rays/scan', 'terrain_sensor': 'rays/sample'}


def status_lines(monitor, configured, elapsed_s, total_s, width=None):
    """One line per sensor: rate (configured), size per scan, extra, weather; cut to width."""
    lines = []
    end = f'/{total_s:.0f}' if total_s > 0 else ''
    for name, rate in monitor.rates.items():
        size = rate.last_size
        lines.append(
            f'{name:<14} {rate.recent_hz():6.2f} Hz ({configured[name]:4.1f})'
            f' {size:6d} {_UNITS[name]:<11} {monitor.extra.get(name, ""):<19}'
            f' | {monitor.weather_text()} | t {elapsed_s:4.1f}{end} s')
    if width:
        lines = [ln[:width - 1] for ln in lines]  # a wrapped line would break the redraw
    return lines


class StatusDisplay:
    """
    Shows the status lines: redrawn in place every 0.5 s on a terminal, printed every 5 s else.

    The first lines appear 1 s after ``start_s`` (monotonic).
    """

    def __init__(self, start_s, stream=sys.stdout):
        self._stream = stream
        self._tty = stream.isatty()
        self._next_s = start_s + 1.0
        self._printed = 0

    def update(self, now_s, monitor, configured, elapsed_s, total_s):
        """Show the lines when they are due at monotonic time now_s."""
        if now_s < self._next_s:
            return
        width = shutil.get_terminal_size().columns if self._tty else None
        lines = status_lines(monitor, configured, elapsed_s, total_s, width)
        if self._tty:
            up = f'\x1b[{self._printed}F' if self._printed else ''
            self._stream.write(up + ''.join(f'\x1b[2K{ln}\n' for ln in lines))
            self._printed = len(lines)
            self._next_s = now_s + 0.5
        else:
            self._stream.write('\n'.join(lines) + '\n')
            self._next_s = now_s + 5.0
        self._stream.flush()


def phase_rates(rate, spans, phases, min_s=0.5):
    """
    Return the rate (Hz, '%.2f') of one sensor in each phase, '-' where it could not publish.

    A phase counts from the sensor's first message on (rate.phase_seconds_at_first): a sensor
    that started late shows '-' for the phases that passed before it, not 0.00; also '-' when
    less than min_s of the phase remained.
    """
    before = rate.phase_seconds_at_first or {}
    out = []
    for p in phases:
        seen_s = spans.get(p, 0.0) - before.get(p, 0.0) if rate.count else 0.0
        out.append(f'{rate.phase_counts.get(p, 0) / seen_s:.2f}' if seen_s >= min_s else '-')
    return out


def print_summary(monitor, configured, elapsed_s, signum):
    """
    Print per sensor: messages, mean rate against the configured one, rate per phase.

    Then, for a sensor that published empty scans, how many in each phase. A phase's rate is
    over the time the sensor could publish in it ('-': none; phase_rates).
    """
    why = f'stopped by signal {signum}' if signum else 'finished'
    spans = monitor.phase_seconds()
    phases = [p for p in PHASES if spans.get(p, 0.0) > 0.5]
    print(f'\nsummary ({why} after {elapsed_s:.1f} s):')
    print(f'  {"sensor":<15} {"messages":>8} {"rate Hz":>8} {"set Hz":>7} {"dev %":>6}'
          f' {"mean per scan":>14}  ' + ' '.join(f'{p + " Hz":>9}' for p in phases))
    for name, rate in monitor.rates.items():
        hz = rate.mean_hz()
        dev = 100.0 * (hz - configured[name]) / configured[name]
        per_phase = phase_rates(rate, spans, phases)
        print(f'  {name:<15} {rate.count:8d} {hz:8.2f} {configured[name]:7.1f} {dev:+6.1f}'
              f' {rate.mean_size():14.1f}  ' + ' '.join(f'{v:>9}' for v in per_phase))
    for name, rate in monitor.rates.items():
        if rate.phase_empty:
            print(f'  {name}: empty scans ' + ', '.join(
                f'{p} {n}' for p, n in sorted(rate.phase_empty.items())))
