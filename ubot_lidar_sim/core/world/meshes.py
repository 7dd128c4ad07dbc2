"""
Mesh files of any world (YAML ``mesh`` objects, SDF ``<mesh>``): COLLADA, glTF/GLB, OBJ, STL, PLY.

Read with trimesh (pycollada for COLLADA), placed as Gazebo's mesh loaders (gz-common) place
them: every node transform of the file's scene applied from the root down, a COLLADA file scaled
by its ``<asset><unit meter>`` (gz-common ColladaLoader::Load scales the whole mesh by it),
``<up_axis>`` not applied (ColladaLoader does not read it) and a glTF file kept in its own axes
with its root transform (AssimpLoader keeps the root rotation for glTF / GLB). COLLADA is parsed
by defusedxml first, so a file with a DTD or entities is refused before pycollada sees it.

The parsed triangles are cached on disk (``UBOT_LIDAR_SIM_MESH_CACHE``, else
``~/.cache/ubot_lidar_sim/meshes``) under the sha256 of the file's bytes (and of a glTF's buffer
and image files), so a warm load reads one .npz per mesh. An entry is written as outputs are
(core/safe_write.py: an unpredictable temporary, no link followed, renamed into place), read
without following a link or blocking on a FIFO, and checked as a fresh parse is (_validate);
an entry that fails is parsed again from the mesh, with one warning. Every file is checked
(core/file_checks.py: a regular file, at most MESH_MAX_BYTES) before a byte of it is read.
"""

from collections.abc import Mapping, Sequence
import hashlib
import json
import logging
import os
from pathlib import Path
import re
import struct
from typing import Any

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import parse as defused_parse
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.file_checks import (check_regular_file, FileRefused, MESH_MAX_BYTES,
                                             open_checked, read_checked, TEXT_MAX_BYTES)
from ubot_lidar_sim.core.safe_write import write_beside
from ubot_lidar_sim.core.world import loaders
from ubot_lidar_sim.core.world.schema import Context

LOG = logging.getLogger(__name__)
#: (part names, vertices (V, 3) m, triangles (T, 3), part offsets (P + 1,)) of a mesh file.
Parts = tuple[list[str], NDArray[np.float64], NDArray[np.int64], NDArray[np.int64]]

MESH_SUFFIXES = ('.dae', '.gltf', '.glb', '.obj', '.stl', '.ply')
_CACHE_VERSION = b'meshes-2'
_COUNT = re.compile(rb'<(?:triangles|polylist|polygons)\b[^>]*\bcount="(\d+)"')


class MeshError(Exception):
    """A mesh file that cannot be used; the message is the problem (the caller names the file)."""


def cache_dir() -> Path:
    """Return the directory of the mesh cache (created on first write)."""
    env = os.environ.get('UBOT_LIDAR_SIM_MESH_CACHE')
    return Path(env) if env else Path.home() / '.cache' / 'ubot_lidar_sim' / 'meshes'


def _read_file(path: Path, max_bytes: int) -> bytes:
    """Return a file's bytes after the one check (MeshError naming what it is instead)."""
    try:
        return read_checked(path, max_bytes)
    except FileRefused as exc:
        raise MeshError(f'is {exc.strerror}') from None


def _gltf_json(path: Path) -> dict[str, Any]:
    """Return the JSON object of a .gltf file or of a .glb file's first chunk."""
    glb = path.suffix.lower() == '.glb'
    data = _read_file(path, MESH_MAX_BYTES if glb else TEXT_MAX_BYTES)
    if glb:
        if len(data) < 20 or data[:4] != b'glTF':
            raise MeshError('is not a GLB file (bad header)')
        length = struct.unpack('<I', data[12:16])[0]
        data = data[20:20 + length]
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise MeshError(f'is not valid glTF JSON ({exc})') from None
    if not isinstance(doc, dict):
        raise MeshError(f'is not a glTF document (its JSON is {type(doc).__name__}, '
                        'expected an object)')
    return doc


def _objects(doc: dict[str, Any], key: str, where: str = 'the document'
             ) -> list[dict[str, Any]]:
    """Return doc[key] (default []) as a list of JSON objects; MeshError when it is not one."""
    items = doc.get(key, [])
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise MeshError(f'is not a valid glTF document ({where}: "{key}" is not a list of '
                        'objects)')
    return items


def _gltf_faces(doc: dict[str, Any]) -> int:
    """Return the triangle count of a glTF document's primitives (from its accessors)."""
    accessors = _objects(doc, 'accessors')
    total = 0
    for m in _objects(doc, 'meshes'):
        for prim in _objects(m, 'primitives', 'a mesh'):
            attributes = prim.get('attributes', {})
            k = prim.get('indices', attributes.get('POSITION')
                         if isinstance(attributes, dict) else None)
            if isinstance(k, int) and 0 <= k < len(accessors):
                count = accessors[k].get('count', 0)
                total += count // 3 if isinstance(count, int) and count > 0 else 0
    return total


def _gltf_files(path: Path, doc: dict[str, Any]) -> list[Path]:
    """Return the files a glTF document's buffers and images name, each checked before use."""
    files: list[Path] = []
    for item in _objects(doc, 'buffers') + _objects(doc, 'images'):
        uri = item.get('uri', '')
        if not isinstance(uri, str) or not uri or uri.startswith('data:'):
            continue
        target = path.parent / uri
        try:
            check_regular_file(target, MESH_MAX_BYTES)
        except FileNotFoundError:
            continue                # trimesh names it when it reads the model
        except OSError as exc:
            raise MeshError(f"names '{uri}', which is {exc.strerror}") from None
        files.append(target)
    return files


def _collada_meter(path: Path) -> tuple[float, int, dict[str, str]]:
    """
    Parse a COLLADA file with defusedxml; return (<unit meter>, declared face count, names).

    names: {geometry id: the name of the <node> instancing it} (gz-common's submesh names).
    """
    try:
        root = defused_parse(str(path)).getroot()
    except DefusedXmlException as exc:
        raise MeshError(f'is refused: {type(exc).__name__} (DTDs and entities are not read)') \
            from None
    except Exception as exc:  # noqa: B902 (ParseError and the expat errors)
        raise MeshError(f'is not valid XML ({exc})') from None
    meter = 1.0
    for el in root.iter():
        if el.tag.rsplit('}', 1)[-1] == 'unit' and 'meter' in el.attrib:
            try:
                meter = float(el.attrib['meter'])
            except ValueError:
                raise MeshError(f"has <unit meter='{el.attrib['meter']}'>, not a number") \
                    from None
            break
    if not (np.isfinite(meter) and meter > 0):
        raise MeshError(f'has <unit meter={meter}>, expected a number > 0')
    faces = sum(int(c) for c in _COUNT.findall(_read_file(path, MESH_MAX_BYTES)))
    names: dict[str, str] = {}
    for node in root.iter():
        if node.tag.rsplit('}', 1)[-1] != 'node' or not node.get('name'):
            continue
        for inst in node:
            if inst.tag.rsplit('}', 1)[-1] == 'instance_geometry':
                names.setdefault(inst.get('url', '').lstrip('#'), node.get('name', ''))
    return meter, faces, names


def face_estimate(path: Path, budget: int) -> int | None:
    """
    Return a cheap upper estimate of a mesh file's triangles, from its header or declarations.

    PLY / OBJ / STL as loaders._mesh_face_estimate (None: a bad PLY header); COLLADA: the count
    attributes of its triangles / polylist / polygons; glTF: its accessors.
    """
    suffix = path.suffix.lower()
    if suffix == '.dae':
        return _collada_meter(path)[1]
    if suffix in ('.gltf', '.glb'):
        return _gltf_faces(_gltf_json(path))
    return loaders._mesh_face_estimate(path, budget)


def _key(path: Path) -> str:
    """Return the cache key: sha256 of the file's bytes and of the files a glTF names."""
    h = hashlib.sha256(_CACHE_VERSION)
    h.update(_read_file(path, MESH_MAX_BYTES))
    if path.suffix.lower() in ('.gltf', '.glb'):
        for target in _gltf_files(path, _gltf_json(path)):
            h.update(_read_file(target, MESH_MAX_BYTES))
    return h.hexdigest()


def _read(path: Path) -> Parts:
    """
    Read a mesh with trimesh, node transforms applied: (names, vertices, triangles, offsets).

    One part per scene node holding triangles (names: the node names, gz-common's submesh
    names); offsets (P + 1,) index the parts' triangles in the concatenated arrays.
    """
    # trimesh (~0.5 s, 350 MB of address space with its scipy) only where a mesh is read: a
    # YAML world of primitives and maps, or the CLI's checks, never import it.
    import trimesh

    suffix = path.suffix.lower()
    meter, _, node_names = _collada_meter(path) if suffix == '.dae' else (1.0, 0, {})
    try:
        loaded: Any = trimesh.load(str(path), force='scene', process=False)    # a Scene
    except Exception as exc:  # noqa: B902 (any parser error is one line)
        raise MeshError(f'cannot be read as a mesh ({type(exc).__name__}: {exc})') from None
    names: list[str] = []
    parts: list[tuple[NDArray[np.float64], NDArray[np.int64]]] = []
    for node in loaded.graph.nodes_geometry:
        transform, name = loaded.graph[node]
        geom = loaded.geometry[name]
        if not hasattr(geom, 'faces') or len(geom.faces) == 0:
            continue
        v = np.asarray(geom.vertices, np.float64) @ transform[:3, :3].T + transform[:3, 3]
        names.append(node_names.get(str(name), str(node)))
        parts.append((v * meter, np.asarray(geom.faces, np.int64)))
    if not parts:
        raise MeshError('has no triangles')
    first_vertex = np.cumsum([0] + [p[0].shape[0] for p in parts[:-1]])
    v = np.concatenate([p[0] for p in parts])
    t = np.concatenate([p[1] + o for p, o in zip(parts, first_vertex)])
    offsets = np.cumsum([0] + [p[1].shape[0] for p in parts])
    return names, v, t, offsets


def _validate(names: Sequence[str], v: ArrayLike, t: ArrayLike, offsets: ArrayLike) -> None:
    """Raise MeshError unless the arrays are a usable mesh (a fresh parse or a cache entry)."""
    v, t, offsets = np.asarray(v), np.asarray(t), np.asarray(offsets)     # a cache entry's
    if v.ndim != 2 or v.shape[1:] != (3,) or v.dtype.kind != 'f':
        raise MeshError(f'has vertices of shape {v.shape} ({v.dtype}), expected (V, 3) floats')
    if t.ndim != 2 or t.shape[1:] != (3,) or t.dtype.kind not in 'iu' or t.shape[0] == 0:
        raise MeshError(f'has triangles of shape {t.shape} ({t.dtype}), expected (T >= 1, 3) '
                        'integers')
    if not np.all(np.isfinite(v)):
        raise MeshError('has non-finite vertices')
    if t.min() < 0 or t.max() >= v.shape[0]:
        raise MeshError(f'has a triangle index {int(t.max()) if t.min() >= 0 else int(t.min())}'
                        f' outside its {v.shape[0]} vertices')
    if offsets.ndim != 1 or offsets.dtype.kind not in 'iu' or len(offsets) != len(names) + 1 \
            or offsets[0] != 0 or offsets[-1] != t.shape[0] or np.any(np.diff(offsets) < 0):
        raise MeshError('has part offsets that do not split its triangles')


def _save(cached: Path, names: list[str], v: NDArray[np.float64], t: NDArray[np.int64],
          offsets: NDArray[np.int64]) -> None:
    """Write one parsed mesh to the cache (safe_write's rules; a read-only cache is skipped)."""
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        write_beside(cached, lambda f: np.savez(f, v=v, t=t, offsets=offsets,
                                                names=np.asarray(names, dtype=str)))
    except OSError:
        pass                # a read-only cache only costs the next load its parse


def _load_cached(cached: Path) -> Parts | None:
    """
    Return the parts of a cache entry (None: no entry); MeshError when it is unusable.

    Never through a link (O_NOFOLLOW), never blocking on a FIFO, at most MESH_MAX_BYTES.
    """
    try:
        f = open_checked(cached, MESH_MAX_BYTES, follow_links=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise MeshError(exc.strerror or str(exc)) from None
    try:
        with f, np.load(f, allow_pickle=False) as z:
            names, v, t, offsets = [str(n) for n in z['names']], z['v'], z['t'], z['offsets']
    except Exception as exc:  # noqa: B902 (a truncated zip, a missing array: any is one line)
        raise MeshError(f'{type(exc).__name__}: {exc}') from None
    _validate(names, v, t, offsets)
    return names, v, t, offsets


def _parsed(path: Path, budget: int) -> Parts:
    """Return (names, vertices, triangles, offsets) parsed from the mesh file, checked."""
    estimate = face_estimate(path, budget)
    if estimate is None:
        raise MeshError('is not a valid PLY file (corrupt header)')
    if estimate > budget:
        raise MeshError(f'has about {estimate} triangles, more than the {budget} left')
    parts = _read(path)
    _validate(*parts)
    return parts


def _checked(path: str | Path, budget: int) -> Parts:
    """
    Return (names, vertices, triangles, offsets) of a mesh file, cached or parsed.

    From the cache when its bytes were parsed before (and the entry passes _validate), else
    checked (type and size, format, estimated triangles), parsed and cached.
    """
    path = Path(path)
    if path.suffix.lower() not in MESH_SUFFIXES:
        raise MeshError(f"has the unsupported format '{path.suffix}' "
                        f"({', '.join(s[1:] for s in MESH_SUFFIXES)})")
    cached = cache_dir() / f'{_key(path)}.npz'
    try:
        parts = _load_cached(cached)
    except MeshError as exc:
        LOG.warning("mesh cache entry '%s' is unusable (%s): parsed '%s' again", cached, exc,
                    path.name)
        parts = None
    if parts is None:
        parts = _parsed(path, budget)
        _save(cached, *parts)
    names, v, t, offsets = parts
    if t.shape[0] > budget:
        raise MeshError(f'has {t.shape[0]} triangles, more than the {budget} left')
    return names, v, t, offsets


def load_mesh(path: str | Path, budget: int) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """
    Return the triangles of a mesh file: vertices (V, 3) float64 in metres, triangles (T, 3).

    Refused (MeshError) beyond budget triangles (estimated before reading), unreadable, empty
    or with non-finite vertices. A cached parse of the same bytes is read instead of the file.
    """
    _, v, t, _ = _checked(path, budget)
    return v, t


def load_parts(path: str | Path, budget: int
               ) -> tuple[list[str], list[tuple[NDArray[np.float64], NDArray[np.int64]]]]:
    """Return (names, [(vertices, triangles)]) of a mesh file's parts (SDF <submesh>)."""
    names, v, t, offsets = _checked(path, budget)
    parts: list[tuple[NDArray[np.float64], NDArray[np.int64]]] = []
    for k in range(len(names)):
        tri = t[offsets[k]:offsets[k + 1]]
        used, local = np.unique(tri, return_inverse=True)
        parts.append((v[used], local.reshape(-1, 3).astype(np.int64)))
    return names, parts


def mesh(obj: Mapping[str, Any], where: str, ctx: Context,
         budget: int) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """
    Read the file of a YAML ``mesh`` object (as loaders.mesh); COLLADA and glTF through load_mesh.

    PLY / OBJ / STL are read by loaders.mesh (open3d) as before this module existed.
    """
    suffix = Path(str(obj.get('file', ''))).suffix.lower()
    if suffix not in ('.dae', '.gltf', '.glb'):
        return loaders.mesh(obj, where, ctx, budget)
    path = ctx.path(obj, where)
    try:
        v, t = load_mesh(path, budget)
    except MeshError as exc:
        raise ctx.error(f'{where}.file', f"'{path.name}' {exc}") from None
    return v * loaders.mesh_scale(obj, where, ctx), t
