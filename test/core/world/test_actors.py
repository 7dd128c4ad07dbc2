"""World actors (issue 28): moving objects met at each ray's own firing time, instance ids."""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.config import LaserScanConfig, LidarConfig, TerrainConfig
from ubot_lidar_sim.core.config.configure import effective_config
from ubot_lidar_sim.core.errors import ConfigError, WorldError
from ubot_lidar_sim.core.execution.blocks import BlockPipeline
from ubot_lidar_sim.core.execution.worker import ScanProcess
from ubot_lidar_sim.core.poses import BodyTwist, invert, pose_matrix_deg, SampledPath
from ubot_lidar_sim.core.poses import WaypointPath, WorldTwist
from ubot_lidar_sim.core.raycast.actor_casting import rays_to_local, RayTimes, reach_spheres
from ubot_lidar_sim.core.raycast.embree_caster import EmbreeCaster
from ubot_lidar_sim.core.sensors.column_blocks import merge_columns
from ubot_lidar_sim.core.sensors.laser import LaserScanner
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.sensors.sweep import Sweep
from ubot_lidar_sim.core.sensors.terrain import TerrainSensor
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.schema import MAX_ACTORS
from ubot_lidar_sim.core.world.world import World

R_M, RATE_HZ, COLUMNS, L_M, V_M_S = 10.0, 2.0, 3600, 1.0, 10.0
# The beam's speed along a face R_M ahead: v_spin = 2 pi rate R = 125.7 m/s; the sweep is cw
# (spin_direction default), so at azimuth 0 the beam runs towards -y.
V_SPIN = 2.0 * math.pi * RATE_HZ * R_M
SPACING_M = 2.0 * math.pi * R_M / COLUMNS      # one column spacing at R_M: 17.5 mm
RING = {'model': 'geometric', 'channels': 1, 'vertical_fov_up_deg': 0.0,
        'vertical_fov_down_deg': 0.0, 'horizontal_samples': COLUMNS, 'rate_hz': RATE_HZ,
        'noise_enabled': False, 'max_range_m': 50.0}
STILL = BodyTwist(pose_matrix_deg([0, 0, 1.0], [0, 0, 0]))


def _world(actors, caster=None):
    """Return a world of a small far floor and the given actors."""
    return World.from_dict({'objects': [
        {'name': 'floor', 'type': 'plane', 'size_m': [1, 1], 'pose': {'xyz': [0, 0, -50]}}],
        'actors': actors}, materials=MaterialTable.load(), caster=caster)


def _moving_box(vx, vy, t_star):
    """Return a box 0.2 x L_M x 1 m whose front face is at x = R_M, centred on y = 0 at t_star."""
    return {'name': 'box', 'type': 'box', 'size_m': [0.2, L_M, 1.0], 'material': 'vehicle',
            'class_id': 30, 'motion': {'pose': [R_M + 0.1 - vx * t_star, -vy * t_star, 1.0,
                                                0, 0, 0], 'twist': [vx, vy, 0, 0, 0, 0]}}


def _t_ahead(cfg):
    """Return the firing time (s after the stamp) of the column nearest azimuth 0."""
    sim = LidarSimulator(cfg, _world([]), MaterialTable.load())
    col = int(np.argmin(np.abs(sim.beams.azimuth_rad[:COLUMNS])))
    return float(sim.beams.column_time_s[col])


@pytest.mark.parametrize('motion, vx, vy, expected_m', [
    ('with the scan', 0.0, -V_M_S, L_M / (1.0 - V_M_S / V_SPIN)),
    ('against the scan', 0.0, V_M_S, L_M / (1.0 + V_M_S / V_SPIN)),
    ('across the scan', -V_M_S, 0.0, L_M)])
def test_a_moving_box_looks_stretched_or_squeezed_by_its_speed_over_the_beams(
        motion, vx, vy, expected_m):
    # The beam crosses the box in L / (v_spin -+ v): it looks L / (1 -+ v / v_spin) long, to
    # first order L (1 +- v / v_spin) (0.080 m, 4.5 column spacings off L; the second order
    # term is 6 mm). Moving towards the sensor the box keeps its length.
    cfg = LidarConfig(**RING)
    world = _world([_moving_box(vx, vy, _t_ahead(cfg))])
    res = LidarSimulator(cfg, world, world.materials).scan(STILL, 0.0)
    on_box = res.points[res.points['instance_id'] == 1]
    assert len(on_box) > 40
    # n points a column apart span (n - 1) spacings; n spacings is the length within one.
    n = len(on_box)
    apparent = float(on_box['y'].max() - on_box['y'].min()) * n / (n - 1)
    # bound: one column spacing either side (where the first and last beams fall on the edges)
    assert abs(apparent - expected_m) <= SPACING_M
    first_order = L_M * (1.0 + {'with the scan': 1, 'against the scan': -1,
                                'across the scan': 0}[motion] * V_M_S / V_SPIN)
    # bound: one column spacing plus the second-order term L (v / v_spin)^2 (6.3 mm)
    assert abs(apparent - first_order) <= SPACING_M + L_M * (V_M_S / V_SPIN) ** 2
    if motion != 'across the scan':
        # bound: the effect (80 mm) is 4.5 spacings: a static pose per sweep fails here
        assert abs(apparent - L_M) > 3 * SPACING_M


def test_every_box_point_lies_on_the_box_where_it_was_at_that_points_time():
    cfg = LidarConfig(**{**RING, 'channels': 8, 'vertical_fov_up_deg': 3.0,
                         'vertical_fov_down_deg': 3.0})
    actor = _moving_box(-3.0, -V_M_S, _t_ahead(cfg))
    world = _world([actor])
    res = LidarSimulator(cfg, world, world.materials).scan(STILL, 0.0)
    pts = res.points[res.points['instance_id'] == 1]
    assert len(pts) > 100 and np.all(pts['class_id'] == 30)
    box_at = world.actors[0].trajectory
    xyz = np.stack([pts['x'], pts['y'], pts['z'], np.ones(len(pts))], 1).astype(np.float64)
    world_xyz = np.einsum('ij,nj->ni', STILL([0.0])[0], xyz)
    local = np.einsum('nij,nj->ni', invert(box_at(pts['time'].astype(np.float64))), world_xyz)
    # On the front face (x = -0.1 in the box frame), inside its 1 x 1 m extent. bound: float32
    # point coordinates near 10 m (1 um) and the float32 time (0.5 s at 30 ns: 0.3 um at 10 m/s)
    # are far inside 0.1 mm.
    assert np.all(np.abs(local[:, 0] + 0.1) < 1e-4)
    assert np.all(np.abs(local[:, 1]) <= L_M / 2 + 1e-4)
    assert np.all(np.abs(local[:, 2]) <= 0.5 + 1e-4)


def test_the_embree_backend_sees_the_actors_where_open3d_does():
    cfg = LidarConfig(**RING)
    actor = _moving_box(0.0, -V_M_S, _t_ahead(cfg))
    clouds = [LidarSimulator(cfg, w, w.materials).scan(STILL, 0.0).points
              for w in (_world([actor]), _world([actor], EmbreeCaster))]
    assert len(clouds[0]) == len(clouds[1]) and len(clouds[0]) > 40
    assert np.array_equal(clouds[0]['instance_id'], clouds[1]['instance_id'])
    # bound: two float32 intersectors, 10 m: F32_HIT_ROUNDINGS x eps / 2 x 10 m ~ 10 um
    assert np.allclose(clouds[0]['range'], clouds[1]['range'], atol=1e-4)


def test_column_blocks_give_the_bytes_of_the_blocks_computed_one_by_one():
    cfg = LidarConfig(**{**RING, 'model': 'physical', 'noise_enabled': True,
                         'horizontal_samples': 720, 'channels': 4, 'column_blocks': 4})
    world = _world([_moving_box(0.0, -V_M_S, _t_ahead(cfg))])
    sim = LidarSimulator(cfg, world, world.materials)
    whole = sim.scan(STILL, 0.0, scan_index=3)
    poses = STILL(sim.pose_times(0.0))
    parts = [sim.scan_blocks(poses[np.r_[0, 1 + np.sort(cols)]], Sweep(0.0, None, 3), j, j + 1)
             for j, cols in enumerate(sim.block_columns)]
    assert np.any(whole.points['instance_id'] == 1)
    joined = np.sort(np.concatenate([p.points for p in parts]), order=['time', 'ring', 'range'])
    assert joined.tobytes() == np.sort(whole.points, order=['time', 'ring', 'range']).tobytes()


def test_the_sphere_cull_keeps_the_rays_numpy_finds_reaching_each_sphere():
    rng = np.random.default_rng(5)
    m, cols, n_a = 20000, 50, 3
    d = rng.normal(size=(m, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    rays = np.c_[rng.uniform(-1, 1, (m, 3)), d].astype(np.float32)
    column = rng.integers(0, cols, m)
    centre = rng.uniform(-5, 5, (n_a, cols, 3))
    centre[0, 7] = np.nan                           # an actor without a pose there
    radius = rng.uniform(0.5, 2.0, (n_a, cols))
    limit = np.where(rng.random(m) < 0.3, rng.uniform(0, 10, m), np.inf)
    live = np.array([True, True, False])            # the third is ignored
    # The kernel's layout (ActorFrame.spheres): per column x, y, z and r^2 of every actor.
    spheres = np.concatenate([centre, (radius * radius)[..., None]], axis=2).transpose(1, 2, 0)
    ray, actor = reach_spheres(rays, np.arange(m), column, np.ascontiguousarray(spheres), limit,
                               live, np.zeros(0, np.uint64), True)
    # pairs by ray, then actor
    assert np.all(np.diff(ray * n_a + actor) > 0)
    reach = np.zeros((n_a, m), bool)
    reach[actor, ray] = True
    o64, dd = rays[:, :3].astype(np.float64), rays[:, 3:].astype(np.float64)
    for a in range(n_a):
        o = o64 - centre[a, column]
        b = np.sum(o * dd, axis=1)
        disc = b * b - (np.sum(o * o, axis=1) - radius[a, column] ** 2)
        with np.errstate(invalid='ignore'):
            s = np.sqrt(disc)
            ref = (disc >= 0) & (-b + s >= 0) & (-b - s <= limit) & live[a]
        assert np.array_equal(reach[a], ref)
    assert 0 < reach[0].sum() < m and 0 < reach[1].sum() < m and not reach[2].any()
    assert not np.any(reach[0][column == 7])


def test_the_local_ray_kernel_gives_the_bits_of_numpy_in_the_same_order():
    rng = np.random.default_rng(8)
    rays = rng.normal(size=(500, 6)).astype(np.float32)
    cand = np.sort(rng.choice(500, 200, replace=False))
    pose = WorldTwist(pose_matrix_deg([3, -2, 1], [10, 20, 30]), [1, 2, 3, 0.5, 0.2, 0.1])(
        rng.uniform(0, 2, 200))
    got = np.empty((200, 6), np.float32)
    rays_to_local(rays, cand, np.ascontiguousarray(pose), got)
    o = rays[cand, :3].astype(np.float64) - pose[:, :3, 3]
    d = rays[cand, 3:].astype(np.float64)
    rot = pose[:, :3, :3]
    # R^T x, summed in the kernel's order: (x0 R0j + x1 R1j) + x2 R2j, then one float32 rounding.
    ref = np.concatenate([(v[:, :1] * rot[:, 0] + v[:, 1:2] * rot[:, 1]) + v[:, 2:] * rot[:, 2]
                          for v in (o, d)], axis=1).astype(np.float32)
    assert got.tobytes() == ref.tobytes()


def test_actors_are_cast_only_for_the_rays_that_reach_their_sphere():
    world = _world([_moving_box(0.0, 0.0, 0.0)])
    n = 1000
    d = np.c_[np.ones(n), np.linspace(-1, 1, n), np.zeros(n)]
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    seen = []
    pose_at = world.actors[0].trajectory

    def counting(t):
        seen.append(len(t))
        return pose_at(t)
    times = RayTimes(np.zeros(n), np.zeros(n, np.int64), np.zeros(1))
    hits = world.cast(np.tile([0.0, 0.0, 1.0], (n, 1)), d, 50.0, times=times,
                      actor_poses={'box': counting})
    # The sphere around the 0.2 x 1 x 1 box 10 m ahead spans about +-0.073 rad of the +-0.785
    # rad fan: about a tenth of the rays are posed and cast, and those that hit are inside it.
    assert seen[0] <= 3 and 0 < seen[-1] < n // 5
    assert 0 < np.count_nonzero(hits.instance_id == 1) <= seen[-1]


def test_a_waypoint_loop_drives_round_and_a_stop_path_holds_its_end():
    square = [[0, 0, 0], [4, 0, 0], [4, 4, 0], [0, 4, 0]]
    loop = WaypointPath(square, 2.0, loop=True)
    stop = WaypointPath(square, 2.0)
    # 16 m round at 2 m/s: 8 s a lap. At 9 s (18 m) the loop is 2 m along its first side again.
    # bound: allclose's default 1e-5 relative, 1e-8 m: float64 sums of a few metres (1e-15 m)
    assert np.allclose(loop([9.0])[0, :3, 3], [2, 0, 0])
    assert np.allclose(loop([7.0])[0, :3, 3], [0, 2, 0])          # on the closing side
    assert np.allclose(loop([7.0])[0, :3, 0], [0, -1, 0])         # heading -y
    # bound: as above
    assert np.allclose(stop([9.0])[0, :3, 3], [0, 4, 0])
    assert np.allclose(stop([-1.0])[0, :3, 3], [0, 0, 0])


@pytest.mark.parametrize('loop', [False, True])
def test_the_waypoint_kernel_gives_the_bits_of_the_numpy_path(loop):
    path = WaypointPath([[0, 0, 0], [4, 0, 1], [4, 4, 0], [0, 4, 2]], 3.0, loop=loop)
    t = np.random.default_rng(1).uniform(-2.0, 20.0, 20000)
    s = np.maximum(t, 0.0) * path.speed_m_s
    cum = path._cum
    s = np.mod(s, cum[-1]) if loop else np.minimum(s, cum[-1])
    seg = np.clip(np.searchsorted(cum, s, side='right') - 1, 0, len(cum) - 2)
    frac = (s - cum[seg]) / (cum[seg + 1] - cum[seg])
    ref = np.zeros((t.size, 4, 4))
    ref[:, :3, :3] = path._rot[seg]
    ref[:, :3, 3] = path.points[seg] + frac[:, None] * (path.points[seg + 1] - path.points[seg])
    ref[:, 3, 3] = 1.0
    assert path(t).tobytes() == ref.tobytes()


def test_a_world_twist_moves_in_the_world_frame_and_turns_about_the_actor():
    # bound: float64 trigonometry of a 90 deg turn, exact to 1e-12
    move = WorldTwist(pose_matrix_deg([1, 0, 0], [0, 0, 90]), [1, 0, 0, 0, 0, math.pi / 2])
    at = move([1.0])[0]
    assert np.allclose(at[:3, 3], [2, 0, 0], atol=1e-12)
    # bound: as above
    assert np.allclose(at[:3, 0], [-1, 0, 0], atol=1e-12)


@pytest.mark.parametrize('actor, where', [
    ({'name': 'a', 'motion': {'frame': 'x'}}, r"actors\[0\] 'a'\.type: unknown type None"),
    ({'name': 'a', 'type': 'box', 'size_m': [1, 1, 1]}, r"actors\[0\] 'a'\.motion: expected"),
    ({'name': 'a', 'type': 'box', 'size_m': [1, 1, 1], 'motion': {'frame': '2bad'}},
     r"actors\[0\] 'a'\.motion\.frame: expected a tf frame name"),
    ({'name': 'a', 'type': 'box', 'size_m': [1, 1, 1], 'motion': {'frame': '/map'}},
     r"actors\[0\] 'a'\.motion\.frame"),
    ({'name': 'a', 'type': 'box', 'size_m': [1, 1, 1],
      'motion': {'waypoints': [[0, 0, 0]], 'speed_m_s': 1}},
     r"actors\[0\] 'a'\.motion\.waypoints: expected at least 2"),
    ({'name': 'a', 'type': 'box', 'size_m': [1, 1, 1],
      'motion': {'waypoints': [[0, 0, 0], [1, 0, 0]], 'speed_m_s': float('nan')}},
     r"actors\[0\] 'a'\.motion\.speed_m_s: expected a speed > 0"),
    ({'name': 'a', 'type': 'box', 'size_m': [1, 1, 1],
      'motion': {'waypoints': [[0, 0, 0], [1, 0, 0]], 'speed_m_s': -1}},
     r"actors\[0\] 'a'\.motion\.speed_m_s"),
    ({'name': 'a', 'type': 'box', 'size_m': [1, 1, 1],
      'motion': {'pose': [0, 0, 0, 0, 0, 0], 'twist': [float('nan'), 0, 0, 0, 0, 0]}},
     r"actors\[0\] 'a'\.motion\.twist"),
    ({'name': 'a', 'type': 'plane', 'size_m': [1, 1], 'motion': {'frame': 'x'}},
     r"actors\[0\] 'a'\.type: unknown type 'plane'"),
])
def test_a_bad_actor_is_one_world_error_naming_the_actor_and_the_key(actor, where):
    with pytest.raises(WorldError, match=where) as info:
        _world([actor])
    assert '\n' not in str(info.value)


def test_a_million_actors_are_refused_by_count_before_any_is_built():
    entry = {'name': 'a', 'type': 'box', 'size_m': [1, 1, 1], 'motion': {'frame': 'x'}}
    with pytest.raises(WorldError, match=rf'actors: 1000000 actors, at most {MAX_ACTORS}'):
        _world([entry] * 10 ** 6)


def test_a_frame_actor_without_a_pose_is_not_drawn_and_one_with_a_pose_is():
    world = _world([{'name': 'bot', 'type': 'box', 'size_m': [1, 1, 1],
                     'motion': {'frame': 'robot2/base_link'}}])
    o, d = np.array([[0.0, 0, 0]]), np.array([[1.0, 0, 0]])
    assert len(world.cast(o, d, 50.0)) == 0
    there = BodyTwist(pose_matrix_deg([5, 0, 0], [0, 0, 0]))
    hits = world.cast(o, d, 50.0, actor_poses={'bot': there})
    # bound: allclose's 1e-5 relative (45 um) is above a float32 hit at 4.5 m (4 um)
    assert list(hits.instance_id) == [1] and np.allclose(hits.range_m, 4.5)
    nowhere = {'bot': lambda t: np.full((len(t), 4, 4), np.nan)}
    assert len(world.cast(o, d, 50.0, actor_poses=nowhere)) == 0
    with pytest.raises(ConfigError, match='times'):
        world.cast(o, d, 50.0, times=RayTimes(np.zeros(2), np.zeros(2, np.int64), np.zeros(1)))


def test_the_laser_scanner_and_the_terrain_sensor_see_an_actor_where_it_is_at_their_time():
    # A 1 m cube driving along +x at 1 m/s from x = 3 (centre) at t = 0, its top at z = 1.
    world = _world([{'name': 'cube', 'type': 'box', 'size_m': [1, 1, 1],
                     'motion': {'pose': [3, 0, 0.5, 0, 0, 0], 'twist': [1, 0, 0, 0, 0, 0]}}])
    laser = LaserScanner(LaserScanConfig(fov_deg=10.0, resolution_deg=1.0, noise_enabled=False,
                                         model='geometric'), world, world.materials)
    for stamp in (0.0, 2.0):
        scan = laser.scan(BodyTwist(pose_matrix_deg([0, 0, 0.5], [0, 0, 0])), stamp)
        centre = int(np.argmin(np.abs(laser.azimuth_rad)))
        # The face at x = 2.5 + stamp (the scan's 10 rays fire within 0.3 ms: 0.3 mm).
        # bound: 1 mm, above the 0.3 mm the cube moves while the scan fires
        assert abs(scan.ranges[centre] - (2.5 + stamp)) < 1e-3
    # A 6 x 6 m slab, top at z = 1, driving +x at 10 m/s: under the base (x = 0) at t = 1 s.
    slab = _world([{'name': 'slab', 'type': 'box', 'size_m': [6, 6, 1],
                    'motion': {'pose': [-10, 0, 0.5, 0, 0, 0], 'twist': [10, 0, 0, 0, 0, 0]}}])
    terrain = TerrainSensor(TerrainConfig(), slab)
    above = pose_matrix_deg([0.0, 0, 1.6], [0, 0, 0])
    before, over = (terrain.sample(above, time_s=t) for t in (0.0, 1.0))
    assert list(before.hit_flg[1:]) == [0] * 4 and list(over.hit_flg[1:]) == [1] * 4
    # bound: float32 hits 0.6 m below the tire rays' starts (f32_hit_bound_m: under 1 um)
    assert np.allclose(np.asarray(over.hit_loc)[1:, 2], 1.0, atol=1e-5)


def test_two_compute_processes_give_the_in_process_bytes_with_trajectory_and_frame_actors():
    cfg = LidarConfig(**{**RING, 'model': 'physical', 'horizontal_samples': 720, 'channels': 4,
                         'column_blocks': 4, 'compute_workers': 2})
    world = _world([_moving_box(0.0, -V_M_S, _t_ahead(cfg)),
                    {'name': 'bot', 'type': 'cylinder', 'radius_m': 0.5, 'height_m': 1.0,
                     'motion': {'frame': 'bot/base_link'}}])
    sim = LidarSimulator(cfg, world, world.materials)
    # The frame actor as a node hands it over: its /tf poses sampled at the sweep's times,
    # driving from (-8, 3) along +x at 20 m/s, behind-left of the sensor.
    times = np.sort(sim.pose_times(0.0))
    frame = {'bot': SampledPath(times, BodyTwist(
        pose_matrix_deg([-8, 3, 1], [0, 0, 0]), [20, 0, 0, 0, 0, 0])(times))}
    here = sim.scan(STILL, 0.0, None, 2, actor_poses=frame)
    proc = ScanProcess(cfg, world, world.materials, workers=2)
    try:
        blocks = BlockPipeline(sim, proc)
        for j in range(len(sim.block_columns)):
            blocks.submit(j, STILL(sim.block_pose_times(0.0, j, j + 1)),
                          Sweep(0.0, None, 2, frame))
        there = merge_columns(blocks.results(), sim.block_columns, cfg.channels)[0]
    finally:
        proc.close()
    assert set(np.unique(here.points['instance_id'])) == {1, 2}       # no static hit here
    assert here.points.tobytes() == there.points.tobytes()


def test_each_sub_ray_meets_the_actors_at_its_columns_time_plus_its_lasers_offset():
    cfg = effective_config('lidar_3d', overrides={'preset': 'velodyne_vlp16', 'sub_rays': 7})
    world = _world([_moving_box(0.0, 0.0, 0.0)])
    sim = LidarSimulator(cfg, world, world.materials)
    beams = sim.beams
    assert np.ptp(beams.ring_time_offset_s) > 0.0          # the preset's firing offsets
    times = sim.ray_times(5.0)
    beam = np.arange(beams.n_beams).repeat(7)              # sub-ray b * 7 + k of beam b
    expected = 5.0 + (beams.column_time_s[beams.column] + beams.ring_time_offset_s[beams.ring])
    assert np.array_equal(times.time_s, expected[beam])
    assert np.array_equal(times.column, beams.column[beam])
    assert np.array_equal(times.column_time_s, 5.0 + beams.column_time_s)


def test_ignored_objects_leave_an_actor_out_by_its_name():
    world = _world([{'name': 'bot', 'type': 'box', 'size_m': [1, 1, 1],
                     'motion': {'pose': [5, 0, 0, 0, 0, 0]}}])
    o, d = np.array([[0.0, 0, 0]]), np.array([[1.0, 0, 0]])
    assert list(world.cast(o, d, 50.0).instance_id) == [1]
    assert len(world.cast(o, d, 50.0, ignored=('bot',))) == 0


def test_the_casts_of_one_sweep_pose_their_actors_once_and_hit_what_a_fresh_frame_hits():
    cfg = effective_config('lidar_3d', overrides={'preset': 'velodyne_vlp16', 'sub_rays': 7})
    world = _world([_moving_box(0.0, -V_M_S, 0.05)])
    sim = LidarSimulator(cfg, world, world.materials)
    every = sim.ray_times(0.0)
    beam = np.arange(sim.beams.n_beams)
    centres = sim.ray_times(0.0, beam)                   # a sub-ray of each beam: fewer offsets
    a = world.actor_frame(every.time_s.size, every)
    b = world.actor_frame(beam.size, centres)
    # The spheres of the first frame (its offsets cover the second's) are reused ...
    assert b.spheres is a.spheres and b.times is centres
    # ... for the same actors and columns only: another sweep's columns pose them anew.
    later = sim.ray_times(0.1, beam)
    c = world.actor_frame(beam.size, later)
    assert c.spheres is not a.spheres and not np.array_equal(c.spheres, a.spheres)
    # A reused frame's wider spheres cull fewer rays, never a hit: the same hits as a fresh one.
    o, d, _ = sim.rays(STILL, 0.0)
    o, d = o[::7], d[::7]                                # the beams' first sub-rays
    assert world.actor_frame(every.time_s.size, every).spheres is not c.spheres
    reused = world.cast(o, d, 50.0, times=centres)       # the whole sweep's spheres
    world._tracer.actors._spheres = None                 # noqa: SLF001 (a fresh frame)
    fresh = world.cast(o, d, 50.0, times=centres)
    assert np.count_nonzero(fresh.instance_id == 1) > 10
    assert np.array_equal(reused.instance_id, fresh.instance_id)
    assert np.array_equal(reused.range_m, fresh.range_m)
