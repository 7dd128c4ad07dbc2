"""
World names a user can type from any directory: built-in worlds, the example files, paths.

``resolve_world('example')`` is config/worlds/example.yaml; 'demo' and 'flat' stay names (built
in code, core/world/builtin.py); any other text is a path, relative to the working directory.
A path that is not a readable file is one WorldError, in one wording, listing the names.
"""

from pathlib import Path

from ubot_lidar_sim.core.errors import did_you_mean, WorldError
from ubot_lidar_sim.core.resources import config_path
from ubot_lidar_sim.core.world.builtin import BUILTIN_WORLDS


def example_worlds() -> dict[str, Path]:
    """Return {name: path} of the example world files (config/worlds/*.yaml)."""
    return {p.stem: p for p in sorted(config_path('worlds').glob('*.yaml'))}


def world_names() -> tuple[str, ...]:
    """Return the names accepted in place of a world file: built-in worlds and examples."""
    return (*BUILTIN_WORLDS, *(n for n in example_worlds() if n not in BUILTIN_WORLDS))


def resolve_world(spec: str | Path, name: str = 'world_file') -> str | Path:
    """
    Return a built-in world's name, an example's path or the path spec names (from the cwd).

    WorldError names the parameter (name), the text given and the built-in names when spec is
    neither a name nor a readable file.
    """
    if isinstance(spec, str) and spec in BUILTIN_WORLDS:
        return spec
    examples = example_worlds()
    if isinstance(spec, str) and spec in examples:
        return examples[spec]
    path = Path(spec).expanduser()
    if not path.is_absolute():
        path = Path.cwd() / path
    why = 'no such file'
    if path.is_file():
        try:
            with open(path, 'rb'):
                return path
        except OSError as exc:
            why = exc.strerror or str(exc)
    elif path.exists():
        why = 'not a regular file'      # a directory, a FIFO, a device
    names = world_names()
    where = '' if Path(spec).expanduser().is_absolute() else f' from {Path.cwd()}'
    raise WorldError(f'{name}: cannot read {str(spec)!r} ({why}{where}): allowed a '
                     f'readable world YAML or SDF file, or a built-in world: '
                     f'{", ".join(names)}{did_you_mean(str(spec), names)}')
