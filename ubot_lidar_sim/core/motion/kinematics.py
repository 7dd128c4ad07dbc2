"""
Commands, limits and integration of the three drives (docs/nav2.md).

A command is (vx m/s, vy m/s, wz rad/s) in base_frame, as geometry_msgs/Twist carries it.
``check_command`` refuses a NaN, an infinity or an absurd value (|v| > 1e3) before anything
uses it. ``limit_target`` turns an accepted command into what the drive can do: diff drops
vy, ackermann drops vy and turns wz into the steering angle wz = vx tan(delta) / wheelbase with
|delta| <= max_steering (no turn on the spot), then every drive clamps to the speed limits.
``ramp`` moves the velocity toward that target by at most the acceleration limits times dt.
``integrate`` moves the planar pose with the mean of the old and new velocity over dt along
an arc (exact for a constant twist).
"""

from collections.abc import Iterable, Sequence
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

#: A planar pose (x m, y m, yaw rad) or twist (vx m/s, vy m/s, wz rad/s).
Planar = tuple[float, float, float]
ABSURD = 1.0e3          # |component| above this (m/s or rad/s) is refused, never integrated


def check_command(cmd: Iterable[float]) -> Planar | None:
    """Return (vx, vy, wz) as floats, or None when a component is NaN, inf or > ABSURD."""
    try:
        v = tuple(float(c) for c in cmd)
    except (TypeError, ValueError):
        return None
    if len(v) != 3 or not all(math.isfinite(c) and abs(c) <= ABSURD for c in v):
        return None
    return v


def limit_target(cfg: Any, cmd: Planar) -> Planar:
    """Return the (vx, vy, wz) the drive of cfg aims for under cmd (see the module)."""
    vx, vy, wz = cmd
    if cfg.drive != 'omni':
        vy = 0.0
    vx = min(max(vx, -cfg.max_linear_m_s), cfg.max_linear_m_s)
    vy = min(max(vy, -cfg.max_lateral_m_s), cfg.max_lateral_m_s)
    if cfg.drive == 'ackermann':
        wz = ackermann_yaw_rate(vx, wz, cfg.wheelbase_m, math.radians(cfg.max_steering_deg))
    wz = min(max(wz, -cfg.max_angular_rad_s), cfg.max_angular_rad_s)
    return vx, vy, wz


def ackermann_yaw_rate(vx: float, wz: float, wheelbase_m: float, max_steering_rad: float
                       ) -> float:
    """Return the yaw rate of the steering angle wz asks for at vx, within the steering limit."""
    if vx == 0.0:
        return 0.0
    delta = math.atan(wheelbase_m * wz / vx)
    delta = min(max(delta, -max_steering_rad), max_steering_rad)
    return vx * math.tan(delta) / wheelbase_m


def ramp(cfg: Any, vel: Sequence[float], target: Sequence[float], dt_s: float
         ) -> tuple[float, ...]:
    """Return vel moved toward target by at most the acceleration limits times dt_s."""
    lin, ang = cfg.max_linear_accel_m_s2 * dt_s, cfg.max_angular_accel_rad_s2 * dt_s
    steps = (lin, lin, ang)
    return tuple(v + min(max(t - v, -s), s) for v, t, s in zip(vel, target, steps))


def integrate(pose: Sequence[float], vel0: Sequence[float], vel1: Sequence[float], dt_s: float
              ) -> Planar:
    """
    Return the planar pose (x, y, yaw) after dt_s at the mean of vel0 and vel1.

    The twist (vx, vy, wz) is held in the body frame: an arc for wz != 0, a line otherwise.
    """
    x, y, yaw = pose
    vx, vy, wz = ((a + b) / 2.0 for a, b in zip(vel0, vel1))
    dth = wz * dt_s
    if abs(dth) < 1e-9:
        fx, fy = vx * dt_s, vy * dt_s
    else:
        s, c = math.sin(dth), math.cos(dth)
        fx = (vx * s - vy * (1.0 - c)) / wz
        fy = (vx * (1.0 - c) + vy * s) / wz
    cy, sy = math.cos(yaw), math.sin(yaw)
    return (x + cy * fx - sy * fy, y + sy * fx + cy * fy, wrap(yaw + dth))


def wrap(angle: float) -> float:
    """Return angle (rad) in [-pi, pi)."""
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


def planar_matrix(pose: Sequence[float]) -> NDArray[np.float64]:
    """Return the 3 x 3 homogeneous matrix of a planar pose (x, y, yaw)."""
    x, y, yaw = pose
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, x], [s, c, y], [0.0, 0.0, 1.0]])
