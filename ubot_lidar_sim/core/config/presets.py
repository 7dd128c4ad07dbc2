"""
Sensor presets (config/presets/*.yaml) and the merge order they take part in.

A preset file is a node parameter file (read by config/params_file.py) whose first comment line
reads ``# <name>: <summary>``. Its blocks say which sensor it is for: ``/**`` or ``lidar_3d:``
for the 3D LiDAR, ``laser_scan:`` for a 2D scanner (``custom``, the defaults, fits both).
Parameters merge as preset < parameter file < explicit overrides.
"""

from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from ubot_lidar_sim.core.config.params_file import load_blocks, node_params
from ubot_lidar_sim.core.errors import ConfigError, did_you_mean
from ubot_lidar_sim.core.resources import config_path

PRESET_NODES = ('lidar_3d', 'laser_scan')    # the nodes whose config has the preset parameter


def _presets_dir() -> Path:
    try:
        return Path(config_path('presets'))
    except FileNotFoundError:
        # materials.yaml not installed yet: fall back to the source tree.
        return Path(__file__).resolve().parents[3] / 'config' / 'presets'


def _all_presets() -> Tuple[str, ...]:
    """Return every preset name, 'custom' first, then alphabetical."""
    names = sorted(p.stem for p in _presets_dir().glob('*.yaml'))
    return tuple(sorted(names, key=lambda n: (n != 'custom', n)))


def preset_nodes(name: str) -> Tuple[str, ...]:
    """
    Return the nodes (of PRESET_NODES) preset ``name`` is for.

    Its blocks named for a node (``laser_scan:``) say so; a wildcard-only file (``/**``) is a
    lidar_3d preset, or fits every node when it sets nothing but its name (``custom``).
    """
    blocks = load_blocks(preset_path(name))
    named = tuple(node for node in PRESET_NODES
                  if any(key.strip('/').split('/')[-1] == node for key, _ in blocks))
    if named:
        return named
    params = node_params(blocks, PRESET_NODES[0]) or {}
    return PRESET_NODES if set(params) <= {'preset'} else PRESET_NODES[:1]


def list_presets(node: Optional[str] = 'lidar_3d') -> Tuple[str, ...]:
    """Return the presets of ``node`` (None: all), 'custom' first, then alphabetical."""
    names = _all_presets()
    return names if node is None else tuple(n for n in names if node in preset_nodes(n))


def preset_pattern(name: str) -> str:
    """Return a preset's scan pattern: its pattern_type (spinning, rosette) or planar (2D)."""
    nodes = preset_nodes(name)
    if 'lidar_3d' not in nodes:
        return 'planar'
    return str(load_preset(name).get('pattern_type', 'spinning'))


def preset_summary(name: str) -> str:
    """Return the one-line summary of a preset (its first comment line, minus the name)."""
    path = preset_path(name)
    with open(path, encoding='utf-8') as f:
        first = f.readline().strip()
    text = first.lstrip('#').strip()
    prefix = f'{name}:'
    return text[len(prefix):].strip() if text.startswith(prefix) else text


def preset_path(name: object) -> Path:
    """Return the file of preset ``name`` (ConfigError listing the presets)."""
    known = _all_presets()
    if not isinstance(name, str) or name not in known:
        raise ConfigError('preset', name, 'one of ' + ', '.join(known))
    return _presets_dir() / f'{name}.yaml'


def load_preset(name: str, node: str = 'lidar_3d') -> Dict[str, Any]:
    """Return node's parameters of preset ``name`` (ConfigError listing node's presets)."""
    if name not in _all_presets() or node not in preset_nodes(name):
        known = list_presets(node)
        raise ConfigError('preset', name, f'a {node} preset: {", ".join(known)}'
                          f'{did_you_mean(name, known)}')
    params = node_params(load_blocks(preset_path(name)), node) or {}
    params['preset'] = name
    return params


def merge_params(file_params: Optional[Dict[str, Any]] = None,
                 overrides: Optional[Dict[str, Any]] = None, use_presets: bool = True,
                 node: str = 'lidar_3d') -> Dict[str, Any]:
    """
    Merge preset < parameter file < overrides; node's preset named by the merged 'preset' key.

    With use_presets false (sensors without presets) this is a plain merge.
    """
    merged = {**(file_params or {}), **(overrides or {})}
    if not use_presets:
        return merged
    name = merged.get('preset', 'custom')
    return {**load_preset(name, node), **merged}
