"""
Sensors on one vehicle: simulators built once per world, frames in the order a robot publishes.

The same core calls as the offline CLI (LidarSimulator through execution.worker.sweep,
LaserScanner.scan, TerrainSensor.sample); no physics here. Times are s from the recording's
start; sweep k of a sensor starts at k / rate_hz. The first sensor leads: a recording of N
frames lasts N / its rate_hz, and every sensor gives the sweeps that start within it.
"""

from dataclasses import dataclass, replace
import heapq
import math

import numpy as np

from ubot_lidar_sim.core.execution.worker import compute_pool, sweep
from ubot_lidar_sim.core.sensors.laser import LaserScanner
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.sensors.sweep import Sweep
from ubot_lidar_sim.core.sensors.terrain import TerrainSensor
from ubot_lidar_sim.output.deskew import deskewed
from ubot_lidar_sim.pipeline.trajectory import Mounted

SENSOR_KINDS = ('lidar_3d', 'laser_scan', 'terrain_sensor')
MESSAGE_OF = {'lidar_3d': 'points', 'laser_scan': 'scan', 'terrain_sensor': 'terrain'}


@dataclass(frozen=True, eq=False)
class RigSensor:
    """
    One sensor of a rig: kind (SENSOR_KINDS), name (label key), frozen config, topic.

    mount (4, 4) base-from-sensor (lidar_3d, laser_scan; the terrain sensor places its rays in
    the base frame by its own parameters and keeps the identity).
    """

    kind: str
    name: str
    cfg: object
    mount: np.ndarray
    topic: str

    @property
    def frame_id(self):
        """Header frame of the sensor's messages (terrain: the world frame of its points)."""
        return self.cfg.world_frame if self.kind == 'terrain_sensor' else self.cfg.frame_id


@dataclass(frozen=True, eq=False)
class Frame:
    """Sweep ``index`` of ``sensor``: stamp_s, publish_s (when a driver sends it), result."""

    sensor: RigSensor
    index: int
    stamp_s: float
    publish_s: float
    result: object


def sweep_times(cfg, kind, k):
    """Return (stamp_s, publish_s) of sweep k: stamp per stamp_at, published when it ends."""
    period = 1.0 / cfg.rate_hz
    if kind == 'terrain_sensor':
        return k * period, k * period
    end = kind == 'lidar_3d' and cfg.stamp_at == 'end'
    return (k + 1 if end else k) * period, (k + 1) * period


def frame_counts(sensors, frames):
    """Sweeps per sensor in a recording of ``frames`` sweeps of the first sensor."""
    lead = sensors[0].cfg.rate_hz
    return [max(1, math.ceil(frames * s.cfg.rate_hz / lead - 1e-9)) for s in sensors]


def schedule(sensors, frames):
    """
    Yield (publish_s, sensor index, k) of every sweep, in publish order.

    Lazily (one pending sweep per sensor), so a long recording holds no list of its sweeps.
    """
    def sweeps(i, s, n):
        return ((sweep_times(s.cfg, s.kind, k)[1], i, k) for k in range(n))

    return heapq.merge(*(sweeps(i, s, n) for i, (s, n) in
                         enumerate(zip(sensors, frame_counts(sensors, frames)))))


def end_s(sensors, frames):
    """Return when the last sweep of a recording of ``frames`` lead sweeps is published, s."""
    return max(sweep_times(s.cfg, s.kind, n - 1)[1]
               for s, n in zip(sensors, frame_counts(sensors, frames)))


class Rig:
    """The simulators of ``sensors`` (list of RigSensor) in one world, built once."""

    def __init__(self, sensors, world, materials):
        self.sensors, self.world = list(sensors), world
        self._sims, self._pools = [], []
        try:
            for s in self.sensors:
                pool = None
                if s.kind == 'lidar_3d':
                    sim = LidarSimulator(s.cfg, world, materials)
                    pool = compute_pool(s.cfg, world, materials)   # same bytes
                elif s.kind == 'laser_scan':
                    sim = LaserScanner(s.cfg, world, materials)
                else:
                    sim = TerrainSensor(s.cfg, world)
                self._sims.append(sim)
                self._pools.append(pool)
        except BaseException:
            self.close()
            raise

    def close(self):
        """Stop the compute processes of the lidar sensors (if any)."""
        for pool in self._pools:
            if pool is not None:
                pool.close()
        self._pools = [None] * len(self._pools)

    def __enter__(self):
        """Return the rig."""
        return self

    def __exit__(self, *exc):
        """Close the rig."""
        self.close()

    def frames(self, base_at, weather, frames):
        """
        Yield every Frame of a recording of ``frames`` lead sweeps, in publish order.

        base_at(times (C,) s) -> world-from-base (C, 4, 4); weather: core Weather.
        """
        for _, i, k in schedule(self.sensors, frames):
            s, sim = self.sensors[i], self._sims[i]
            stamp, publish = sweep_times(s.cfg, s.kind, k)
            if s.kind == 'lidar_3d':
                res = sweep(sim, self._pools[i], _on(base_at, s.mount), Sweep(stamp, weather, k))
            elif s.kind == 'laser_scan':
                res = sim.scan_sweep(_on(base_at, s.mount), Sweep(stamp, weather, k))
            else:
                res = sim.sample(base_at([stamp])[0], time_s=stamp)
            yield Frame(s, k, stamp, publish, res)


def _on(base_at, mount):
    """Return the sensor's pose_at: the base's own when the mount is the identity (exact)."""
    return base_at if np.array_equal(mount, np.eye(4)) else Mounted(base_at, mount)


class TappedRig:
    """A rig whose every frame is passed to on_frame(frame) as it is yielded (views, progress)."""

    def __init__(self, rig, on_frame):
        self.rig, self.on_frame, self.sensors = rig, on_frame, rig.sensors
        self.world = rig.world

    def frames(self, base_at, weather, frames):
        """Yield the rig's frames, each after on_frame has seen it."""
        for fr in self.rig.frames(base_at, weather, frames):
            self.on_frame(fr)
            yield fr


def deskewed_frame(fr, base_at):
    """
    Return a lidar_3d Frame with its points ego-motion compensated; any other as it is.

    Every point moved into the sensor frame at the sweep's stamp (output/deskew.py), the
    sensor's pose from base_at (the base trajectory) and its mount; its ``time`` is kept.
    """
    if fr.sensor.kind != 'lidar_3d':
        return fr
    points = deskewed(fr.result.points, fr.stamp_s, _on(base_at, fr.sensor.mount))
    return replace(fr, result=replace(fr.result, points=points))


class DeskewedRig:
    """A rig whose lidar_3d frames come deskewed (deskewed_frame): ``scan --deskew``."""

    def __init__(self, rig):
        self.rig, self.sensors, self.world = rig, rig.sensors, rig.world

    def frames(self, base_at, weather, frames):
        """Yield the rig's frames, the lidar_3d sweeps deskewed."""
        for fr in self.rig.frames(base_at, weather, frames):
            yield deskewed_frame(fr, base_at)
