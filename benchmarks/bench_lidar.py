"""
lidar_3d benchmark cases A, B, C and the scaling sweeps, all on the built-in demo world.

A: velodyne_vlp16, 7 sub-rays, dual_strongest_last, rain 10 mm/h + 1 km visibility, moving pose.
B: ouster_os1_128, 1 sub-ray, strongest, clear, moving pose.
C: ouster_os1_128, 7 sub-rays, dual_strongest_last, rain 10 mm/h + 1 km visibility.
A, B and C split each sweep over two compute processes; A_in_process, B_in_process and
C_in_process are the same sweeps in this one process; A_exhaustive and C_exhaustive are A and C
with footprint exhaustive (every sub-ray of every beam; the default adaptive casts the others
only where the footprint straddles surfaces). geometric_vlp16 / geometric_os1_128: the
geometric model (GEOMETRIC: model geometric, no motion distortion) on a still pose, against the
bare cast and the peer mujoco-lidar (bench_peer.py) in the same rounds; simplest_physical_*: the
same for the physical model's simplest mode (one sub-ray, one hit, no noise, no weather).
Sweeps (in process): ms per scan against beams per scan, sub-rays per beam and world triangles.
smoke_1024_thin / smoke_1024_dense: 1024 smoke volumes around the sensor (the environment
topic's maximum), too thin to stop a ray (dropped before the trace) or dense (density 0.5).
A_actors_10 (and _in_process): case A with 10 actors (docs/worlds.md, "Actors") moving through
the demo world around the sensor's loop (issue 28's target: within 25 % of case A).
caster_<name>_A_in_process / caster_<name>_geometric_os1_128: case A in process and the
geometric OS1-128 on the demo world built with each backend of the ``caster`` parameter
(core/raycast/casters.py), the rows its default is chosen from.
"""

import os
from pathlib import Path
import tempfile

import bench_peer
from common import (bare_cast, lidar_config, medians_ms, paired_median_ms, primary_rays,
                    process_cpu_s, row)
import numpy as np

from ubot_lidar_sim.core.execution.worker import ScanProcess, sweep
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg
from ubot_lidar_sim.core.raycast.casters import caster_factory, CASTERS
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.sensors.sweep import Sweep
from ubot_lidar_sim.core.world.builtin import build as build_builtin
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World

RAIN = Weather(rain_mm_h=10.0, visibility_m=1000.0)
CLEAR = Weather()
# The demo driver's loop: 12 m from the origin, 1.8 m up, driving at 2 m/s and turning.
POSE0 = pose_matrix_deg([12.0, 0.0, 1.8], [0.0, 0.0, 90.0])
MOVING = (2.0, 0.0, 0.0, 0.0, 0.0, 2.0 / 12.0)
WORKERS = 2         # compute processes of cases A, B and C: one per core of the target machine
BLOCKS = 2          # their column blocks: one run of blocks per compute process
# The lidar_3d geometric model (one ray per beam, its first surface, no radiometry), and the
# simplest mode of the physical model (the issue 15 rows of that name before the model existed).
GEOMETRIC = {'model': 'geometric', 'motion_distortion': False}
SIMPLEST_PHYSICAL = {'sub_rays': 1, 'max_hits_per_sub_ray': 1, 'return_mode': 'strongest',
                     'noise_enabled': False, 'weather': False, 'motion_distortion': False}


def time_case(name, world, materials, preset, weather, weather_label, repeats, moving=True,
              workers=0, **overrides):
    """
    Time one configuration: full scans against the bare cast of the same primary sub-rays.

    workers: 0 computes the sweeps in this process; N >= 1 in N compute processes
    (worker.ScanProcess, the lidar_3d node's compute_workers), each a run of column blocks.
    cpu_ms_per_scan is the CPU time of this process and the compute processes per sweep.
    """
    cfg = lidar_config(preset, **overrides)
    sim = LidarSimulator(cfg, world, materials)
    pool = ScanProcess(cfg, world, materials, workers) if workers else None
    pids = [os.getpid()] + (pool.pids if pool is not None else [])
    pose_at = BodyTwist(POSE0, MOVING if moving else (0.0,) * 6)
    state = {'k': 0, 'points': 0, 'cpu': []}

    def one_scan():
        k = state['k']
        c0 = process_cpu_s(pids)
        result = sweep(sim, pool, pose_at, Sweep(k * cfg.period_s, weather, k))
        state['cpu'].append(process_cpu_s(pids) - c0)
        state['points'] = len(result.points)
        state['k'] = k + 1

    origins, dirs = primary_rays(cfg, POSE0)
    try:
        ms, bare = paired_median_ms(one_scan, bare_cast(world, origins, dirs), repeats)
    finally:
        if pool is not None:
            pool.close()
    # CPU ticks are 10 ms: the mean over the timed scans, not a median of single scans.
    cpu = state['cpu'][-repeats:]
    return row(name, preset, cfg.sub_rays, cfg.return_mode, weather_label,
               cfg.channels * cfg.horizontal_samples, state['points'], ms, bare, cfg.rate_hz,
               motion_distortion=bool(cfg.motion_distortion and moving),
               triangles=int(world.n_triangles), compute_workers=int(workers),
               cpu_ms_per_scan=round(1e3 * sum(cpu) / max(len(cpu), 1), 1))


def time_geometric(name, world, materials, preset, repeats, overrides=None):
    """
    Time a preset's geometric model (overrides: GEOMETRIC) against the bare cast and the peer.

    Every round runs one sweep, the bare cast of its rays and one trace of each mujoco-lidar CPU
    backend on the same scene (bench_peer.py); ratio_to_peer compares with the fastest backend.
    """
    overrides = GEOMETRIC if overrides is None else overrides
    cfg = lidar_config(preset, **overrides)
    sim = LidarSimulator(cfg, world, materials)
    pose_at = BodyTwist(POSE0, (0.0,) * 6)
    state = {'k': 0, 'points': 0}

    def one_scan():
        k = state['k']
        state['points'] = len(sim.scan(pose_at, k * cfg.period_s, None, k).points)
        state['k'] = k + 1

    origins, dirs = primary_rays(cfg, POSE0)
    found = bench_peer.peers(sim.beams.dir_sensor)
    ms = medians_ms([one_scan, bare_cast(world, origins, dirs)]
                    + [lambda p=p: p.scan(POSE0) for p in found.values()], repeats)
    peer_ms = {backend: round(t, 3) for backend, t in zip(found, ms[2:])}
    best = min(peer_ms, key=peer_ms.get) if peer_ms else None
    return row(name, preset, 1 if cfg.model == 'geometric' else cfg.sub_rays, cfg.return_mode,
               f'off ({cfg.model} model)',
               cfg.channels * cfg.horizontal_samples, state['points'], ms[0], ms[1], cfg.rate_hz,
               motion_distortion=False, triangles=int(world.n_triangles), compute_workers=0,
               model=cfg.model,
               peer=None if best is None else f'mujoco-lidar {best}',
               peer_ms_median=peer_ms.get(best), peer_backends_ms=peer_ms,
               ratio_to_peer=None if best is None else round(ms[0] / peer_ms[best], 3))


def smoke_weather(density, volumes=1024):
    """Return clear weather with volumes smoke cells within 40 m of the demo loop's centre."""
    rng = np.random.default_rng(0)
    cells = np.c_[rng.uniform(-40.0, 40.0, (volumes, 2)), rng.uniform(0.0, 5.0, volumes),
                  rng.uniform(0.5, 3.0, volumes)]
    return Weather(smoke=cells, smoke_density=np.full(volumes, density))


def heightfield_world(directory, cells):
    """Build a world of one rippled heightfield, about 2 x cells^2 triangles over 100 m square."""
    x = np.linspace(0.0, 8.0 * np.pi, cells + 1)
    heights = 0.3 * np.sin(x)[:, None] * np.cos(x)[None, :]
    path = Path(directory) / f'hf_{cells}.npy'
    np.save(path, heights.astype(np.float32))
    world_yaml = Path(directory) / f'hf_{cells}.yaml'
    world_yaml.write_text(
        'frame: map\nobjects:\n'
        f'  - {{name: hills, type: heightfield, file: {path.name}, cell_m: {100.0 / cells},'
        ' pose: {xyz: [-50, -50, 0]}, material: soil}\n')
    return World.load(str(world_yaml))


def demo_with_actors(n, materials):
    """
    Return the demo world with n actors: cars, people and robots driving loops across the yard.

    Actor k drives a square loop of side 8 m centred on the sensor's 12 m loop at angle k 2 pi /
    n, at 1-10 m/s, alternately a 4 x 2 x 1.5 m car, a 0.3 x 1.8 m person (cylinder) and a 1 m
    robot (box).
    """
    data = build_builtin('demo')
    shapes = ({'type': 'box', 'size_m': [4.0, 2.0, 1.5], 'pose': {'xyz': [0, 0, 0.75]},
               'material': 'vehicle'},
              {'type': 'cylinder', 'radius_m': 0.3, 'height_m': 1.8, 'pose': {'xyz': [0, 0, 0.9]},
               'material': 'other'},
              {'type': 'box', 'size_m': [1.0, 0.8, 0.6], 'pose': {'xyz': [0, 0, 0.3]},
               'material': 'metal_bin'})
    data['actors'] = []
    for k in range(n):     # n actors, built once
        a = 2.0 * np.pi * k / n
        cx, cy = 12.0 * np.cos(a), 12.0 * np.sin(a)
        square = [[cx - 4, cy - 4, 0], [cx + 4, cy - 4, 0], [cx + 4, cy + 4, 0],
                  [cx - 4, cy + 4, 0]]
        data['actors'].append({'name': f'actor_{k}', 'class_id': (10, 30, 31)[k % 3],
                               **shapes[k % 3],
                               'motion': {'waypoints': square, 'speed_m_s': 1.0 + k % 10,
                                          'loop': True}})
    return World.from_dict(data, '<demo + actors>', None, materials)


def run(repeats, only=None):
    """All lidar_3d cases (only: names starting with one of these prefixes); bench.json rows."""
    def want(name):
        return only is None or name.startswith(tuple(only))

    materials = MaterialTable.load()
    world = World.load('demo')
    rain = 'rain 10 mm/h + visibility 1 km'
    cases = (
        ('A', 'velodyne_vlp16', RAIN, rain,
         {'sub_rays': 7, 'return_mode': 'dual_strongest_last', 'motion_distortion': True}),
        ('B', 'ouster_os1_128', CLEAR, 'clear',
         {'sub_rays': 1, 'return_mode': 'strongest', 'motion_distortion': True}),
        ('C', 'ouster_os1_128', RAIN, rain, {'sub_rays': 7, 'return_mode': 'dual_strongest_last'}),
    )
    # A, B, C: each sweep in BLOCKS column blocks over the machine's 2 cores (compute_workers
    # 2, column_blocks 2); then the same config's sweeps computed in this one process.
    rows = [time_case(name, world, materials, preset, weather, label, repeats, workers=WORKERS,
                      column_blocks=BLOCKS, **overrides)
            for name, preset, weather, label, overrides in cases if want(name)]
    # A and C with every sub-ray of every beam (footprint exhaustive, the model before issue 29).
    rows += [time_case(f'{name}_exhaustive', world, materials, preset, weather, label, repeats,
                       workers=WORKERS, column_blocks=BLOCKS, footprint='exhaustive', **overrides)
             for name, preset, weather, label, overrides in cases
             if overrides['sub_rays'] > 1 and want(f'{name}_exhaustive')]
    rows += [time_case(f'{name}_in_process', world, materials, preset, weather, label, repeats,
                       column_blocks=BLOCKS, **overrides)
             for name, preset, weather, label, overrides in cases if want(f'{name}_in_process')]
    if want('A_actors_10'):
        actors = demo_with_actors(10, materials)
        name, preset, weather, label, overrides = cases[0]
        rows += [time_case('A_actors_10', actors, materials, preset, weather, label, repeats,
                           workers=WORKERS, column_blocks=BLOCKS, **overrides),
                 time_case('A_actors_10_in_process', actors, materials, preset, weather, label,
                           repeats, column_blocks=BLOCKS, **overrides)]
    for caster in CASTERS:
        if want(f'caster_{caster}'):
            cast_world = World.load('demo', materials, caster=caster_factory(caster))
            name, preset, weather, label, overrides = cases[0]
            rows += [time_case(f'caster_{caster}_A_in_process', cast_world, materials, preset,
                               weather, label, repeats, column_blocks=BLOCKS, **overrides),
                     time_geometric(f'caster_{caster}_geometric_os1_128', cast_world, materials,
                                    'ouster_os1_128', repeats)]
    rows += [time_geometric(f'{mode}_{short}', world, materials, preset, repeats, overrides)
             for mode, overrides in (('geometric', GEOMETRIC),
                                     ('simplest_physical', SIMPLEST_PHYSICAL))
             for short, preset in (('vlp16', 'velodyne_vlp16'), ('os1_128', 'ouster_os1_128'))
             if want(f'{mode}_{short}')]
    for samples in (32, 256, 512, 1024, 2048):
        if want(f'sweep_beams_{128 * samples}'):
            rows.append(time_case(
                f'sweep_beams_{128 * samples}', world, materials, 'ouster_os1_128', CLEAR,
                'clear', max(5, repeats // 2), sub_rays=1, return_mode='strongest',
                horizontal_samples=samples, max_rays_per_scan=1048576))
    for sub_rays in (1, 7):
        if want(f'sweep_sub_rays_{sub_rays}'):
            rows.append(time_case(
                f'sweep_sub_rays_{sub_rays}', world, materials, 'velodyne_vlp16', CLEAR, 'clear',
                repeats, sub_rays=sub_rays, return_mode='strongest'))
    for label, density in (('thin', 0.02), ('dense', 0.5)):
        if want(f'smoke_1024_{label}'):
            rows.append(time_case(
                f'smoke_1024_{label}', world, materials, 'velodyne_vlp16', smoke_weather(density),
                f'1024 smoke volumes, density {density}', repeats, sub_rays=7,
                return_mode='strongest'))
    if not want('sweep_triangles'):
        return rows
    with tempfile.TemporaryDirectory() as tmp:
        for cells in (22, 100, 316, 1000):
            hf = heightfield_world(tmp, cells)
            rows.append(time_case(
                f'sweep_triangles_{hf.n_triangles}', hf, materials, 'velodyne_vlp16', CLEAR,
                'clear', max(5, repeats // 2), sub_rays=1, return_mode='strongest'))
    return rows
