"""
Airborne mineral dust (blowing dust, dust storms) at the laser wavelength.

Extinction from the dust's mass concentration C (Weather.dust_ug_m3, coarse particles, PM10):
alpha = MEE C with the mass extinction efficiency of coarse mass of the IMPROVE reconstructed
extinction, 0.6 m^2/g (Malm et al. 1994, J. Geophys. Res. 99(D1), 1347, eq. 4), i.e.
0.6 Mm^-1 per ug/m^3. Coarse dust attenuates nearly alike at every wavelength of the visible
and near infrared (extinction Angstrom exponent near 0 for desert dust, Eck et al. 1999,
J. Geophys. Res. 104(D24), 31333), so the same alpha applies at 550 nm, where it is part of the
visibility, and at the laser wavelength. Backscatter from the lidar ratio of Saharan dust,
55 sr (Tesche et al. 2009, Tellus B 61, 144: 53-55 sr at 355 and 532 nm; taken as is at the
near-infrared laser wavelengths [ENG]). A continuous medium: its backscatter joins the soft
return of the air (soft_target.py), steady from pulse to pulse like haze's.
"""

from ubot_lidar_sim.core.physics.atmosphere import Medium
from ubot_lidar_sim.core.physics.weather import Weather

#: Mass extinction efficiency of coarse dust, m^2/g (Malm et al. 1994, IMPROVE).
DUST_MEE_M2_G = 0.6
#: Lidar ratio of mineral dust, sr (Tesche et al. 2009, SAMUM-1).
DUST_LIDAR_RATIO_SR = 55.0


def dust_extinction(dust_ug_m3: float) -> float:
    """Return alpha = 0.6 m^2/g x C, 1/m, for C in ug/m^3 (at 550 nm and the laser's)."""
    return DUST_MEE_M2_G * max(float(dust_ug_m3), 0.0) * 1e-6


def dust_medium(weather: Weather) -> Medium:
    """Return the dust Medium: mass extinction, Saharan-dust lidar ratio, all in the visibility."""
    alpha = dust_extinction(weather.dust_ug_m3)
    return Medium('dust', alpha, alpha / DUST_LIDAR_RATIO_SR, alpha_550_per_m=alpha)
