"""
The peer of the geometric-mode rows: mujoco-lidar (PyPI, a bench-only extra) on the same world.

The built-in demo world's objects (planes, boxes, spheres, cylinders: every type it uses) become
MuJoCo primitive geoms of the same size and pose, and mujoco-lidar casts the same beams (azimuth,
elevation of each beam's sensor-frame direction) from the same pose, one hit per ray, 100 m
cutoff. One call per sweep is what a user of it runs per scan: update the geoms, trace the rays,
read the hit points back as numpy. Its CPU backends are 'cpu' (MuJoCo's mj_multiRay) and 'warp'
(Warp kernels on the CPU device); each is timed, and the rows compare against the fastest.
"""

import numpy as np

CPU_BACKENDS = ('cpu', 'warp')


def _quat(rot):
    """Return the unit quaternion (w, x, y, z) of a rotation matrix (3, 3)."""
    w = np.sqrt(max(0.0, 1.0 + np.trace(rot))) / 2.0
    if w > 1e-6:
        return (w, (rot[2, 1] - rot[1, 2]) / (4 * w), (rot[0, 2] - rot[2, 0]) / (4 * w),
                (rot[1, 0] - rot[0, 1]) / (4 * w))
    i = int(np.argmax(np.diag(rot)))
    j, k = (i + 1) % 3, (i + 2) % 3
    s = np.sqrt(max(0.0, 1.0 + rot[i, i] - rot[j, j] - rot[k, k])) * 2.0
    q = np.zeros(4)
    q[0] = (rot[k, j] - rot[j, k]) / s
    q[1 + i] = s / 4.0
    q[1 + j] = (rot[j, i] + rot[i, j]) / s
    q[1 + k] = (rot[k, i] + rot[i, k]) / s
    return tuple(q)


def demo_mjcf(world='demo'):
    """Return the MJCF text of a built-in world as MuJoCo primitive geoms in the worldbody."""
    # Imported here: the benchmarks put the source tree on sys.path in common.py, which a
    # module imported before it (bench_lidar imports this one first) must not pre-empt.
    from ubot_lidar_sim.core.poses import rotation_rpy
    from ubot_lidar_sim.core.world.builtin import build
    geoms = []
    for obj in build(world)['objects']:
        pose = obj.get('pose', {})
        xyz = pose.get('xyz', [0.0, 0.0, 0.0])
        quat = _quat(rotation_rpy(*np.radians(pose.get('rpy_deg', [0.0, 0.0, 0.0]))))
        kind = obj['type']
        if kind == 'plane':
            sx, sy = obj['size_m']
            shape = f'type="plane" size="{sx / 2} {sy / 2} 1"'
        elif kind == 'box':
            sx, sy, sz = obj['size_m']
            shape = f'type="box" size="{sx / 2} {sy / 2} {sz / 2}"'
        elif kind == 'sphere':
            shape = f'type="sphere" size="{obj["radius_m"]}"'
        elif kind == 'cylinder':
            shape = f'type="cylinder" size="{obj["radius_m"]} {obj["height_m"] / 2}"'
        else:
            raise ValueError(f'no MuJoCo primitive for {kind}')
        geoms.append(f'<geom name="{obj["name"]}" {shape} pos="{xyz[0]} {xyz[1]} {xyz[2]}" '
                     f'quat="{quat[0]} {quat[1]} {quat[2]} {quat[3]}"/>')
    return ('<mujoco><worldbody>' + ''.join(geoms)
            + '<site name="lidar" pos="0 0 0"/></worldbody></mujoco>')


class Peer:
    """One mujoco-lidar CPU backend on the demo world, casting given sensor-frame beams."""

    def __init__(self, backend, dir_sensor, cutoff_m=100.0):
        """Build the scene for backend 'cpu' or 'warp'; dir_sensor (B, 3) unit, sensor frame."""
        import mujoco
        self._mujoco = mujoco
        self.model = mujoco.MjModel.from_xml_string(demo_mjcf())
        self.data = mujoco.MjData(self.model)
        mujoco.mj_forward(self.model, self.data)
        d = np.asarray(dir_sensor, np.float64)
        self.theta = np.arctan2(d[:, 1], d[:, 0])
        self.phi = np.arcsin(np.clip(d[:, 2], -1.0, 1.0))
        if backend == 'cpu':
            from mujoco_lidar.core_cpu.mjlidar_cpu import MjLidarCPU
            self.lidar = MjLidarCPU(self.model, cutoff_dist=cutoff_m)
        elif backend == 'warp':
            from mujoco_lidar.core_warp.mjlidar_warp import MjLidarWarp
            self.lidar = MjLidarWarp(self.model, cutoff_dist=cutoff_m, device='cpu')
            self.theta, self.phi = self.theta.astype(np.float32), self.phi.astype(np.float32)
        else:
            raise ValueError(f'not a CPU backend of mujoco-lidar: {backend}')
        self.backend = backend

    def scan(self, pose):
        """Trace every beam once from pose (4, 4); returns the hit distances (B,) (-1: none)."""
        self.lidar.update(self.data)
        self.lidar.trace_rays(pose, self.theta, self.phi)
        self.lidar.get_hit_points()
        return np.asarray(self.lidar.get_distances())


def peers(dir_sensor):
    """Return {backend: Peer} for the CPU backends that import here (mujoco-lidar installed)."""
    out = {}
    for backend in CPU_BACKENDS:
        try:
            out[backend] = Peer(backend, dir_sensor)
        except ImportError:
            continue
    return out
