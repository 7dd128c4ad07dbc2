"""
Material table at the laser wavelength (docs/physics.md, "Surfaces and materials").

Defaults live in config/materials.yaml; a materials_file overrides only the properties it lists.
What a specular surface does to the beam is a property of its material (docs/physics.md,
"Glass and mirrors"): MaterialTable.panes pass it on, MaterialTable.folds send a mirror ray on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.material_ids import MATERIAL_NAMES
from ubot_lidar_sim.core.resources import config_path
from ubot_lidar_sim.core.yaml_io import read_yaml

# Allowed range of each property (inclusive).
PROPERTY_RANGES = {
    'reflectivity': (0.0, 1.0),
    'specular': (0.0, 100.0),
    'specular_width_deg': (0.01, 90.0),
    'transmission': (0.0, 1.0),
    'wet_darkening': (0.0, 1.0),
    'incidence_exponent': (0.0, 4.0),
    'micro_slope_deg': (0.0, 45.0),
    'reflectivity_sd': (0.0, 2.0),
    'roughness_m': (0.0, 0.5),
    'specular_reflectance': (0.0, 1.0),
    'refractive_index': (0.0, 4.0),
}
PROPERTIES = tuple(PROPERTY_RANGES)
#: Properties a material of config/materials.yaml may leave out, and their value then.
PROPERTY_DEFAULTS = {'specular_reflectance': 0.0, 'refractive_index': 0.0}


def material_index(name: str) -> int:
    """Return the material byte of ``name``; ConfigError for an unknown name."""
    try:
        return MATERIAL_NAMES.index(name)
    except ValueError:
        raise ConfigError('material', name, 'one of ' + ', '.join(MATERIAL_NAMES)) from None


def _read_yaml(path: str | Path) -> dict[Any, Any]:
    data = read_yaml(path, lambda where, problem: ConfigError(
        'materials_file', str(path), f'a readable YAML file ({where}: {problem})'), True)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError('materials_file', str(path), 'a mapping material -> properties')
    return data


def _apply(values: dict[str, list[float]], data: dict[Any, Any], path: str | Path) -> None:
    """Write the properties of ``data`` into ``values`` {prop: list}, checking names and ranges."""
    for mat, props in data.items():
        if mat not in MATERIAL_NAMES:
            raise ConfigError(f'materials_file {Path(path).name}: material', mat,
                              'one of ' + ', '.join(MATERIAL_NAMES))
        if not isinstance(props, dict):
            raise ConfigError(f'{mat}', props, 'a mapping of property names to numbers')
        i = MATERIAL_NAMES.index(mat)
        for prop, value in props.items():
            if prop not in PROPERTY_RANGES:
                raise ConfigError(f'materials_file {Path(path).name}: {mat} property', prop,
                                  'one of ' + ', '.join(PROPERTIES))
            lo, hi = PROPERTY_RANGES[prop]
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) \
                and math.isfinite(value) and lo <= value <= hi
            if not ok:
                raise ConfigError(f'{mat}.{prop}', value, f'a number in [{lo}, {hi}]')
            values[prop][i] = float(value)


@dataclass(frozen=True, eq=False)
class MaterialTable:
    """One read-only float64 array per property, one value per material byte (MATERIAL_NAMES)."""

    reflectivity: NDArray[np.float64]
    specular: NDArray[np.float64]
    specular_width_deg: NDArray[np.float64]
    transmission: NDArray[np.float64]
    wet_darkening: NDArray[np.float64]
    incidence_exponent: NDArray[np.float64]
    micro_slope_deg: NDArray[np.float64]
    reflectivity_sd: NDArray[np.float64]
    roughness_m: NDArray[np.float64]
    specular_reflectance: NDArray[np.float64]
    refractive_index: NDArray[np.float64]

    @property
    def folds(self) -> NDArray[np.bool_]:
        """(M,) bool: the smooth surfaces (specular_reflectance > 0) that send a mirror ray on."""
        return self.specular_reflectance > 0.0

    @property
    def panes(self) -> NDArray[np.bool_]:
        """(M,) bool: the folding surfaces that also pass the beam on (transmission > 0)."""
        return self.folds & (self.transmission > 0.0)

    @classmethod
    def load(cls, override_file: str | Path | None = None) -> MaterialTable:
        """Read config/materials.yaml (all values but PROPERTY_DEFAULTS), then override_file."""
        path = config_path('materials.yaml')
        values = {p: [PROPERTY_DEFAULTS.get(p, math.nan)] * len(MATERIAL_NAMES)
                  for p in PROPERTIES}
        _apply(values, _read_yaml(path), path)
        for prop, vals in values.items():
            missing = [MATERIAL_NAMES[i] for i, v in enumerate(vals) if math.isnan(v)]
            if missing:
                raise ConfigError(f'{path}: {prop}', missing, 'a value for every material')
        if override_file:
            _apply(values, _read_yaml(override_file), override_file)
        return cls.from_values(values)

    @classmethod
    def from_values(cls, values: Mapping[str, Sequence[float]]) -> MaterialTable:
        """Build a table from {property: sequence of one float per material}."""
        arrays = {}
        for prop in PROPERTIES:
            a = np.array(values[prop], dtype=np.float64)
            a.flags.writeable = False
            arrays[prop] = a
        return cls(**arrays)

    def to_dict(self) -> dict[str, dict[str, float]]:
        """Return {material name: {property: value}} (for describe / manifests)."""
        return {name: {p: float(getattr(self, p)[i]) for p in PROPERTIES}
                for i, name in enumerate(MATERIAL_NAMES)}
