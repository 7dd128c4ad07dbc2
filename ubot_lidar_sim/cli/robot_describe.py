"""``describe --robot FILE``: each sensor found, what it became, every tag not honoured."""

import json

from ubot_lidar_sim.core.config import applicable_names
from ubot_lidar_sim.core.robot.load import load_robot, parse_args
from ubot_lidar_sim.core.robot.mapping import imu_params, sensor_config
from ubot_lidar_sim.output.files import jsonable


def describe_robot(args):
    """Return the JSON text describing the robot's sensors, base and notes."""
    desc = load_robot(args.robot, parse_args(args.robot_args), args.model_paths)
    sensors = []
    for s in desc.sensors:
        kind, cfg = sensor_config(s, params_file=args.params)
        sensors.append({
            'name': s.name, 'type': s.type, 'link': s.link, 'read_by': s.source,
            'topic': s.topic, 'frame_id': s.frame_id, 'message_type': s.message_type,
            'update_rate_hz': s.update_rate_hz, 'rays': [s.vertical.count, s.horizontal.count],
            'angle_min': s.horizontal.min_angle, 'angle_max': s.horizontal.max_angle,
            'angle_increment': s.horizontal.step,
            'vertical_angles': [s.vertical.min_angle, s.vertical.max_angle],
            'range_min': s.range_min_m, 'range_max': s.range_max_m,
            'noise': {'mean': s.noise_mean_m, 'stddev': s.noise_stddev_m},
            'became': kind,
            'settings': {n: getattr(cfg, n) for n in applicable_names(cfg)},
            'not_honoured': [n.line() for n in s.notes]})
    out = {'robot': desc.name, 'source': desc.source, 'root_link': desc.root,
           'links': {name: len(parts) for name, parts in desc.links.items()},
           'joints': [{'name': j.name, 'type': j.type, 'parent': j.parent, 'child': j.child}
                      for j in desc.joints],
           'sensors': sensors,
           'imus': [{'name': i.name, 'topic': i.topic, 'frame_id': i.frame_id,
                     'update_rate_hz': i.update_rate_hz,
                     'angular_velocity_stddev': i.angular_velocity_stddev,
                     'linear_acceleration_stddev': i.linear_acceleration_stddev,
                     **_imu_became(desc, k, i)} for k, i in enumerate(desc.imus)],
           'base': None if desc.drive is None else {
               'plugin': desc.drive.plugin, 'drive': desc.drive.drive, 'topic': desc.drive.topic,
               'base_sim': desc.drive.values,
               'not_honoured': [n.line() for n in desc.drive.notes]},
           'not_honoured': [n.line() for n in desc.notes]}
    return json.dumps(jsonable(out), indent=2)


def _imu_became(desc, k, imu):
    """Return {'became': ..., 'base_sim': parameters, 'not_honoured': notes} of imu k."""
    if k:
        return {'became': 'not started: base_sim has one IMU, the first'}
    values, notes = imu_params(desc, imu)
    return {'became': "base_sim's IMU", 'base_sim': values, 'not_honoured': notes}


def command(args, checked=None):
    """Print the robot's description as JSON; return 0."""
    print(describe_robot(args))
    return 0
