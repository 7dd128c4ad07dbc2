"""The compute process: the same sweep bytes as in process, restart after a crash, clean stop."""

import os
from pathlib import Path
import pickle
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.execution.blocks import BlockPipeline
from ubot_lidar_sim.core.execution.transport import SharedResults
from ubot_lidar_sim.core.execution.worker import ScanProcess, ScanProcessError
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg, twist_from_cli
from ubot_lidar_sim.core.sensors.column_blocks import merge_columns
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.sensors.sweep import Sweep

CFG = {'channels': 16, 'horizontal_samples': 360, 'sub_rays': 7, 'seed': 3,
       'return_mode': 'dual_strongest_last'}
RAIN = Weather(rain_mm_h=20.0, visibility_m=1500.0)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope='module')
def demo(demo_world, materials):
    return demo_world, materials


@pytest.fixture
def worker(demo):
    proc = ScanProcess(LidarConfig(**CFG), *demo)
    yield proc
    proc.close()


PATH = BodyTwist(pose_matrix_deg([0, -12, 1.6], [0, 0, 10]),
                 twist_from_cli(2.0, 0.0, 0.0, 0.0, 0.0, 15.0))


def _both(sim, worker, k, weather=RAIN):
    stamp = 0.1 * k
    here = sim.scan(PATH, stamp, weather, k)
    there = worker.scan(PATH(sim.pose_times(stamp)), Sweep(stamp, weather, k))
    return here, there


def _assert_same(here, there):
    assert len(here.points) > 1000
    assert here.points.tobytes() == there.points.tobytes()
    for name in ('beam', 'too_close', 'hit_range_m', 'sensor_pose'):
        np.testing.assert_array_equal(getattr(here, name), getattr(there, name), err_msg=name)
    assert here.n_echoes == there.n_echoes


def test_world_pickles_into_a_world_that_traces_the_same_hits(demo):
    world, _ = demo
    copy = pickle.loads(pickle.dumps(world))
    o = np.tile([[0.0, -12.0, 1.6]], (500, 1))
    az = np.linspace(-np.pi, np.pi, 500)
    d = np.stack([np.cos(az) * 0.98, np.sin(az) * 0.98, np.full(500, -0.2)], axis=1)
    d /= np.linalg.norm(d, axis=1)[:, None]
    a, b = world.trace(o, d, 100.0), copy.trace(o, d, 100.0)
    assert len(a) > 400 and copy.frame == world.frame
    np.testing.assert_array_equal(a.range_m, b.range_m)
    np.testing.assert_array_equal(a.material, b.material)


def test_sweeps_in_the_compute_process_are_byte_identical_to_in_process(demo, worker):
    sim = LidarSimulator(LidarConfig(**CFG), *demo)
    for k in range(3):
        _assert_same(*_both(sim, worker, k))


def test_new_config_in_the_compute_process_gives_the_new_config_bytes(demo, worker):
    cfg = LidarConfig(**{**CFG, 'return_mode': 'first', 'seed': 9})
    worker.set_config(cfg)
    here, there = _both(LidarSimulator(cfg, *demo), worker, 4)
    _assert_same(here, there)
    assert np.all(there.points['return_index'] == 1)


def test_sets_during_a_sweeps_blocks_leave_them_whole_and_the_next_sweep_takes_the_last(
        demo, worker):
    # A node's parameter sets (10 per second in a test of the node) arrive while its children
    # compute blocks: the blocks in flight finish with the old config, and the children take
    # the last set before their next blocks.
    old, new = LidarConfig(**CFG), LidarConfig(**{**CFG, 'return_mode': 'first', 'seed': 9})
    stamp = 0.4
    poses = PATH(LidarSimulator(old, *demo).pose_times(stamp))
    worker.submit_blocks(poses, Sweep(stamp, RAIN, 4), 0, 1)
    for k in range(40):
        worker.set_config(new if k % 2 else old)
    in_flight = worker.collect_blocks(0)
    expected = LidarSimulator(old, *demo).scan_blocks(poses, Sweep(stamp, RAIN, 4), 0, 1)
    assert in_flight.points.tobytes() == expected.points.tobytes()
    _assert_same(*_both(LidarSimulator(new, *demo), worker, 5))


def test_a_killed_compute_process_fails_one_scan_then_restarts_with_the_same_bytes(
        demo, worker):
    sim = LidarSimulator(LidarConfig(**CFG), *demo)
    os.kill(worker.pid, signal.SIGKILL)
    with pytest.raises(ScanProcessError, match='exited'):
        worker.scan(PATH(sim.pose_times(0.0)), Sweep(0.0, RAIN, 0))
    _assert_same(*_both(sim, worker, 1))


def test_a_bad_request_raises_its_error_and_the_process_keeps_serving(demo, worker):
    # Refused in the caller (a sweep in column blocks picks each block's rows of the poses) or,
    # for a request that passes there, by the child, which keeps serving.
    with pytest.raises((ScanProcessError, ValueError), match='shape'):
        worker.scan(np.zeros((3, 4, 4)), Sweep(0.0, RAIN, 0))
    with pytest.raises(ScanProcessError, match='ValueError|IndexError|shape'):
        worker.submit_blocks(np.zeros((3, 4, 4)), Sweep(0.0, RAIN, 0), 0, 1)
        worker.collect_blocks(0)
    pid = worker.pid
    sim = LidarSimulator(LidarConfig(**CFG), *demo)
    _assert_same(*_both(sim, worker, 2))
    assert worker.pid == pid


def test_close_ends_the_compute_process_within_its_ask_then_kill_bound(demo):
    proc = ScanProcess(LidarConfig(**CFG), *demo)
    pid = proc.pid
    t0 = time.monotonic()
    proc.close(timeout_s=2.0)
    # bound: close asks for 2 s, then kills and waits at most 2 s more for the reaping; a child
    # still importing on a busy machine is killed rather than waited for (never a CPU share).
    assert time.monotonic() - t0 < 2 * 2.0
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    proc.close()        # twice is harmless


def test_column_blocks_over_three_compute_processes_are_byte_identical_to_in_process(demo):
    cfg = LidarConfig(**CFG, column_blocks=7)      # runs of 2, 3 and 2 blocks
    sim = LidarSimulator(cfg, *demo)
    proc = ScanProcess(cfg, *demo, workers=3)
    try:
        assert len(set(proc.pids)) == 3
        for k in range(2):
            _assert_same(*_both(sim, proc, k))
        for k, weather in enumerate((Weather(), Weather(visibility_m=120.0)), start=4):
            _assert_same(*_both(sim, proc, k, weather))
    finally:
        proc.close()


def test_a_killed_compute_process_of_two_fails_one_scan_then_both_restart_same_bytes(demo):
    cfg = LidarConfig(**CFG, column_blocks=4)      # blocks 0-1 in child 0, 2-3 in child 1
    sim = LidarSimulator(cfg, *demo)
    proc = ScanProcess(cfg, *demo, workers=2)
    try:
        os.kill(proc.pids[1], signal.SIGKILL)
        with pytest.raises(ScanProcessError, match='exited'):
            proc.scan(PATH(sim.pose_times(0.0)), Sweep(0.0, RAIN, 0))
        assert proc.pids == []
        _assert_same(*_both(sim, proc, 1))
        assert len(proc.pids) == 2
    finally:
        proc.close()


def test_more_workers_than_beams_compute_the_beams_there_are(demo):
    cfg = LidarConfig(channels=1, horizontal_samples=1, elevations_deg=(-10.0,),
                      horizontal_fov_deg=1.0, seed=1)
    sim = LidarSimulator(cfg, *demo)
    proc = ScanProcess(cfg, *demo, workers=2)
    try:
        here, there = _both(sim, proc, 0)
        assert there.n_beams == 1 and len(there.points) == 1
        assert here.points.tobytes() == there.points.tobytes()
        kept = there.points.tobytes()
        later = _both(sim, proc, 1)[1]
        # The result owns its arrays: the next sweep (other noise) does not overwrite them.
        assert later.points.tobytes() != kept and there.points.tobytes() == kept
    finally:
        proc.close()


def test_a_result_keeps_its_points_after_the_next_sweep_of_the_same_process(demo, worker):
    sim = LidarSimulator(LidarConfig(**CFG), *demo)
    first = _both(sim, worker, 0)[1]
    kept = first.points.tobytes()
    second = _both(sim, worker, 1)[1]
    assert second.points.tobytes() != kept and first.points.tobytes() == kept


def test_the_shared_block_hands_a_result_over_whole_and_refuses_one_too_large(demo):
    cfg = LidarConfig(**CFG)
    result = LidarSimulator(cfg, *demo).scan(PATH, 0.0, RAIN, 0)
    block = SharedResults(SharedResults.size_for(cfg))
    small = SharedResults(4096)
    try:
        copy = block.load(block.store(result))
        _assert_same(result, copy)
        assert copy.timing_ms == result.timing_ms and copy.n_beams == result.n_beams
        assert small.store(result) is None        # the pipe takes it instead
    finally:
        del copy
        block.close()
        small.close()


def test_a_sweep_in_column_blocks_gives_the_same_bytes_over_processes_and_block_by_block(
        demo):
    cfg = LidarConfig(**CFG, column_blocks=5)
    sim = LidarSimulator(cfg, *demo)
    proc = ScanProcess(cfg, *demo, workers=2)
    try:
        for k in range(2):      # the whole sweep: blocks 0-2 in one child, 3-4 in the other
            _assert_same(*_both(sim, proc, k))
        stamp = 0.1 * 7
        here = sim.scan(PATH, stamp, RAIN, 7)
        # One block per request, as trigger stream hands them in while the columns fire: block
        # j to child j % 2, two in progress at once.
        pipeline = BlockPipeline(sim, proc)
        for j in range(5):
            pipeline.submit(j, PATH(sim.block_pose_times(stamp, j, j + 1)), Sweep(stamp, RAIN, 7))
        assert len(proc._pending) == 2
        there, union = merge_columns(pipeline.results(), sim.block_columns, cfg.channels)
        assert proc.in_process_blocks == 0 and not proc._pending
        np.testing.assert_array_equal(union, np.arange(cfg.horizontal_samples))
        _assert_same(here, there)
    finally:
        proc.close()


_LOADED_KERNELS = """
import sys
from numba.core.dispatcher import Dispatcher
from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.execution.worker import ScanProcess
from ubot_lidar_sim.core.world.world import World


def loaded():
    mods = [m for name, m in list(sys.modules.items()) if name.startswith('ubot_lidar_sim')]
    return sum(1 for mod in mods for value in vars(mod).values()
               if isinstance(value, Dispatcher) and value.overloads)


world = World.load('flat')
cfg = LidarConfig(channels=8, horizontal_samples=90, sub_rays=1, compute_process=True)
print(loaded(), flush=True)
ScanProcess(cfg, world, world.materials, wait_for_start=False).close(kill=True)
print(loaded(), flush=True)
"""


def test_a_pool_that_computes_here_while_it_restarts_loads_its_kernels_when_it_is_made():
    # A node's pool (wait_for_start false) computes here after a child fails; its first sweep
    # here must not load the numba kernels then (seconds late after its stamp). Before the
    # pool is made, this process has loaded none.
    out = subprocess.run([sys.executable, '-c', _LOADED_KERNELS], capture_output=True,
                         text=True, timeout=300, cwd=str(ROOT))
    assert out.returncode == 0, out.stderr[-2000:]
    before, after = (int(n) for n in out.stdout.split())
    assert before == 0 and after > 0, (before, after)
