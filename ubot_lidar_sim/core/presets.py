"""
Presets of the lidar_3d sensor (config/presets/*.yaml) and the merge order they take part in.

A preset file is a node parameter file (``/**: ros__parameters: {...}``, read by
core/params_file.py) whose first comment line reads ``# <name>: <summary>``. Parameters merge
as preset < parameter file < explicit overrides.
"""

from pathlib import Path

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.params_file import read_params_file
from ubot_lidar_sim.core.resources import config_path

PRESET_NODE = 'lidar_3d'    # the node whose config has the preset parameter


def _presets_dir():
    try:
        return config_path('presets')
    except FileNotFoundError:
        # materials.yaml not installed yet: fall back to the source tree.
        return Path(__file__).resolve().parents[2] / 'config' / 'presets'


def list_presets():
    """Return the names of the available presets, 'custom' first, then alphabetical."""
    names = sorted(p.stem for p in _presets_dir().glob('*.yaml'))
    return tuple(sorted(names, key=lambda n: (n != 'custom', n)))


def preset_summary(name):
    """Return the one-line summary of a preset (its first comment line, minus the name)."""
    path = _preset_path(name)
    with open(path, encoding='utf-8') as f:
        first = f.readline().strip()
    text = first.lstrip('#').strip()
    prefix = f'{name}:'
    return text[len(prefix):].strip() if text.startswith(prefix) else text


def _preset_path(name):
    known = list_presets()
    if not isinstance(name, str) or name not in known:
        raise ConfigError('preset', name, 'one of ' + ', '.join(known))
    return _presets_dir() / f'{name}.yaml'


def load_preset(name):
    """Return the parameters of preset ``name`` (ConfigError listing the known ones)."""
    params = read_params_file(_preset_path(name), PRESET_NODE)
    params['preset'] = name
    return params


def merge_params(file_params=None, overrides=None, use_presets=True):
    """
    Merge preset < parameter file < overrides; the preset named by the merged 'preset' key.

    With use_presets false (sensors without presets) this is a plain merge.
    """
    merged = {**(file_params or {}), **(overrides or {})}
    if not use_presets:
        return merged
    name = merged.get('preset', 'custom')
    return {**load_preset(name), **merged}
