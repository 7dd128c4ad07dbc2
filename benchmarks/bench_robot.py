"""
Robot description case (issue 51): scan time with and without self-occlusion.

A VLP-16 and a 2D laser on a robot whose body has 2,000 triangles.

The robot (written here): a base link whose collision is a 500-section cylinder (2,000
triangles, trimesh), a 16 x 1800 gpu_ray VLP-16 on a mast and a 720-ray gpu_lidar laser at the
front, in the demo world. Each sensor is scanned by core/robot/scanner.RobotScanner with its
body cast (self-occlusion) and without, the two taking turns; median ms over repeats and the
median of the paired ratios, with the 1-minute load average; geometric model as Gazebo's.
Two cases: the robot standing (the same pose every scan) and moving (1 cm further along x every
scan). Either way the body is rigid with the sensor: it is cast once in the sensor frame and each
scan merges those hits (core/raycast/sensor_mount.py, fixed_actors.py FixedActors.cast_mounted).

Usage: python benchmarks/bench_robot.py [--repeats 20]
"""

import argparse
import os
from pathlib import Path
import sys
import tempfile
import time

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402,F401,I100  (the source tree first on sys.path)
import numpy as np  # noqa: E402,I100
import trimesh  # noqa: E402

from ubot_lidar_sim.core.robot.load import load_robot  # noqa: E402
from ubot_lidar_sim.core.robot.scanner import RobotScanner  # noqa: E402
from ubot_lidar_sim.core.world.materials import MaterialTable  # noqa: E402
from ubot_lidar_sim.core.world.world import World  # noqa: E402

COLUMNS = ('case', 'robot', 'sensor', 'rays', 'body_triangles', 'self_occlusion_ms_median',
           'no_self_occlusion_ms_median', 'ratio', 'load_1min')

ROBOT = """<robot name="benchbot">
 <link name="base_link"><collision><origin xyz="0 0 0.3"/><geometry>
  <mesh filename="body.stl"/></geometry></collision></link>
 <link name="velodyne"/><link name="laser"/>
 <joint name="v" type="fixed"><parent link="base_link"/><child link="velodyne"/>
  <origin xyz="0 0 1.0"/></joint>
 <joint name="l" type="fixed"><parent link="base_link"/><child link="laser"/>
  <origin xyz="0.45 0 0.4"/></joint>
 <gazebo reference="velodyne"><sensor type="gpu_ray" name="vlp16"><update_rate>10</update_rate>
  <ray><scan><horizontal><samples>1800</samples><min_angle>-3.14159265</min_angle>
  <max_angle>3.14159265</max_angle></horizontal><vertical><samples>16</samples>
  <min_angle>-0.2617993877991494</min_angle><max_angle>0.2617993877991494</max_angle>
  </vertical></scan><range><min>0.3</min><max>100</max></range></ray>
  <plugin name="v" filename="libgazebo_ros_velodyne_gpu_laser.so">
  <topicName>/velodyne_points</topicName><frameName>velodyne</frameName></plugin></sensor>
 </gazebo>
 <gazebo reference="laser"><sensor type="gpu_lidar" name="laser"><update_rate>15</update_rate>
  <topic>scan</topic><lidar><scan><horizontal><samples>720</samples>
  <min_angle>-2.35619</min_angle><max_angle>2.35619</max_angle></horizontal></scan>
  <range><min>0.05</min><max>30</max></range></lidar></sensor></gazebo>
</robot>"""


def _paired_ms(scanners, poses, repeats):
    """
    Return (median ms with, median ms without, median ratio) of interleaved scans.

    The two scanners take turns, so that both see the same load (2 busy cores drift by tens
    of per cent within a minute); the ratio is the median of the per-pair ratios.
    """
    for scanner in scanners:
        scanner.scan(poses(-1))     # warm-up: kernels, scenes
    pairs = []
    for k in range(repeats):
        ms = []
        for scanner in (scanners if k % 2 == 0 else scanners[::-1]):
            t0 = time.perf_counter()
            scanner.scan(poses(k))
            ms.append((time.perf_counter() - t0) * 1e3)
        pairs.append(ms if k % 2 == 0 else ms[::-1])
    a = np.asarray(pairs)
    return (float(np.median(a[:, 0])), float(np.median(a[:, 1])),
            float(np.median(a[:, 0] / a[:, 1])))


def _moving(k):
    """Return the robot's pose at scan k: 1 cm further along x each scan."""
    pose = np.eye(4)
    pose[0, 3] = 0.01 * k
    return pose


def run(repeats=20):
    """Return the four rows (standing, moving) x (VLP-16, 2D laser)."""
    with tempfile.TemporaryDirectory() as tmp:
        body = trimesh.creation.cylinder(0.4, 0.5, sections=500)
        (Path(tmp) / 'body.stl').write_bytes(trimesh.exchange.stl.export_stl(body))
        (Path(tmp) / 'bot.urdf').write_text(ROBOT)
        desc = load_robot(Path(tmp) / 'bot.urdf')
    materials = MaterialTable.load()
    world = World.load('demo', materials)
    rows = []
    cases = (('standing', lambda k: np.eye(4)), ('moving', _moving))
    for robot, poses, name in [(r, p, n) for r, p in cases for n in ('vlp16', 'laser')]:
        scanners = [RobotScanner(desc, name, world, materials, self_occlusion=occlusion)
                    for occlusion in (True, False)]
        load = os.getloadavg()[0]
        with_ms, without_ms, ratio = _paired_ms(scanners, poses, repeats)
        s = desc.sensor(name)
        rows.append({'case': 'robot_self_occlusion', 'robot': robot, 'sensor': name,
                     'rays': s.horizontal.count * s.vertical.count,
                     'body_triangles': len(body.faces),
                     'self_occlusion_ms_median': round(with_ms, 2),
                     'no_self_occlusion_ms_median': round(without_ms, 2),
                     'ratio': round(ratio, 3), 'load_1min': round(load, 1)})
    return rows


def main(argv=None):
    """Print the rows as a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--repeats', type=int, default=20)
    rows = run(parser.parse_args(argv).repeats)
    print(' | '.join(COLUMNS))
    for row in rows:
        print(' | '.join(str(row[c]) for c in COLUMNS))


if __name__ == '__main__':
    main()
