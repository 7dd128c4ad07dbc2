"""
Sensor presets (config/presets/*.yaml) and node-format parameter files.

A preset file is a node parameter file (``/**: ros__parameters: {...}``) whose first comment line
reads ``# <name>: <summary>``. Parameters merge as preset < parameter file < explicit overrides.
"""

from pathlib import Path

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.resources import config_path


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
    params = read_params_file(_preset_path(name))
    params['preset'] = name
    return params


def read_params_file(path, node_names=()):
    """
    Return the ``ros__parameters`` of a node parameter file as a dict.

    Takes the first of ``node_names`` present (with or without a leading '/'), else ``/**``,
    else the only node in the file. OSError / yaml.YAMLError propagate; a file of the wrong shape
    raises ConfigError naming it.
    """
    import yaml  # lazy: only parameter files need it

    with open(path, encoding='utf-8') as f:
        doc = yaml.safe_load(f)
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ConfigError('params', str(path), 'a mapping <node_name>: ros__parameters: {...}')
    candidates = [n for name in node_names for n in (name, '/' + name)] + ['/**']
    key = next((k for k in candidates if k in doc), None)
    if key is None and len(doc) == 1:
        key = next(iter(doc))
    if key is None:
        raise ConfigError('params', str(path),
                          'a file with a node entry for ' + ', '.join(list(node_names) + ['/**']))
    node = doc[key]
    if not isinstance(node, dict) or not isinstance(node.get('ros__parameters', {}), dict):
        raise ConfigError('params', str(path), f'{key}: ros__parameters: {{name: value, ...}}')
    return dict(node.get('ros__parameters') or {})


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
