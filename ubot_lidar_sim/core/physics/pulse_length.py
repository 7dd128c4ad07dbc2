"""
The pulse length of the fog soft return, in a module without numba.

core/physics/soft_target.py computes the return with it; ``describe`` states it.
"""

from ubot_lidar_sim.core.config.optics import EchoesConfig, OpticsConfig


def soft_pulse_length_m(optics: OpticsConfig, echoes: EchoesConfig) -> float:
    """
    Return L, the pulse length in range of the soft return, m.

    pulse_length_m when set (> 0), else min_separation_m, the echo separation, which is roughly
    the pulse length (docs/physics-weather.md, "Soft return of fog and haze").
    """
    return optics.pulse_length_m if optics.pulse_length_m > 0.0 else echoes.min_separation_m
