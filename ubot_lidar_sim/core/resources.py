"""Locate the package's data files (config/) in a source tree or an installed colcon prefix."""

from pathlib import Path

_PKG = 'ubot_lidar_sim'


def config_dir() -> Path:
    """
    Return the directory holding materials.yaml, presets/ and worlds/.

    Looks first beside the source tree (repo/config), then in the install prefix
    (<prefix>/share/ubot_lidar_sim/config), found by walking up from this file.
    """
    here = Path(__file__).resolve()
    source = here.parents[2] / 'config'
    if (source / 'materials.yaml').is_file():
        return source
    for parent in here.parents:
        candidate = parent / 'share' / _PKG / 'config'
        if (candidate / 'materials.yaml').is_file():
            return candidate
    raise FileNotFoundError(
        f'{_PKG}: config directory with materials.yaml not found near {here}')


def config_path(*parts: str) -> Path:
    """Return the path of a file below config_dir(), e.g. presets/x.yaml."""
    return config_dir().joinpath(*parts)
