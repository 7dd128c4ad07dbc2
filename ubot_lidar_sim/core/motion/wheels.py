"""
The wheels' joint angles of a kinematic base, integrated from its true motion (/joint_states).

A step moves the base by ds along its heading (the planar displacement projected on the mean
heading of the step) and turns it by dpsi. Each wheel of a track rolls that track's distance,
left ds - dpsi s / 2 and right ds + dpsi s / 2 (s the wheel separation), so it turns by
distance / r rad (r the wheel radius): gz-sim's DiffDrive gives each joint the speed
(v -+ w s / 2) / r (src/systems/diff_drive/DiffDrive.cc:631-633, commit 93bbf3e), as its
AckermannSteering does for the drive wheels (v (1 -+ s tan(phi) / (2 L)) / r, tan(phi) = L / R:
the same). Steering joints (Ackermann) take the angles AckermannSteering commands for the
turning radius R = ds / dpsi: left atan(L / (R - k / 2)), right atan(L / (R + k / 2)), L the
wheel base and k the kingpin width (AckermannSteering.cc:864-866); a step without travel keeps
them. Velocities are the step's angle change over dt. A teleport (``forget``) turns no wheel.
"""

from collections.abc import Sequence
from dataclasses import dataclass
import math

import numpy as np

MIN_TRAVEL_M = 1e-9     # below this a step sets no steering angle (R undefined)


@dataclass(frozen=True)
class Wheels:
    """Wheel joints of a base plugin: names, radius (m), separation, wheel base, kingpin (m)."""

    left: tuple
    right: tuple
    radius_m: float
    separation_m: float
    steering: tuple = ()    # (left, right) steering joints of an Ackermann base
    wheel_base_m: float = 1.0
    kingpin_width_m: float = 0.8

    @property
    def names(self) -> tuple[str, ...]:
        """Return every joint name, left wheels, right wheels, then the steering joints."""
        return tuple(self.left) + tuple(self.right) + tuple(self.steering)


class WheelOdometer:
    """Joint positions (rad) and velocities (rad/s) of Wheels from a base's true poses."""

    def __init__(self, wheels: Wheels) -> None:
        self.wheels = wheels
        self.position = np.zeros(len(wheels.names))
        self.velocity = np.zeros(len(wheels.names))
        self._last = None       # (x, y, yaw) of the last step

    def forget(self) -> None:
        """Forget the last pose (a teleport): the next step turns no wheel."""
        self._last = None

    def step(self, pose: Sequence[float], dt_s: float) -> None:
        """Advance by one step ending at pose (x, y, z, roll, pitch, yaw; m, rad) over dt_s."""
        x, y, yaw = float(pose[0]), float(pose[1]), float(pose[5])
        last, self._last = self._last, (x, y, yaw)
        if last is None or not dt_s > 0:
            self.velocity[:] = 0.0
            return
        dpsi = math.remainder(yaw - last[2], 2.0 * math.pi)
        mid = last[2] + dpsi / 2.0
        ds = (x - last[0]) * math.cos(mid) + (y - last[1]) * math.sin(mid)
        w = self.wheels
        half = dpsi * w.separation_m / 2.0
        n_l, n_r = len(w.left), len(w.right)
        delta = np.zeros(len(self.position))
        delta[:n_l] = (ds - half) / w.radius_m
        delta[n_l:n_l + n_r] = (ds + half) / w.radius_m
        if w.steering:
            steer = self.position[n_l + n_r:].copy()
            if abs(ds) > MIN_TRAVEL_M:
                kappa = dpsi / ds       # 1 / R, signed
                k2 = w.kingpin_width_m / 2.0
                steer = np.array([math.atan(w.wheel_base_m * kappa / (1.0 - kappa * k2)),
                                  math.atan(w.wheel_base_m * kappa / (1.0 + kappa * k2))])
            delta[n_l + n_r:] = steer - self.position[n_l + n_r:]
        self.position += delta
        self.velocity = delta / dt_s
