"""
The typed record of one robot description, whatever its form (URDF, xacro, SDF model).

Transforms are 4 x 4 float64; angles rad; a ``Note`` lists a tag that is not honoured (or an
unknown plugin or sensor type) with the reason, so that nothing is dropped silently.
"""

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.errors import SimError


class RobotError(SimError):
    """A robot description cannot be read: one line naming the file, the element and the rule."""


@dataclass(frozen=True)
class Note:
    """A tag or element that is read but not honoured: where it is and why."""

    where: str
    tag: str
    reason: str

    def line(self) -> str:
        """Return the note as one line."""
        return f'{self.where}: <{self.tag}> not honoured: {self.reason}'


@dataclass(frozen=True)
class Part:
    """One collision or visual geometry of a link: a geometry Shape posed in the link frame."""

    name: str
    kind: str               # 'collision' | 'visual'
    shape: object           # core.world.sdf.geometry.Shape
    link_from_part: np.ndarray


@dataclass(frozen=True)
class Mimic:
    """
    A joint that follows another: position = multiplier (leader - reference) + offset.

    URDF's <mimic joint multiplier offset> (http://wiki.ros.org/urdf/XML/joint; reference 0)
    and SDF's <axis><mimic joint><multiplier/><offset/><reference/></mimic> (sdformat
    sdf/1.11/mimic.sdf, commit ef8ae18: "follower_position = multiplier * (leader_position -
    reference) + offset").
    """

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0
    reference: float = 0.0

    def follow(self, leader: float) -> float:
        """Return the follower's position (rad or m) at the leader's position."""
        return self.multiplier * (leader - self.reference) + self.offset


@dataclass(frozen=True)
class Joint:
    """
    A joint: parent_from_child = origin @ motion(axis, position) @ joint_to_child.

    URDF: the child frame is the joint frame (joint_to_child identity); SDF: the joint frame is
    the joint's <pose> in the child link, so joint_to_child is its inverse. A joint with a
    mimic takes its position from the joint it follows (tree.joint_positions).
    """

    name: str
    type: str               # noqa: A003 (URDF's name): fixed, revolute, prismatic, ...
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    joint_to_child: np.ndarray = field(default_factory=lambda: np.eye(4))
    mimic: Mimic | None = None


@dataclass(frozen=True)
class ScanAxis:
    """One axis of a <scan>: samples, resolution, min_angle, max_angle (rad)."""

    samples: int
    resolution: float
    min_angle: float
    max_angle: float

    @property
    def count(self) -> int:
        """Return the rays Gazebo casts: samples x resolution (gz-sensors Lidar.cc RangeCount)."""
        return max(1, int(self.samples * self.resolution))

    @property
    def step(self) -> float:
        """Return the angle between rays, (max - min) / (count - 1) (Lidar.cc:357-361); 0 for 1."""
        n = self.count
        return (self.max_angle - self.min_angle) / (n - 1) if n > 1 else 0.0

    def angles(self) -> NDArray[np.float64]:
        """Return the ray angles min + k step, (count,) float64."""
        return self.min_angle + np.arange(self.count) * self.step


@dataclass(frozen=True)
class RobotSensor:
    """A range sensor of the robot with Gazebo's meaning of each of its tags."""

    name: str
    type: str               # noqa: A003 (the <sensor type>)
    link: str
    link_from_sensor: np.ndarray
    topic: str
    frame_id: str
    message_type: str       # sensor_msgs/msg/LaserScan | sensor_msgs/msg/PointCloud2
    update_rate_hz: float
    horizontal: ScanAxis
    vertical: ScanAxis
    range_min_m: float
    range_max_m: float
    range_resolution_m: float
    noise_mean_m: float
    noise_stddev_m: float
    source: str             # 'gz-sensors', 'gazebo_ros_ray_sensor', 'velodyne_simulator'
    notes: tuple = ()

    @property
    def planar(self) -> bool:
        """Return True for one vertical ray (a LaserScan)."""
        return self.vertical.count == 1


@dataclass(frozen=True)
class ImuSensor:
    """An <imu> sensor: topic, frame, rate and the noise stddevs (rad/s, m/s^2)."""

    name: str
    link: str
    topic: str
    frame_id: str
    update_rate_hz: float
    angular_velocity_stddev: float
    linear_acceleration_stddev: float
    link_from_sensor: np.ndarray = field(default_factory=lambda: np.eye(4))


@dataclass(frozen=True)
class Drive:
    """A base plugin's kinematics: 'diff' or 'ackermann', its values and its limits."""

    plugin: str
    drive: str
    values: dict            # base_sim parameter names -> values
    topic: str
    notes: tuple = ()
    wheels: object = None   # core.motion.wheels.Wheels: the joints /joint_states names


@dataclass
class RobotDescription:
    """Links (with parts), joints, sensors, IMUs, the drive and the notes of one file."""

    name: str
    source: str
    root: str
    model_from_root: np.ndarray = field(default_factory=lambda: np.eye(4))   # SDF: its pose
    links: dict = field(default_factory=dict)       # name -> [Part]
    joints: list = field(default_factory=list)
    sensors: list = field(default_factory=list)
    imus: list = field(default_factory=list)
    drive: Drive | None = None
    notes: list = field(default_factory=list)
    files: list = field(default_factory=list)

    def add_sensor(self, found: RobotSensor | ImuSensor | None) -> None:
        """Add a RobotSensor to sensors, an ImuSensor to imus (None: nothing)."""
        if isinstance(found, ImuSensor):
            self.imus.append(found)
        elif found is not None:
            self.sensors.append(found)

    def sensor(self, name: str) -> RobotSensor:
        """Return the range sensor called name, else RobotError listing the names."""
        for s in self.sensors:
            if s.name == name:
                return s
        raise RobotError(f"{self.source}: no range sensor named '{name}' (range sensors: "
                         f"{', '.join(s.name for s in self.sensors) or 'none'})")
