"""
What a sequence's bytes are made from besides its spec entry: the contents of its input files.

A manifest row's ``key`` (spec.py) covers the spec's values, paths included; ``inputs_sha256``
covers what those paths hold and what the package brings: the world file and every file it
references (meshes, heightfields, maps and their images: ``World.files``), the material table
(the package's and the sensors' ``materials_file``), each sensor's ``params_file`` and preset
file, and the package version. A resume redoes a sequence whose inputs changed.
"""

import hashlib
from pathlib import Path

from ubot_lidar_sim import __version__
from ubot_lidar_sim.core.config.presets import preset_path
from ubot_lidar_sim.core.resources import config_path


def file_sha256(path):
    """Return the sha256 (hex) of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            h.update(block)
    return h.hexdigest()


def input_files(world, sensors, params_files):
    """
    Return the input files of a recording, each once, in a fixed order.

    world: the loaded World; sensors: RigSensors (configs); params_files: the spec's
    ``params_file`` of each sensor ('' for none).
    """
    paths = [*world.files, config_path('materials.yaml')]
    for s, params_file in zip(sensors, params_files):
        if s.cfg.material_table_file:
            paths.append(s.cfg.material_table_file)
        if params_file:
            paths.append(params_file)
        if getattr(s.cfg, 'preset', None):      # terrain_sensor has no presets
            paths.append(preset_path(s.cfg.preset))
    return list(dict.fromkeys(str(Path(p)) for p in paths))


def inputs_sha256(world, sensors, params_files):
    """sha256 over the package version and 'path sha256(file)' lines of input_files()."""
    h = hashlib.sha256(f'ubot_lidar_sim {__version__}\n'.encode('utf-8'))
    for path in input_files(world, sensors, params_files):
        h.update(f'{path} {file_sha256(path)}\n'.encode('utf-8'))
    return h.hexdigest()
