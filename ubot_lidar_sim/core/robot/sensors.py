"""
A ``<sensor>`` element (an SDF link's, or a URDF ``<gazebo reference>`` block's) -> RobotSensor.

Gazebo's meaning of each tag, read in gz-sensors and gazebo_ros_pkgs (commits in docs/robots.md):
- rays = samples x resolution and step = (max - min) / (rays - 1): gz-sensors src/Lidar.cc:357-380
  (AngleResolution, RayCount, RangeCount); vertical rows likewise, at least 1 (Lidar.cc:389-396);
  sdformat sdf/1.12/lidar.sdf: max_angle must be >= min_angle, samples default 640.
- noise: Gaussian mean / stddev added to each range, then clamped to [min, max] (Lidar.cc:166-186,
  223-238, Clamp at 517-526); another noise type is listed.
- frame id: ``<frame_id>``, else the deprecated ``<gz_frame_id>`` (gz-sensors Sensor.cc:181-196),
  ``<ignition_frame_id>`` (Fortress), a plugin's ``frame_name`` (gazebo_ros utils.cpp:52-61) or
  ``frameName`` (velodyne_simulator), else the link (docs/robots.md says why not the sensor name).
- gazebo_ros_ray_sensor: ``output_type`` (default sensor_msgs/PointCloud2), topic ``~/out`` of the
  node named by the plugin, remapped by ``<ros><remapping>`` and placed in ``<ros><namespace>``
  (gazebo_plugins/src/gazebo_ros_ray_sensor.cpp:110-128).
- velodyne_simulator (libgazebo_ros_velodyne_laser.so / _gpu_): ``topicName`` (default /points),
  ``frameName``, ``min_range`` / ``max_range`` narrowing the sensor's range, ``gaussianNoise``.
"""

import math
from xml.etree.ElementTree import Element

import numpy as np

from ubot_lidar_sim.core.robot.description import (ImuSensor, Note, RobotError, RobotSensor,
                                                   ScanAxis)
from ubot_lidar_sim.core.world.sdf.poses import parse_pose
from ubot_lidar_sim.core.world.sdf.reading import SdfError

RANGE_TYPES = ('lidar', 'gpu_lidar', 'ray', 'gpu_ray', 'cpu_lidar')
SCAN = 'sensor_msgs/msg/LaserScan'
CLOUD = 'sensor_msgs/msg/PointCloud2'
RAY_PLUGIN = 'libgazebo_ros_ray_sensor.so'
VELODYNE_PLUGINS = ('libgazebo_ros_velodyne_laser.so', 'libgazebo_ros_velodyne_gpu_laser.so')
IMU_PLUGIN = 'libgazebo_ros_imu_sensor.so'
# Tags of a sensor that change nothing our nodes publish (always on; no rendering here).
NO_EFFECT = {'always_on': 'our sensor nodes always run',
             'visualize': 'no Gazebo rendering here (lidar_3d draws ~/fov_markers)',
             'enable_metrics': 'Gazebo-internal metrics'}
OUTPUT_TYPES = {'sensor_msgs/LaserScan': SCAN, 'sensor_msgs/msg/LaserScan': SCAN,
                'sensor_msgs/PointCloud2': CLOUD, 'sensor_msgs/msg/PointCloud2': CLOUD}


def text_at(el: Element | None, path: str, default: str | None = None) -> str | None:
    """Return the stripped text at path below el, else default."""
    found = el.find(path) if el is not None else None
    if found is None or found.text is None or not found.text.strip():
        return default
    return found.text.strip()


def float_at(el: Element | None, path: str, where: str, default: float | None
             ) -> float | None:
    """Return a finite float at path (default when absent), else RobotError naming it."""
    text = text_at(el, path)
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise RobotError(f"{where}/{path}: '{text}' is not a finite number")
    return value


def _axis(scan, tag, where, default_samples):
    """Return the ScanAxis of <scan><tag>; RobotError for 0 rays or min_angle > max_angle."""
    el = scan.find(tag) if scan is not None else None
    here = f'{where}/scan/{tag}'
    samples = float_at(el, 'samples', here, default_samples)
    resolution = float_at(el, 'resolution', here, 1.0)
    lo, hi = float_at(el, 'min_angle', here, 0.0), float_at(el, 'max_angle', here, 0.0)
    if samples != int(samples) or samples < 1:
        raise RobotError(f"{here}/samples: got {text_at(el, 'samples')}, allowed an integer >= 1 "
                         '(samples x resolution rays)')
    if not resolution > 0 or samples * resolution < 1:
        raise RobotError(f'{here}/resolution: got {resolution:g}, allowed > 0 with samples x '
                         'resolution >= 1')
    if lo > hi:
        raise RobotError(f'{here}: min_angle {lo:g} > max_angle {hi:g} (allowed: max_angle >= '
                         'min_angle, sdformat lidar.sdf)')
    if hi - lo > 2 * math.pi + 1e-9:
        raise RobotError(f'{here}: max_angle - min_angle = {hi - lo:g} rad, allowed at most 2 pi')
    return ScanAxis(int(samples), resolution, lo, hi)


def ros_topic(plugin: Element | None, own: str = '~/out') -> str:
    """Return a gazebo_ros plugin's topic: its own (~/out) remapped, in its <ros><namespace>."""
    name = plugin.get('name') or 'plugin'
    topic = own
    ns = '/' + text_at(plugin, 'ros/namespace', '').strip('/')
    for remap in plugin.findall('ros/remapping') + plugin.findall('ros/argument'):
        text = (remap.text or '').replace('--remap', '').replace('-r', '', 1).strip()
        src, sep, dst = text.partition(':=')
        if sep and src.strip() in (own, own.replace('~/', '')):
            topic = dst.strip()
    # ROS 2 name resolution: ~ is the node's name in its namespace, a relative name is in the
    # namespace (the plugin's node is named by the plugin's name attribute)
    if topic.startswith('~'):
        topic = f"{ns.rstrip('/')}/{name}{topic[1:]}"
    elif not topic.startswith('/'):
        topic = f"{ns.rstrip('/')}/{topic}"
    return topic


def read_sensor(el: Element, link: str, where: str, notes: list[Note]
                ) -> RobotSensor | ImuSensor | None:
    """Return a RobotSensor or ImuSensor of a <sensor> element, or None (listed in notes)."""
    name, kind = el.get('name') or 'sensor', el.get('type') or ''
    where = f"{where}: sensor '{name}'"
    if kind == 'imu':
        return _imu(el, name, link, where, notes)
    if kind not in RANGE_TYPES:
        notes.append(Note(where, f'sensor type="{kind}"', 'not a range sensor; our nodes '
                          f"simulate {', '.join(RANGE_TYPES)} and imu"))
        return None
    sensor_notes = []
    try:
        link_from_sensor, rel = parse_pose(el.find('pose'), f'{where}/pose')
    except SdfError as exc:
        raise RobotError(str(exc)) from None
    if rel:
        sensor_notes.append(Note(where, 'pose relative_to', f"'{rel}' is read as the link"))
    body = el.find('lidar') if el.find('lidar') is not None else el.find('ray')
    if body is None:
        raise RobotError(f'{where}: no <lidar> or <ray> element (a {kind} sensor needs one)')
    scan = body.find('scan')
    horizontal = _axis(scan, 'horizontal', where, 640.0)
    vertical = (_axis(scan, 'vertical', where, 1.0) if scan is not None
                and scan.find('vertical') is not None else ScanAxis(1, 1.0, 0.0, 0.0))
    rmin = float_at(body, 'range/min', where, 0.0)
    rmax = float_at(body, 'range/max', where, 0.0)
    if not 0.0 <= rmin < rmax:
        raise RobotError(f'{where}/range: min {rmin:g}, max {rmax:g}; allowed 0 <= min < max')
    frame = (text_at(el, 'frame_id') or text_at(el, 'gz_frame_id')
             or text_at(el, 'ignition_frame_id'))
    values = {'topic': text_at(el, 'topic'), 'frame': frame, 'source': 'gz-sensors',
              'message': SCAN if vertical.count == 1 else CLOUD, 'rmin': rmin, 'rmax': rmax}
    noise = body.find('noise') if body.find('noise') is not None else el.find('noise')
    mean, std = _noise(noise, where, sensor_notes)
    for plugin in el.findall('plugin'):
        _plugin(plugin, values, where, sensor_notes)
        if values.get('gaussian') is not None:
            std = values['gaussian']
    for tag, why in NO_EFFECT.items():
        if el.find(tag) is not None:
            sensor_notes.append(Note(where, tag, why))
    res = float_at(body, 'range/resolution', where, 0.0)
    if res > 0:
        sensor_notes.append(Note(where, 'range/resolution', 'ranges are not quantised (float32 '
                                 'ranges, as gz-sensors publishes them)'))
    if horizontal.resolution != 1 or vertical.resolution != 1:
        sensor_notes.append(Note(where, 'scan/*/resolution', 'samples x resolution rays are '
                                 'traced, none interpolated (Gazebo interpolates)'))
    if values['topic'] is None:
        values['topic'] = name
        sensor_notes.append(Note(where, 'topic', f"absent: gz-sim's own topic means nothing to "
                                 f"ROS without a bridge rule; published on '{name}'"))
    frame = values['frame'] or link
    rate = float_at(el, 'update_rate', where, 0.0)
    if not rate > 0:
        raise RobotError(f'{where}/update_rate: got {rate:g}, allowed > 0 (Gazebo"s 0 means '
                         "'as fast as possible', which a simulated sensor cannot publish)")
    return RobotSensor(name, kind, link, link_from_sensor, values['topic'], frame,
                       values['message'], rate, horizontal, vertical, values['rmin'],
                       values['rmax'], res, mean, std, values['source'], tuple(sensor_notes))


def _noise(noise, where, notes):
    """Return the Gaussian (mean, stddev) of a <noise> element (0, 0 without one)."""
    if noise is None:
        return 0.0, 0.0
    kind = text_at(noise, 'type', 'none')
    if kind == 'none':
        return 0.0, 0.0
    if kind != 'gaussian':
        notes.append(Note(where, f'noise type {kind}', 'only gaussian noise is read '
                          '(gz-sensors Lidar.cc:186-190 warns likewise)'))
        return 0.0, 0.0
    std = float_at(noise, 'stddev', f'{where}/noise', 0.0)
    if std < 0:
        raise RobotError(f'{where}/noise/stddev: got {std:g}, allowed >= 0')
    for tag in ('bias_mean', 'bias_stddev', 'dynamic_bias_stddev', 'precision'):
        if noise.find(tag) is not None:
            notes.append(Note(where, f'noise/{tag}', 'only mean and stddev are applied'))
    return float_at(noise, 'mean', f'{where}/noise', 0.0), std


def _plugin(plugin, values, where, notes):
    """Apply a sensor plugin's values (classic ray, velodyne_simulator) or list it."""
    filename = plugin.get('filename') or ''
    if filename == RAY_PLUGIN:
        out = text_at(plugin, 'output_type', 'sensor_msgs/PointCloud2')
        if out not in OUTPUT_TYPES:
            notes.append(Note(where, 'plugin/output_type', f"'{out}' is not simulated "
                              '(LaserScan and PointCloud2 are)'))
        values['message'] = OUTPUT_TYPES.get(out, CLOUD)
        values['topic'] = ros_topic(plugin)
        values['frame'] = text_at(plugin, 'frame_name') or values['frame']
        values['source'] = 'gazebo_ros_ray_sensor'
    elif filename in VELODYNE_PLUGINS:
        values['topic'] = text_at(plugin, 'topicName', '/points')
        values['frame'] = text_at(plugin, 'frameName') or values['frame']
        values['message'] = CLOUD
        values['source'] = 'velodyne_simulator'
        # OnScan: MIN_RANGE = max(min_range, sensor min), MAX_RANGE = min(max_range, sensor max)
        values['rmin'] = max(values['rmin'], float_at(plugin, 'min_range', where, 0.0))
        values['rmax'] = min(values['rmax'], float_at(plugin, 'max_range', where, math.inf))
        values['gaussian'] = float_at(plugin, 'gaussianNoise', where, 0.0)
        for tag in ('organize_cloud', 'min_intensity'):
            if plugin.find(tag) is not None:
                notes.append(Note(where, f'plugin/{tag}', 'the cloud is dense in our '
                                  'point_layout (docs/nodes.md); intensities are ours'))
    else:
        notes.append(Note(where, f"plugin filename='{filename}'", 'unknown sensor plugin; '
                          'the sensor itself is simulated, the plugin is not'))


def _imu(el, name, link, where, notes):
    """
    Return the ImuSensor of an imu <sensor>: topic, frame, rate, mount and noise stddevs.

    gz-sensors adds to each axis, every sample, a Gaussian draw of <noise>'s mean and stddev
    (plus a bias drawn once): src/ImuSensor.cc:237-250 and src/GaussianNoiseModel.cc:111-142
    (commit 9ba02f2). The stddev is per sample; the largest of the three axes is kept, and the
    mean and bias terms are listed as not honoured.
    """
    topic, frame = text_at(el, 'topic'), text_at(el, 'frame_id') or text_at(el, 'gz_frame_id')
    for plugin in el.findall('plugin'):
        if plugin.get('filename') == IMU_PLUGIN:
            topic = ros_topic(plugin)
            frame = text_at(plugin, 'frame_name') or frame
        else:
            notes.append(Note(where, f"plugin filename='{plugin.get('filename')}'",
                              'unknown imu plugin'))
    try:
        mount, _ = parse_pose(el.find('pose'), f'{where}/pose')
    except SdfError as exc:
        raise RobotError(str(exc)) from None
    std = {}
    for part in ('angular_velocity', 'linear_acceleration'):
        values = []
        for axis in ('x', 'y', 'z'):
            noise = el.find(f'imu/{part}/{axis}/noise')
            values.append(float_at(noise, 'stddev', f'{where}/imu/{part}/{axis}/noise', 0.0))
            for tag in ('mean', 'bias_mean', 'bias_stddev', 'dynamic_bias_stddev',
                        'precision'):
                if noise is not None and float_at(noise, tag, where, 0.0) != 0.0:
                    notes.append(Note(where, f'imu/{part}/{axis}/noise/{tag}',
                                      'only the white noise stddev is applied'))
        if any(v < 0 for v in values):
            raise RobotError(f'{where}/imu/{part}: noise stddev {min(values):g}, allowed >= 0')
        if len(set(values)) > 1:
            notes.append(Note(where, f'imu/{part}/*/noise/stddev', 'one stddev for the three '
                              f'axes: the largest, {max(values):g}'))
        std[part] = float(np.max(values))
    rate = float_at(el, 'update_rate', where, 0.0)
    if rate < 0:
        raise RobotError(f'{where}/update_rate: got {rate:g}, allowed >= 0')
    return ImuSensor(name, link, topic or name, frame or link, rate, std['angular_velocity'],
                     std['linear_acceleration'], mount)
