"""
Load case: the share of scans each sensor skips for lack of CPU under 1 kHz of /tf.

The reliability suite's load (test/reliability/test_load.py: the three sensors and the demo
driver as separate processes, map -> odom -> base_link at 1 kHz, environment at 100 Hz) run for
`seconds` after its warm-up. A CPU share depends on what else the machine runs, so it is measured
here and in ``make soak``, against its target, and not asserted in ``make test`` (which asserts
what the load must never do: stale or lost scans, no recovery, growing memory).
"""

from pathlib import Path
import sys
import tempfile

from common import cpu_times, steal_pct

COLUMNS = ('case', 'seconds', 'tf_hz', 'published', 'skipped_for_cpu_pct', 'target_pct', 'met',
           'sweep_end_lag_ms_median', 'cpu_steal_pct')

_SUITE = Path(__file__).resolve().parents[1] / 'test' / 'reliability'


def run(seconds):
    """Run the load; return one bench.json row per sensor (case LOAD_1kHz_tf_<sensor>)."""
    sys.path.insert(0, str(_SUITE))
    from rel_helpers import new_domain, Probe, Proc
    from test_load import CPU_TARGET_PCT, run_load

    made = []

    def procs(argv, domain_id, name):
        made.append(Proc(argv, domain_id, Path(tmp), name))
        return made[-1]

    def probe_factory(domain_id, **kw):
        made.append(Probe(domain_id, **kw))
        return made[-1]
    before = cpu_times()
    with tempfile.TemporaryDirectory() as tmp:
        try:
            figures = run_load(procs, probe_factory, new_domain(), Path(tmp), seconds)
        finally:
            for thing in reversed(made):
                thing.close()
    steal = steal_pct(before)
    rows = []
    for sensor, f in figures['sensors'].items():
        rows.append({'case': f'LOAD_1kHz_tf_{sensor}', 'seconds': figures['seconds'],
                     'tf_hz': figures['tf_hz'], 'published': f['published'],
                     'skipped_for_cpu_pct': f['skipped_for_cpu_pct'],
                     'target_pct': CPU_TARGET_PCT,
                     'met': f['skipped_for_cpu_pct'] <= CPU_TARGET_PCT,
                     'sweep_end_lag_ms_median': f['sweep_end_lag_ms_median'],
                     'cpu_steal_pct': steal, 'died': bool(figures['died'])})
    return rows
