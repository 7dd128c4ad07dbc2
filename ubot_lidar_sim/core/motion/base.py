"""
BaseSim: one step of the kinematic base (docs/nav2.md), the core of the base_sim node.

``command(cmd, t_s)`` takes a twist (refused and counted when check_command refuses it);
``step(t_s, dt_s)`` aims at the last command (zero once it is older than cmd_vel_timeout_s),
ramps the velocity within the limits, integrates, cuts the move where the footprint would meet
an object (velocity to zero, ``contact`` set until a move goes uncut), follows the ground and
advances the odometry.
The start pose is refused (ConfigError naming initial_pose) when the footprint overlaps an
object there.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
import math

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.motion.config import footprint_outline
from ubot_lidar_sim.core.motion.footprint import FootprintCollision
from ubot_lidar_sim.core.motion.ground import GroundFollower
from ubot_lidar_sim.core.motion.kinematics import (check_command, integrate, limit_target,
                                                   Planar, ramp, wrap)
from ubot_lidar_sim.core.motion.odometry import Odometry

ZERO = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Step:
    """The state after one step: truth, odometry and what happened."""

    pose: tuple             # x, y, z (m), roll, pitch, yaw (rad) in world_frame
    velocity: tuple         # vx, vy (m/s), wz (rad/s) in base_frame
    odom: tuple             # x, y, yaw of base_frame in odom_frame (with drift)
    world_to_odom: tuple    # x, y, yaw of odom_frame in world_frame
    contact: bool           # the move was cut at an object
    odom_covariance: tuple = ((0.0,) * 3,) * 3     # 3 x 3 over odom x, y, yaw (drift model)


class BaseSim:
    """The kinematic base of one BaseSimConfig in one World (see the module)."""

    def __init__(self, cfg, world):
        self.cfg = cfg
        self._world = world
        poly = footprint_outline(cfg)
        self._collision = FootprintCollision(world, poly, cfg)
        self._ground = GroundFollower(world, poly, cfg.max_step_m)
        x, y, yaw_deg = cfg.initial_pose
        self.pose = (x, y, wrap(math.radians(yaw_deg)))
        if cfg.follow_ground:
            self._ground.update(self.pose, start=True)
        if self._collision.overlaps(self.pose, self._ground.z):
            raise ConfigError('initial_pose', list(cfg.initial_pose),
                              'a pose whose footprint is clear of every object')
        self.velocity = ZERO
        self._cmd, self._cmd_t = ZERO, -math.inf
        self.counts = {'accepted': 0, 'refused': 0, 'contacts': 0}
        self.contact = False
        self._odom = Odometry(cfg.seed, cfg.odom_noise_m_per_m, cfg.odom_noise_rad_per_rad)

    def command(self, cmd: Iterable[float], t_s: float) -> bool:
        """Take a twist (vx, vy, wz) received at t_s; return False (counted) when refused."""
        checked = check_command(cmd)
        if checked is None:
            self.counts['refused'] += 1
            return False
        self.counts['accepted'] += 1
        self._cmd, self._cmd_t = checked, t_s
        return True

    def teleport(self, pose: Sequence[float], reset_odometry: bool = False) -> str:
        """
        Put the base at planar pose (x, y, yaw rad) at rest; return '' or why it was refused.

        Refused (nothing changes) where the footprint would overlap an object. The command is
        dropped and the contact cleared. reset_odometry: odometry starts again at identity (and
        zero covariance), world -> odom becomes the new pose; otherwise the odometry is kept
        (the wheels did not turn) and world -> odom jumps by the teleport.
        """
        x, y, yaw = (float(v) for v in pose)
        if not all(math.isfinite(v) and abs(v) <= 1.0e6 for v in (x, y, yaw)):
            return f'pose ({x}, {y}, {yaw}) is not finite within 1e6'
        new = (x, y, wrap(yaw))
        ground = GroundFollower(self._world, footprint_outline(self.cfg), self.cfg.max_step_m)
        if self.cfg.follow_ground:
            ground.update(new, start=True)
        if self._collision.overlaps(new, ground.z):
            return f'the footprint at x {x:.3f} m, y {y:.3f} m overlaps an object'
        self._ground, self.pose, self.velocity = ground, new, ZERO
        self._cmd, self._cmd_t, self.contact = ZERO, -math.inf, False
        if reset_odometry:
            self._odom.reset()
        return ''

    def target(self, t_s: float) -> Planar:
        """Return the velocity the base aims for at t_s (zero after the command timeout)."""
        if t_s - self._cmd_t > self.cfg.cmd_vel_timeout_s:
            return ZERO
        return limit_target(self.cfg, self._cmd)

    def step(self, t_s: float, dt_s: float) -> Step:
        """Advance dt_s to t_s; return the Step (see the module)."""
        vel = ramp(self.cfg, self.velocity, self.target(t_s), dt_s)
        moved = integrate(self.pose, self.velocity, vel, dt_s)
        frac = self._collision.allowed_fraction(self.pose, moved, self._ground.z)
        contact = frac < 1.0
        if contact:
            dyaw = wrap(moved[2] - self.pose[2])
            moved = (self.pose[0] + frac * (moved[0] - self.pose[0]),
                     self.pose[1] + frac * (moved[1] - self.pose[1]),
                     wrap(self.pose[2] + frac * dyaw))
        if moved == self.pose:
            contact = contact or self.contact       # standing still at an object: still there
        elif self._collision.overlaps(moved, self._ground.z):
            moved, contact = self.pose, True
        if contact:
            vel = ZERO
            self.counts['contacts'] += not self.contact
        self.contact = contact
        odom = self._odom.advance(self.pose, moved)
        self.pose, self.velocity = moved, vel
        return self.state(odom)

    def state(self, odom: Sequence[float] | None = None) -> Step:
        """Return the Step of the current state; odom: the odometry pose (default: the last)."""
        if self.cfg.follow_ground:
            z, roll, pitch = self._ground.update(self.pose)
        else:
            z, roll, pitch = 0.0, 0.0, 0.0
        x, y, yaw = self.pose
        return Step((x, y, z + self.cfg.base_height_m, roll, pitch, yaw), self.velocity,
                    self._odom.pose if odom is None else odom,
                    self._odom.world_to_odom(self.pose), self.contact,
                    tuple(map(tuple, self._odom.covariance)))
