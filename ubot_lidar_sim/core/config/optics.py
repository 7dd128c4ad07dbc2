"""
The beam and its echoes (physical model): optics (wavelength, divergence, pulse) and echoes.

Parts of PhysicalModel (core/config/model.py); the laws of core/physics take them typed.
"""

from dataclasses import dataclass

from ubot_lidar_sim.core.config.fields import parameter as _p, Validated
from ubot_lidar_sim.core.limits import RETURN_MODES


@dataclass(frozen=True)
class OpticsConfig(Validated):
    """The emitted beam: wavelength, divergence, pulse length and exit diameter."""

    wavelength_nm: float = _p(905.0, 'Laser wavelength (Kim et al. fog/haze scaling).', 'nm',
                              min=350.0, max=2000.0)
    divergence_mrad: float = _p(3.0, 'Full-angle 1/e^2 beam divergence (horizontal).', 'mrad',
                                min=0.0, max=20.0)
    divergence_v_mrad: float = _p(0.0, 'Vertical full-angle divergence, 0 = divergence_mrad '
                                  '(pulse stretching only).', 'mrad', min=0.0, max=20.0)
    pulse_length_m: float = _p(0.0, 'Pulse length in range (FWHM x c / 2); > 0 enables echo '
                               'stretching.', 'm', min=0.0, max=30.0)
    exit_diameter_m: float = _p(0.01, 'Beam diameter at the exit window.', 'm',
                                min=0.0, max=1.0)


@dataclass(frozen=True)
class EchoesConfig(Validated):
    """The footprint's sub-rays, the surfaces they record and the echoes that become points."""

    sub_rays: int = _p(7, 'Sub-rays per beam: 1 (pencil) or 7 (centre + hexagon).',
                       choices=(1, 7), read_only=True)
    footprint: str = _p('adaptive', "'adaptive': trace each beam's centre sub-ray, the others "
                        'only where the footprint may straddle surfaces (edges, foliage, smoke, '
                        'grazing incidence; else one echo of the centre hit with the whole '
                        "footprint's power); 'exhaustive': every sub-ray of every beam.",
                        choices=('adaptive', 'exhaustive'))
    max_hits_per_sub_ray: int = _p(4, 'Surfaces recorded along one sub-ray.', min=1, max=8,
                                   read_only=True)
    continue_step_m: float = _p(0.25, 'Skip after a foliage hit before the next search.', 'm',
                                min=0.001, max=10.0)
    min_separation_m: float = _p(0.75, 'Contributions closer than this merge into one echo.',
                                 'm', min=0.01, max=100.0)
    return_mode: str = _p('dual_strongest_last', 'Which detected echoes become points.',
                          choices=RETURN_MODES)
    # The vendor's dual-return rule (core/physics/return_selection.py).
    dual_second_strongest_when_last: bool = _p(
        False, "dual_strongest_last: when a beam's strongest echo is also its last, emit the "
        'second strongest as the other return (VLP-16 manual 63-9243 Rev D p. 57, VLP-32C '
        'manual 63-9325 Rev C p. 57); off = the strongest alone.')
