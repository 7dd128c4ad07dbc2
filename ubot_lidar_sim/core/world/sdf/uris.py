"""
URIs of SDF includes and meshes -> files (docs/worlds.md, "Gazebo SDF worlds").

``model://NAME/rest``: the directories of GZ_SIM_RESOURCE_PATH, IGN_GAZEBO_RESOURCE_PATH and
GAZEBO_MODEL_PATH (colon-separated, in that order), then ``model_paths``; ``package://PKG/rest``:
``share/PKG`` of the AMENT_PREFIX_PATH prefix whose ament index lists PKG; ``file://`` and
relative paths (a bare include name too): the first that exists of the including file's
directory, the world file's directory, the working directory, then the directories of
RESOURCE_VARIABLES and the model directories above, as gz-common's SystemPaths::FindFileURI
(working directory, then its file paths: gz-common src/SystemPaths.cc:324-341) and Classic's
SystemPaths::FindFile (GAZEBO_RESOURCE_PATH, which the AWS worlds' package.xml exports) look a
``file://models/...`` URI up; Fuel URLs: the local Fuel caches (GZ_FUEL_CACHE_PATH,
IGN_FUEL_CACHE_PATH, ~/.gz/fuel, ~/.ignition/fuel of Fortress), the newest version. Gazebo's
standard "Ground Plane" and "Sun" need no cache (nor Classic's model://ground_plane and
model://sun a model path): they resolve to BUILTIN names the world builder knows.
"""

from collections.abc import Callable, Iterable
import os
from pathlib import Path
from urllib.parse import unquote, urlparse
from xml.etree.ElementTree import Element

from ubot_lidar_sim.core.world.sdf.reading import read_xml, SdfError, SdfMissing

PATH_VARIABLES = ('GZ_SIM_RESOURCE_PATH', 'IGN_GAZEBO_RESOURCE_PATH', 'GAZEBO_MODEL_PATH')
# Where a relative file:// URI is looked up after the world's directories and the working one.
RESOURCE_VARIABLES = ('GAZEBO_RESOURCE_PATH', 'GZ_SIM_RESOURCE_PATH', 'IGN_GAZEBO_RESOURCE_PATH',
                      'GZ_FILE_PATH')
FUEL_HOSTS = ('fuel.gazebosim.org', 'fuel.ignitionrobotics.org')
# Fuel models every Gazebo Sim example world includes, built without the Fuel cache.
BUILTIN = {'ground plane': 'builtin:ground_plane', 'sun': 'builtin:sun'}
# Gazebo Classic's stock models of the same, when no model path holds them.
CLASSIC_BUILTIN = {'ground_plane': 'builtin:ground_plane', 'sun': 'builtin:sun'}


def _env_dirs(variables: Iterable[str]) -> list[Path]:
    """Return the directories of colon-separated environment variables, in order."""
    return [Path(d) for var in variables for d in os.environ.get(var, '').split(':') if d]


def search_dirs(model_paths: Iterable[str | Path] = ()) -> list[Path]:
    """Return the model directories in search order: the three variables, then model_paths."""
    return _env_dirs(PATH_VARIABLES) + [Path(d) for d in model_paths if d]


def fuel_caches() -> list[Path]:
    """Return the Fuel cache directories: GZ_ and IGN_FUEL_CACHE_PATH, ~/.gz/fuel, ~/.ignition."""
    dirs = _env_dirs(('GZ_FUEL_CACHE_PATH', 'IGN_FUEL_CACHE_PATH'))
    return dirs + [Path.home() / '.gz' / 'fuel', Path.home() / '.ignition' / 'fuel']


def _relative(path: Path, base_dirs: Iterable[str | Path | None],
              model_paths: Iterable[str | Path], uri: str, where: str) -> Path:
    """Return the first existing of path under base_dirs, the cwd, then the resource paths."""
    dirs = [Path(d) for d in base_dirs if d is not None] + [Path.cwd()]
    dirs += _env_dirs(RESOURCE_VARIABLES) + search_dirs(model_paths)
    for d in dirs:
        if (d / path).exists():
            return d / path
    raise SdfMissing(f"{where}: '{uri}' not found in the world's or model's directory, the "
                     f"working directory, {', '.join(RESOURCE_VARIABLES[:2])} or the model "
                     f'paths ({len(dirs)} directories)')


def _fuel(uri: str, where: str) -> Path | str:
    """Resolve a Fuel model URL through the local cache (newest version); BUILTIN if standard."""
    parts = [unquote(p) for p in urlparse(uri).path.split('/') if p]
    if parts and parts[0] == '1.0':
        parts = parts[1:]
    if len(parts) < 3 or parts[1] != 'models':
        raise SdfError(f"{where}: '{uri}' is not a Fuel model URL (.../OWNER/models/NAME)")
    owner, name, rest = parts[0], parts[2], parts[3:]
    version = rest[0] if rest and rest[0].isdigit() else None
    rest = rest[1:] if version or (rest and rest[0] == 'tip') else rest
    if rest and rest[0] == 'files':
        rest = rest[1:]
    for cache in fuel_caches():
        base = cache / urlparse(uri).netloc / owner.lower() / 'models' / name.lower()
        if base.is_dir():
            versions = sorted((p for p in base.iterdir() if p.name.isdigit()),
                              key=lambda p: int(p.name))
            chosen = base / version if version else (versions[-1] if versions else None)
            if chosen is not None and chosen.is_dir():
                return chosen.joinpath(*rest)
    if name.lower() in BUILTIN and not rest:
        return BUILTIN[name.lower()]
    raise SdfMissing(f"{where}: Fuel model '{owner}/{name}' is not in a local Fuel cache "
                     f"({', '.join(map(str, fuel_caches()))}; fetch it once with Gazebo, or "
                     'copy the model there)')


def _package(pkg: str, rest: str, uri: str, where: str) -> Path:
    """Resolve package://PKG/rest through the ament index of AMENT_PREFIX_PATH."""
    prefixes = [Path(p) for p in os.environ.get('AMENT_PREFIX_PATH', '').split(':') if p]
    for prefix in prefixes:
        if (prefix / 'share' / 'ament_index' / 'resource_index' / 'packages' / pkg).exists():
            return prefix / 'share' / pkg / rest
    raise SdfMissing(f"{where}: '{uri}': package '{pkg}' is not in the ament index "
                     f'(AMENT_PREFIX_PATH: {len(prefixes)} prefixes; is ROS sourced?)')


def resolve(uri: str, base_dirs: Iterable[str | Path | None], model_paths: Iterable[str | Path],
            where: str) -> Path | str:
    """
    Return the Path (or a BUILTIN name) a URI names; SdfMissing naming where and the URI if none.

    base_dirs: the directories of the file the URI is in and of the world file (a relative path
    is looked up there first); model_paths: the parameter's directories.
    """
    uri = uri.strip()
    parsed = urlparse(uri)
    if parsed.scheme == 'model':
        name, rest = parsed.netloc, unquote(parsed.path).lstrip('/')
        dirs = search_dirs(model_paths)
        for d in dirs:
            if (d / name).exists():
                return d / name / rest if rest else d / name
        if name in CLASSIC_BUILTIN and not rest:
            return CLASSIC_BUILTIN[name]
        raise SdfMissing(f"{where}: '{uri}': model '{name}' not found in "
                         f"{', '.join(PATH_VARIABLES)} or model_paths "
                         f"({len(dirs)} directories: {', '.join(map(str, dirs[:4]))})")
    if parsed.scheme == 'package':
        return _package(parsed.netloc, unquote(parsed.path).lstrip('/'), uri, where)
    if parsed.scheme in ('http', 'https'):
        if parsed.netloc in FUEL_HOSTS:
            return _fuel(uri, where)
        raise SdfError(f"{where}: '{uri}': only Fuel URLs ({', '.join(FUEL_HOSTS)}) are read")
    if parsed.scheme == 'file':
        path = Path(unquote(parsed.netloc + parsed.path))
    elif parsed.scheme:
        raise SdfError(f"{where}: '{uri}': unknown URI scheme '{parsed.scheme}' (model, "
                       'package, file, a Fuel URL, or a relative path)')
    else:
        path = Path(uri)
    if path.is_absolute():
        if not path.exists():
            raise SdfMissing(f"{where}: '{uri}' not found")
        return path
    return _relative(path, base_dirs, model_paths, uri, where)


def model_file(directory: str | Path, where: str,
               read: Callable[[Path, str], Element] = read_xml) -> Path:
    """
    Return the SDF file of a model directory: model.config's <sdf> (newest), else model.sdf.

    read(path, what): the XML reader (expansion.Files.root reads each file once per load).
    """
    directory = Path(directory)
    if directory.is_file():
        return directory
    config = directory / 'model.config'
    if config.is_file():
        root = read(config, 'model.config')
        best = None
        for el in root.iter('sdf'):
            version = tuple(int(x) for x in (el.get('version') or '0').split('.')
                            if x.isdigit())
            if el.text and el.text.strip() and (best is None or version > best[0]):
                best = (version, el.text.strip())
        if best is not None:
            return directory / best[1]
    if (directory / 'model.sdf').is_file():
        return directory / 'model.sdf'
    raise SdfMissing(f"{where}: model directory '{directory}' has neither model.config nor "
                     'model.sdf')
