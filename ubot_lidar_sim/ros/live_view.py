"""
The live view of a running graph: a node that feeds output/view.View from the ROS topics.

Per robot (a namespace, '' for a single robot) it subscribes the PointCloud2 ``points``, the
LaserScan ``scan`` and lidar_3d's actor boxes ``lidar_3d/boxes`` (MarkerArray); for the whole
graph ``/environment`` (the weather) and, unless a lookup is given, ``/tf`` and ``/tf_static``
into its own transform buffer. Each message is put in world_frame at its stamp: the points, the
scan as points, the boxes; the robot's path is robot_frame looked up at each cloud's stamp.
``python -m ubot_lidar_sim view`` runs it on its own; ``run --view`` adds it to the run's
executor with the lidar_3d node's lookup (no second /tf subscription in that process).
"""

import functools
import math

import numpy as np
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data, QoSProfile
from sensor_msgs.msg import LaserScan, PointCloud2
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.core.errors import SimError
from ubot_lidar_sim.core.poses import matrix_to_quaternion, to_matrix
from ubot_lidar_sim.output.view import weather_text
from ubot_lidar_sim.ros.conversions import apply_tf_message, pointcloud2_to_array, stamp_to_s
from ubot_lidar_sim.ros.intake import ENVIRONMENT_TOPIC
from ubot_lidar_sim.ros.qos import latched_qos
from ubot_lidar_sim.ros.tf_buffer import TransformBuffer
from ubot_lidar_sim_msgs.msg import Environment
from visualization_msgs.msg import Marker, MarkerArray

#: The topics of one robot, relative to its namespace (an absolute name is taken as it is).
TOPICS = {'points': 'points', 'scan': 'scan', 'boxes': 'lidar_3d/boxes'}
PATH_STEP_S = 0.5       # the robot's path gets a position at most this often (sim time)
TF_HOLD_S = 0.2         # a stamp this far past the newest transform takes the newest pose

_SCAN_DTYPE = np.dtype([('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('intensity', '<f4')])


def topic_name(namespace, name):
    """Return the absolute topic of name in namespace ('' or 'robot1')."""
    if name.startswith('/'):
        return name
    return '/' + '/'.join(p.strip('/') for p in (namespace, name) if p.strip('/'))


def scan_points(msg):
    """Return the hits of a LaserScan as a structured (x, y, z=0, intensity) array, scan frame."""
    r = np.asarray(msg.ranges, np.float64)
    a = msg.angle_min + msg.angle_increment * np.arange(len(r))
    keep = np.isfinite(r) & (r >= msg.range_min) & (r <= msg.range_max)
    out = np.zeros(int(np.count_nonzero(keep)), _SCAN_DTYPE)
    out['x'], out['y'] = r[keep] * np.cos(a[keep]), r[keep] * np.sin(a[keep])
    inten = np.asarray(msg.intensities, np.float64)
    if len(inten) == len(r):
        out['intensity'] = inten[keep]
    return out


def cube_boxes(markers, world_from):
    """
    Return (centres (B, 3), half sizes (B, 3), quaternions (B, 4) xyzw, labels) of CUBE markers.

    world_from(frame, stamp) -> (4, 4) or None places each marker; labels are the texts of the
    TEXT_VIEW_FACING markers with the cube's id ('' without one).
    """
    texts = {m.id: m.text for m in markers if m.type == Marker.TEXT_VIEW_FACING}
    out = ([], [], [], [])
    for m in (m for m in markers if m.type == Marker.CUBE and m.action == Marker.ADD):
        pose = world_from(m.header.frame_id, m.header.stamp)
        if pose is None:
            continue
        p, q = m.pose.position, m.pose.orientation
        placed = pose @ to_matrix((p.x, p.y, p.z), (q.x, q.y, q.z, q.w))
        out[0].append(placed[:3, 3])
        out[1].append((m.scale.x / 2.0, m.scale.y / 2.0, m.scale.z / 2.0))
        out[2].append(matrix_to_quaternion(placed[:3, :3]))
        out[3].append(texts.get(m.id, ''))
    return out


class LiveView(Node):
    """Subscribes a graph's sensor topics and logs them to a View (see the module docstring)."""

    def __init__(self, view, context=None, namespaces=('',), world_frame='map',
                 robot_frame='base_link', topics=None, lookup=None):
        super().__init__('live_view', context=context, start_parameter_services=False)
        self.view, self.world_frame = view, world_frame
        self.counts = {'points': 0, 'scan': 0, 'boxes': 0}
        self.unplaced = set()       # frames whose points were shown in their own frame
        self._last_path_s = {}
        self._t0 = None         # the first stamp: the timeline starts at 0 s
        self._buffer = None
        if lookup is None:
            self._buffer = TransformBuffer(cache_time_s=10.0, tolerance_s=TF_HOLD_S)
            lookup = self._buffer.lookup_many
            self.create_subscription(TFMessage, '/tf', self._on_tf, QoSProfile(depth=100))
            self.create_subscription(TFMessage, '/tf_static', self._on_tf_static,
                                     latched_qos(100))
        self._lookup = lookup
        topics = {**TOPICS, **(topics or {})}
        for ns in namespaces:
            label = ns.strip('/').replace('/', '_')
            robot = f'{ns.strip("/")}/{robot_frame}' if label else robot_frame
            for key, msg_type, callback, extra in (
                    ('points', PointCloud2, self._on_points, (robot, label or 'robot')),
                    ('scan', LaserScan, self._on_scan, ()),
                    ('boxes', MarkerArray, self._on_boxes, ())):
                entity = {'boxes': 'actors'}.get(key, key)
                self.create_subscription(
                    msg_type, topic_name(ns, topics[key]),
                    functools.partial(callback, entity=f'{label}_{entity}' if label else entity,
                                      extra=extra), qos_profile_sensor_data)
        self.create_subscription(Environment, topics.get('environment', ENVIRONMENT_TOPIC),
                                 self._on_environment, latched_qos(1))

    def _at(self, stamp):
        """Put what is logged next at stamp, in s from the first message's stamp."""
        t = stamp_to_s(stamp)
        if self._t0 is None:
            self._t0 = t
        self.view.at(t - self._t0)

    def _world_from(self, frame, stamp):
        """Return world-from-frame (4, 4) at stamp, or None while the transforms cannot say."""
        if frame == self.world_frame:
            return np.eye(4)
        try:
            return self._lookup(self.world_frame, frame, [stamp_to_s(stamp)])[0]
        except SimError:
            return None

    def _placed(self, frame, stamp):
        """Return world-from-frame, or None (the points stay in their frame) with one warning."""
        pose = self._world_from(frame, stamp)
        if pose is None and frame not in self.unplaced:
            self.unplaced.add(frame)
            self.get_logger().warning(
                f'no transform from {self.world_frame!r} to {frame!r} (yet): its points are '
                'shown in their own frame')
        return pose

    def _on_points(self, msg, entity, extra):
        robot_frame, robot = extra
        stamp = msg.header.stamp
        self._at(stamp)
        self.view.points(entity, pointcloud2_to_array(msg),
                         self._placed(msg.header.frame_id, stamp))
        self.counts['points'] += 1
        t = stamp_to_s(stamp)
        if t - self._last_path_s.get(robot_frame, -math.inf) >= PATH_STEP_S:
            pose = self._world_from(robot_frame, stamp)
            if pose is not None:
                self._last_path_s[robot_frame] = t
                self.view.pose(pose[:3, 3], robot)

    def _on_scan(self, msg, entity, extra):
        self._at(msg.header.stamp)
        self.view.points(entity, scan_points(msg),
                         self._placed(msg.header.frame_id, msg.header.stamp))
        self.counts['scan'] += 1

    def _on_boxes(self, msg, entity, extra):
        centres, half, quats, labels = cube_boxes(msg.markers, self._world_from)
        if msg.markers:
            self._at(msg.markers[0].header.stamp)
        self.view.boxes(entity, centres, half, quats, labels)
        self.counts['boxes'] += 1

    def knows(self, frame):
        """Return True once /tf or /tf_static has named frame (False with a lookup given)."""
        return self._buffer is not None and self._buffer.knows(frame)

    def _on_tf(self, msg):
        apply_tf_message(self._buffer, msg)

    def _on_tf_static(self, msg):
        apply_tf_message(self._buffer, msg, static=True)

    def _on_environment(self, msg):
        self.view.weather(weather_text(msg))

    def summary(self):
        """Return one line: what was shown."""
        c = self.counts
        return f'{c["points"]} clouds, {c["scan"]} scans, {c["boxes"]} actor box sets'
