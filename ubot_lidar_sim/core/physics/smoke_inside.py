"""
A beam that starts inside smoke (docs/physics.md, "Smoke"): the volume's echo and its loss.

Met from outside, a smoke cell is a surface at the ray's entry (raycast/smoke.py): material
'other' at normal incidence, so its echo is that of a hard target of rho_s = backscatter('other',
cos 1) with the signal law of docs/physics.md, "Signal" (near-field form factor included). A beam
that starts inside cells is not stopped by them. Along it the smoke has the extinction

    alpha_j = d_j x 3.912 / smoke_visibility_m   (d_j the cell's effective density, 1/m)

(Koschmieder's visibility; below 500 m Kim et al. 2001 scale it to the laser wavelength with
q = 0, atmosphere.fog_extinction), so an echo at range R carries the two-way loss exp(-2 tau(R)),
tau(R) = sum_j alpha_j min(R, X_j) with X_j the range where the beam leaves cell j: targets
beyond are attenuated, not removed. The volume's own echo is the same hard-target law at the
range where it is strongest, R* = argmax S10 / 0.1 rho_s (R10 / R)^2 O(R) exp(-2 tau(R) - 2
alpha_air R) over min_range_m <= R <= min(max X_j, the nearest solid hit), O the form factor:
the nearest smoke the receiver sees fully, as a volume much deeper than the pulse returns.
"""

from __future__ import annotations

from typing import Tuple, TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.config.atmosphere import AtmosphereConfig
from ubot_lidar_sim.core.config.optics import OpticsConfig
from ubot_lidar_sim.core.config.radiometry import RadiometryConfig
from ubot_lidar_sim.core.labels import SMOKE_CLASS
from ubot_lidar_sim.core.material_ids import OTHER
from ubot_lidar_sim.core.physics import atmosphere, radiometry
from ubot_lidar_sim.core.physics.echoes import Contributions
from ubot_lidar_sim.core.physics.sensor_part import SensorPart
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.raycast.smoke import smoke_inside

if TYPE_CHECKING:       # annotations only
    from ubot_lidar_sim.core.world.materials import MaterialTable
    from ubot_lidar_sim.core.world.world import World

#: Each beam's smoke extinction alpha (B, J), 1/m, and exit range exit_m (B, J), m.
Smoke = Tuple[NDArray[np.float64], NDArray[np.float64]]

#: Points of the range grid on which a beam's strongest smoke echo is found.
GRID_POINTS = 256


def extinction_per_m(optics: OpticsConfig, air: AtmosphereConfig, eff_density: ArrayLike,
                     ) -> np.ndarray:
    """Return the smoke extinction alpha (shape of eff_density), 1/m, at the laser wavelength."""
    return np.asarray(eff_density, np.float64) * atmosphere.fog_extinction(
        optics, air.smoke_visibility_m)


def optical_depth(alpha: NDArray[np.float64], exit_m: NDArray[np.float64],
                  beam: NDArray[np.integer], range_m: ArrayLike) -> NDArray[np.float64]:
    """
    Return tau (M,) = sum_j alpha[beam, j] min(range, exit_m[beam, j]) of rows beam, range (M,).

    alpha, exit_m (B, J): each beam's smoke extinction (1/m, 0 outside a cell) and exit range (m).
    """
    a, x = alpha[beam], exit_m[beam]
    return np.sum(a * np.minimum(np.asarray(range_m, np.float64)[:, None], x), axis=1)


def attenuate(contrib: Contributions, alpha: NDArray[np.float64],
              exit_m: NDArray[np.float64]) -> Contributions:
    """Return contrib with each power and rho_app times exp(-2 tau(range)) of its beam."""
    if alpha.shape[1] == 0 or len(contrib) == 0:
        return contrib
    loss = np.exp(-2.0 * optical_depth(alpha, exit_m, contrib.beam, contrib.range_m))
    return Contributions(contrib.beam, contrib.range_m, contrib.power_counts * loss,
                         contrib.rho_app * loss, contrib.stretch, contrib.material,
                         contrib.class_id, contrib.is_ground, contrib.roughness_m,
                         contrib.instance_id)


def _strongest_range_limit(spec, lo, hi):
    """Return the largest R (m) the argmax can take: the peak of O(R) / R^2 on [lo, hi]."""
    r_ov, n = radiometry.form_factor(spec)
    if r_ov <= 0.0:
        return lo
    r = np.linspace(lo, max(hi, lo), GRID_POINTS)
    g = radiometry.counts_per_reflectance(spec, r)
    # exp(-2 tau) falls with R, so the product peaks no later than O / R^2 does.
    return float(r[min(int(np.argmax(g)) + 1, r.size - 1)])


# volume_echo and inside_smoke read the radiometry and the sensor's min_range_m and per-ring
# table (radiometry.counts_per_reflectance).
def volume_echo(spec: RadiometryConfig, sensor: SensorPart, table: MaterialTable,
                alpha: NDArray[np.float64], exit_m: NDArray[np.float64],
                limit_m: NDArray[np.float64], ring: ArrayLike,
                air_alpha_per_m: float = 0.0) -> Contributions:
    """
    Return the smoke echo of every beam that starts inside smoke, as Contributions.

    alpha, exit_m (B, J) as optical_depth; limit_m (B,) the nearest solid hit (inf: none);
    ring (B,). One contribution per such beam (weight 1: the whole footprint is in the smoke),
    class SMOKE_CLASS and material 'other', at R* (module docstring); none where the interval
    [min_range_m, min(max exit, limit)] is empty.
    """
    if alpha.shape[1] == 0:
        return Contributions.empty()
    top = np.minimum(np.max(np.where(alpha > 0.0, exit_m, 0.0), axis=1), limit_m)
    lo = max(float(sensor.min_range_m), 1e-3)
    beam = np.flatnonzero(top >= lo)
    if beam.size == 0:
        return Contributions.empty()
    hi = _strongest_range_limit(spec, lo, float(np.max(top[beam])))
    grid = np.linspace(lo, max(hi, lo), GRID_POINTS)
    r = np.minimum(grid[None, :], top[beam][:, None])            # (M, G): capped at the top
    tau = np.sum(alpha[beam][:, None, :] * np.minimum(r[..., None], exit_m[beam][:, None, :]),
                 axis=2)
    rho = float(radiometry.backscatter(table, OTHER, 1.0, 0.0))
    gain = radiometry.counts_per_reflectance(spec, r, np.asarray(ring)[beam][:, None],
                                             sensor.ring_range_at_10pct_m)
    signal = rho * gain * np.exp(-2.0 * (tau + air_alpha_per_m * r))
    k = np.argmax(signal, axis=1)
    rows = np.arange(beam.size)
    r_best, s_best = r[rows, k], signal[rows, k]
    return Contributions.build(beam, r_best, s_best, s_best / gain[rows, k],
                               material=OTHER, class_id=SMOKE_CLASS)


def beams_in_smoke(optics: OpticsConfig, air: AtmosphereConfig, world: World, weather: Weather,
                   origins: NDArray[np.float64], dirs: NDArray[np.float64]) -> Smoke:
    """
    Return alpha, exit_m (B, J) of beams with centre rays origins, dirs (B, 3) (J = 0: none).

    The cells are the world's smoke with the weather's (World.smoke_cells); none when
    smoke_enabled is false.
    """
    if not air.smoke_enabled:
        return np.zeros((origins.shape[0], 0)), np.zeros((origins.shape[0], 0))
    cells, density = world.smoke_cells(weather.smoke, weather.smoke_density)
    eff, exit_m = smoke_inside(np.asarray(origins, np.float64), np.asarray(dirs, np.float64),
                               cells, density, air.smoke_cell_radius_scale,
                               air.smoke_density_threshold)
    return extinction_per_m(optics, air, eff), exit_m


def inside_smoke(spec: RadiometryConfig, sensor: SensorPart, table: MaterialTable, smoke: Smoke,
                 contrib: Contributions, limit_m: NDArray[np.float64], ring: ArrayLike,
                 air_alpha_per_m: float) -> Contributions:
    """Return contrib attenuated by the smoke (alpha, exit_m) = smoke, with its volume echo."""
    alpha, exit_m = smoke
    if alpha.shape[1] == 0:
        return contrib
    return Contributions.concat(attenuate(contrib, alpha, exit_m), volume_echo(
        spec, sensor, table, alpha, exit_m, limit_m, ring, air_alpha_per_m))
