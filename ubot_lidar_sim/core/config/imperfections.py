"""The sensor's own imperfections (core/physics/imperfections.py): a part of PhysicalModel."""

from dataclasses import dataclass

from ubot_lidar_sim.core.config.fields import parameter as _p, Validated


@dataclass(frozen=True)
class ImperfectionsConfig(Validated):
    """Per-laser calibration residuals and range walk (physical model only)."""

    # The sensor's own imperfections (core/physics/imperfections.py), physical model only.
    # Per-laser calibration residuals: the OS1 datasheet's angular sampling accuracy +/-0.01 deg
    # (Ouster OS1 datasheet, optical performance), taken as 2 sigma; no per-laser range residual
    # ("zero bias for lambertian targets", same table).
    imperfections: bool = _p(True, "The sensor's own imperfections: per-laser calibration "
                             'residuals and range walk (off: an ideally calibrated sensor).')
    calibration_elevation_std_deg: float = _p(
        0.005, 'Per-laser elevation residual of the factory calibration, 1 sigma (OS1 '
        'datasheet: angular accuracy +/-0.01 deg as 2 sigma; 0 = off).', 'deg', min=0.0,
        max=5.0)
    calibration_azimuth_std_deg: float = _p(
        0.005, 'Per-laser azimuth residual, 1 sigma (as the elevation; 0 = off).', 'deg',
        min=0.0, max=5.0)
    calibration_range_std_m: float = _p(
        0.0, 'Per-laser range residual, 1 sigma (0: OS1 datasheet "zero bias for lambertian '
        'targets"; no published residual found for other sensors).', 'm', min=0.0, max=1.0)
    calibration_serial: int = _p(
        0, 'Serial-number seed of the sensor instance: fixes its residuals for every sweep '
        'and seed.', min=0, max=2**63 - 1)
    range_walk_m: float = _p(
        0.011, 'Range walk: a return at the detection threshold reads this much longer than '
        'one range_walk_dynamic_range times stronger (11 mm over 1:1280, a timing receiver '
        'with 6 ns pulses); 0 = off.', 'm', min=0.0, max=1.0)
    range_walk_dynamic_range: float = _p(
        1280.0, 'Signal ratio S / threshold over which range_walk_m is spent; stronger '
        'returns read without walk.', min=1.001, max=1e6)
