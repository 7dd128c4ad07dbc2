"""
Load: /tf at 1 kHz and environment at 100 Hz while the three sensors publish.

The three sensor executables and the demo driver run as separate processes (as the launch
files start them). The demo driver's timer cannot hold 1 kHz on a loaded 2-core machine
(measured 440-760 Hz), so a dedicated publisher process sends map -> odom -> base_link at
1 kHz (the demo loop) with the static sensor mounts, and the demo driver, its own frames
renamed out of the way, sends the environment at 100 Hz. After a warm-up, the sensors'
/diagnostics counters give the scans skipped for lack of CPU (``overrun``: timer ticks missed
because a scan or the inputs held the node; ``busy``: a scan still running) and /proc gives each
process's RSS. Figures go to out/reliability/load_<seconds>s.json.

``make test`` asserts what the load must never do, whatever else the machine runs: a process
dies or errs, a sweep is stale or repeats a stamp, a timer period goes unaccounted for or a
published sweep does not arrive, the rate does not come back once the load ends, RSS grows.
The share of scans skipped for CPU depends on the machine's other load: ``make soak`` asserts
it (CPU_TARGET_PCT) and ``make bench`` reports it (benchmarks/bench_load.py).
"""

import json
import statistics
import time

import pytest
from rclpy.qos import qos_profile_sensor_data
from rel_helpers import node_argv, NODE_EXES, ROOT, rss_kb, tf_source_argv, write_params
from sensor_msgs.msg import LaserScan, PointCloud2

from ubot_lidar_sim.ros.conversions import stamp_to_s
from ubot_lidar_sim_msgs.msg import TerrainSensor

pytestmark = pytest.mark.ros
SENSORS = ('lidar_3d', 'laser_scan', 'terrain_sensor')
CPU_REASONS = ('overrun', 'busy')
CPU_TARGET_PCT = 1.0        # soak and bench: at most this share of scans skipped for CPU
STALE_S = 1.5               # a sweep ending this long before it arrives is stale (TF age 0.5 s)
# Warm-up: the first half lap of the demo loop (12 m radius at 2 m/s: 38 s per lap) and one and
# a half weather cycles (20 s), while the sensors' working sets and DDS's caches fill.
WARMUP_S = 30.0
IN_SUITE_S = 40.0
PARAMS = {
    # lidar_3d: 16 x 360 at 10 Hz, one ray per beam (7 sub-rays take ~60 ms per sweep alone on
    # the 2-core CI machine, which leaves no CPU for 1 kHz of TF in four Python processes).
    'lidar_3d': {'world_file': 'demo', 'sub_rays': 1},
    'laser_scan': {'world_file': 'demo'},
    'terrain_sensor': {'world_file': 'demo', 'tire_radii_m': [0.4] * 4},
    'demo_driver': {'environment_rate_hz': 100.0, 'tf_rate_hz': 1.0, 'odom_frame': 'drv_odom',
                    'base_frame': 'drv_base', 'lidar_frame': 'drv_lidar',
                    'laser_frame': 'drv_laser'},
}
TF_HZ = 1000.0


def _counters(entry):
    v = entry['values']
    skipped = {k.split('.', 1)[1]: int(x) for k, x in v.items() if k.startswith('skipped.')}
    return {'published': int(v['scans_published']), 'skipped': skipped}


def _delta(a, b):
    reasons = set(a['skipped']) | set(b['skipped'])
    return {'published': b['published'] - a['published'],
            'skipped': {r: b['skipped'].get(r, 0) - a['skipped'].get(r, 0) for r in reasons}}


def _sent_rate(proc, t0, t1):
    """Return the /tf messages per second the source sent between monotonic t0 and t1."""
    rows = [tuple(float(v) for v in ln.split()) for ln in proc.stdout().splitlines()
            if len(ln.split()) == 2]
    inside = [r for r in rows if t0 <= r[0] <= t1]
    if len(inside) < 2:
        return 0.0
    return round((inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0]), 1)


def _recover(procs, probe, domain, timeout_s=15.0):
    """
    Replace the 1 kHz source by a 100 Hz one.

    Returns (s until every sensor is back, or None; each sensor's last status).
    """
    t0 = time.monotonic()
    # Twice the fastest sensor's rate (terrain, 50 Hz): a sensor publishes only at a transform
    # newer than its last one, so /tf at its own rate skips ticks whenever the phases meet.
    procs(tf_source_argv(100.0), domain, 'tf_source_100hz')

    def back():
        entries = [probe.diag(s) for s in SENSORS]
        return all(e and e['t'] > t0 + 1.0 and e['level'] == 0 and float(
            e['values']['rate_hz']) >= 0.9 * float(e['values']['target_rate_hz'])
            for e in entries)
    ok = probe.wait_for(back, timeout_s, 0.1)
    # Each sensor's last status, to say which one was not back.
    last = {s: (lambda e: e and {'level': e['level'], 'message': e['message'],
                                 'rate_hz': e['values'].get('rate_hz')})(probe.diag(s))
            for s in SENSORS}
    return (round(time.monotonic() - t0, 1) if ok else None), last


def run_load(procs, probe_factory, domain, tmp_path, seconds, recovery=False):
    """Run the load for WARMUP_S + seconds (then the recovery if asked); return the figures."""
    params = write_params(tmp_path, 'load', PARAMS)
    started = {exe: procs(node_argv(exe, params), domain, exe) for exe in NODE_EXES}
    started['tf_source'] = procs(tf_source_argv(TF_HZ), domain, 'tf_source')
    probe = probe_factory(domain)
    counts = {'points': 0, 'scan': 0, 'terrain': 0}
    lag = {'points': [], 'scan': [], 'terrain': []}
    stamps = {'points': [], 'scan': [], 'terrain': []}

    def counter(key):
        def on_msg(msg):
            counts[key] += 1
            stamps[key].append(stamp_to_s(msg.header.stamp))
            # How far the end of the sweep lies behind the arrival (pose age + compute).
            end_s = stamps[key][-1] + {'points': period['lidar_3d'],
                                       'scan': period['laser_scan'], 'terrain': 0.0}[key]
            lag[key].append(probe.node.get_clock().now().nanoseconds * 1e-9 - end_s)
        return on_msg
    period = {'lidar_3d': 0.1, 'laser_scan': 1.0 / 30.0}
    for topic, kind in (('points', PointCloud2), ('scan', LaserScan), ('terrain', TerrainSensor)):
        probe.node.create_subscription(kind, topic, counter(topic), qos_profile_sensor_data)
    assert probe.wait_for(lambda: all(counts[k] > 0 for k in ('points', 'scan', 'terrain')),
                          60.0), {n: p.stderr()[-1500:] for n, p in started.items()}
    time.sleep(WARMUP_S)
    t0 = time.monotonic()
    diag0 = {s: _counters(probe.diag(s)) for s in SENSORS}
    diag_t0 = {s: probe.diag(s)['t'] for s in SENSORS}
    counts0 = dict(counts)
    lag0 = {k: len(v) for k, v in lag.items()}
    rss = {exe: [] for exe in started}
    died = {}
    while time.monotonic() - t0 < seconds and not died:
        for exe, p in started.items():
            if p.popen.poll() is not None:      # a crash ends the run; its figures are kept
                died[exe] = {'after_s': round(time.monotonic() - t0, 1),
                             'exit_code': p.popen.returncode,
                             'stderr_tail': p.stderr()[-1500:]}
            else:
                rss[exe].append(rss_kb(p.pid))
        time.sleep(1.0)
    t1 = time.monotonic()
    time.sleep(1.2)     # one more diagnostics period, so the counters cover the window
    diag1 = {s: _counters(probe.diag(s)) for s in SENSORS}
    diag_t1 = {s: probe.diag(s)['t'] for s in SENSORS}
    target = {s: float(probe.diag(s)['values']['target_rate_hz']) for s in SENSORS}
    elapsed = t1 - t0
    figures = {'seconds': round(elapsed, 1), 'warmup_s': WARMUP_S, 'params': PARAMS,
               'tf_hz': _sent_rate(started['tf_source'], t0, t1), 'sensors': {},
               'rss': {}, 'died': died}
    for s, topic in zip(SENSORS, ('points', 'scan', 'terrain')):
        d = _delta(diag0[s], diag1[s])
        cpu = sum(d['skipped'].get(r, 0) for r in CPU_REASONS)
        window = stamps[topic][counts0[topic]:]
        span = diag_t1[s] - diag_t0[s]
        figures['sensors'][s] = {
            'published': d['published'], 'received_hz': round(
                (counts[topic] - counts0[topic]) / elapsed, 2),
            'published_hz': round(d['published'] / span, 2),
            # Each timer period ends in a published or a skipped scan (with its reason).
            'periods': round(target[s] * span, 1),
            'accounted': d['published'] + sum(d['skipped'].values()),
            'stamps_not_increasing': sum(b <= a for a, b in zip(window, window[1:])),
            'stale': sum(x > STALE_S for x in lag[topic][lag0[topic]:]),
            'skipped': {r: n for r, n in sorted(d['skipped'].items()) if n},
            'skipped_for_cpu_pct': round(100.0 * cpu / max(d['published'] + cpu, 1), 2),
            'sweep_end_lag_ms_median': round(1e3 * statistics.median(lag[topic][lag0[topic]:]),
                                             1),
            'sweep_end_lag_ms_max': round(1e3 * max(lag[topic][lag0[topic]:]), 1)}
    for exe, samples in rss.items():
        if len(samples) < 3:
            continue
        # RSS moves by +-3 % from one second to the next as the scans' working set changes
        # (glibc returns freed memory): compare the medians of the first and the last fifth of
        # the window, not single samples.
        fifth = max(3, len(samples) // 5)
        first = statistics.median(samples[:fifth])
        last = statistics.median(samples[-fifth:])
        figures['rss'][exe] = {'start_kb': first, 'end_kb': last,
                               'max_kb': max(samples), 'every_5_s_kb': samples[::5],
                               'growth_pct': round(100.0 * (last - first) / first, 2)}
    if recovery and not died:
        started['tf_source'].stop()
        figures['recovered_after_s'], figures['recovery_status'] = _recover(procs, probe, domain)
    out = ROOT / 'out' / 'reliability'
    out.mkdir(parents=True, exist_ok=True)
    (out / f'load_{int(seconds)}s.json').write_text(json.dumps(figures, indent=1))
    return figures


def check_health(figures, full_load=True):
    """
    Assert what the load must never do: kill a process, error out, grow RSS >= 5 %.

    full_load: also that the source sent its 1 kHz (the soak's premise). In the suite the
    source shares the cores with whatever else runs (make test-under-load: two CPU hogs; 879
    Hz was seen), so there the nodes' behaviour is judged under the load that was sent.
    """
    assert not figures['died'], figures['died']
    if full_load:
        assert figures['tf_hz'] >= 0.95 * TF_HZ, f'the load is not 1 kHz of /tf: {figures}'
    else:
        assert figures['tf_hz'] > 0.0, f'no /tf load was sent: {figures}'
    for s, f in figures['sensors'].items():
        assert f['skipped'].get('error', 0) == 0, (s, f)
    for exe, r in figures['rss'].items():
        assert r['growth_pct'] < 5.0, (exe, figures['rss'])


def check_cpu(figures):
    """Assert that at most CPU_TARGET_PCT of each sensor's scans were skipped for CPU."""
    for s, f in figures['sensors'].items():
        assert f['skipped_for_cpu_pct'] <= CPU_TARGET_PCT, (s, figures['sensors'])


@pytest.fixture(scope='module')
def load_figures(tmp_path_factory):
    """Run the in-suite load once for the module's tests; return its figures."""
    from rel_helpers import new_domain, Probe, Proc

    tmp_path = tmp_path_factory.mktemp('load')
    made = []

    def procs(argv, domain_id, name):
        made.append(Proc(argv, domain_id, tmp_path, name))
        return made[-1]

    def probe_factory(domain_id, **kw):
        made.append(Probe(domain_id, **kw))
        return made[-1]
    try:
        yield run_load(procs, probe_factory, new_domain(), tmp_path, IN_SUITE_S, recovery=True)
    finally:
        for thing in reversed(made):
            thing.close()


def test_under_1_khz_tf_no_node_dies_errs_or_grows_rss_by_5_pct(load_figures):
    check_health(load_figures, full_load=False)


def test_under_1_khz_tf_every_sweep_arrives_fresh_with_a_new_stamp(load_figures):
    for s, f in load_figures['sensors'].items():
        assert f['stamps_not_increasing'] == 0 and f['stale'] == 0, (s, f)


def test_under_1_khz_tf_every_period_is_accounted_for_and_every_sweep_delivered(load_figures):
    for s, f in load_figures['sensors'].items():
        # Each period published or skipped with a reason (the counters are 1 Hz samples)...
        # bound: counters sampled at 1 Hz: 3 periods at the window's ends, plus 3 % for a
        # sample taken mid-publication (integer counts, not a float tolerance)
        assert abs(f['accounted'] - f['periods']) <= 3 + 0.03 * f['periods'], (s, f)
        # ... and what was published arrived (the probe's window is not the counters').
        assert f['received_hz'] >= 0.95 * f['published_hz'], (s, f)


def test_after_the_1_khz_load_every_sensor_is_back_at_its_rate_within_8_s(load_figures):
    assert load_figures.get('recovered_after_s') is not None, load_figures['recovery_status']
    assert load_figures['recovered_after_s'] <= 8.0, load_figures['recovered_after_s']


@pytest.mark.soak
def test_soak_tf_at_1_khz_and_environment_at_100_hz(
        procs, probe_factory, domain, tmp_path, soak_seconds):
    figures = run_load(procs, probe_factory, domain, tmp_path, soak_seconds)
    check_health(figures)
    check_cpu(figures)
