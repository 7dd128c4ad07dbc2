"""
An SDF world file -> world objects, actors and a material report (docs/worlds.md).

Walks ``<world>`` (or a bare ``<model>`` file): ``<model>``s with their nested models, links,
visuals or collisions (``sdf_geometry``: a link with only one kind uses that one),
``<include>``s (``<uri>``, ``<name>``, ``<pose>`` replacing the model's own, ``<static>``,
``<experimental:params>``: params.py), ``<population>``s (population.py) and ``<actor>``s.
An included file with lights and no model (Classic's ``model://sun``) adds nothing. Elements
that draw nothing (lights, plugins, physics, scene, GUI, joints, ...) are listed once at debug
level. Every object is named by its scope ``model::link::visual``.

``missing``: ``error`` (the default) refuses a world with a model or mesh that is not there,
in one line naming every missing one (a run names them all, not the first); ``warn`` loads
the rest and logs one warning listing every missing one, as Gazebo goes on
past a missing model: sdformat records a URI_LOOKUP error for an include it cannot resolve and
reads the next element (src/parser.cc:1553-1557, 1732-1734).
"""

from collections.abc import Mapping, Sequence
import copy
from dataclasses import dataclass, field
import logging
from pathlib import Path
from xml.etree.ElementTree import Element, SubElement

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.class_ids import default_class
from ubot_lidar_sim.core.material_ids import FOLIAGE_MATERIALS
from ubot_lidar_sim.core.raycast.geometry import Geometry
from ubot_lidar_sim.core.world.actors import Actor
from ubot_lidar_sim.core.world.materials import material_index
from ubot_lidar_sim.core.world.objects import WorldObject
from ubot_lidar_sim.core.world.schema import SDF_GEOMETRY_DEFAULT
from ubot_lidar_sim.core.world.sdf.actors import read_actor
from ubot_lidar_sim.core.world.sdf.expansion import check_expansion, Files
from ubot_lidar_sim.core.world.sdf.geometry import place, read_geometry, Shape
from ubot_lidar_sim.core.world.sdf.materials import choose
from ubot_lidar_sim.core.world.sdf.params import apply_params, TAG as PARAMS
from ubot_lidar_sim.core.world.sdf.population import clone_positions
from ubot_lidar_sim.core.world.sdf.poses import IDENTITY, ModelFrames, parse_pose
from ubot_lidar_sim.core.world.sdf.reading import (MAX_MODELS, numbers, SdfError, SdfMissing,
                                                   text_of)
from ubot_lidar_sim.core.world.shapes import plane

LOG = logging.getLogger(__name__)
DRAWN = ('model', 'include', 'actor', 'link', 'visual', 'collision', 'pose', 'name', 'static',
         'uri', 'frame')
MISSING = ('error', 'warn')
GROUND_PLANE_SIZE_M = 100.0     # Gazebo's "Ground Plane" model: a 100 m x 100 m plane


@dataclass
class SdfScene:
    """What one SDF world gives: (WorldObject, Geometry) pairs, actors, files and the report."""

    parts: list[tuple[WorldObject, Geometry]] = field(default_factory=list)
    actors: list[Actor] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    report: list[tuple[str, str, str]] = field(default_factory=list)  # object, material, why
    ignored: set[tuple[str, str]] = field(default_factory=set)
    missing: list[str] = field(default_factory=list)     # URIs not found (missing: warn)
    models: int = 0
    triangles: int = 0
    sun: np.ndarray | None = None   # the first directional <light>'s direction (3,), world


class _Walk:
    """The state of one world's walk: options, budget and what was built so far."""

    def __init__(self, model_paths: Sequence[str], use: str, mapping: Mapping[str, str],
                 default: str, budget: int, missing: str) -> None:
        self.model_paths, self.use, self.mapping = tuple(model_paths), use, mapping
        self.default, self.budget, self.scene = default, budget, SdfScene()
        self.warn = missing == 'warn'
        self.files = Files('.', ())       # world() makes the world file's

    def skip(self, exc: SdfMissing) -> None:
        """Note a missing model or mesh; the world's end reports them all."""
        self.scene.missing.append(str(exc))

    def ignore(self, el: Element, where: str) -> None:
        """List an element that draws nothing, once per kind, at debug level."""
        key = (where.split(':')[0], el.tag)
        if key not in self.scene.ignored:
            self.scene.ignored.add(key)
            LOG.debug('%s: <%s> ignored (draws nothing for the rays)', where, el.tag)

    def add(self, name: str, shape: Shape, world_from: NDArray[np.float64],
            element: Element | None, where: str) -> None:
        """Add one surface: its material, its world geometry, within the budget."""
        material, why = choose(name, element, self.mapping, self.default)
        mat = material_index(material)
        geometry = place(shape, world_from)
        n = int(geometry.triangles.shape[0])
        self.scene.triangles += n
        if self.scene.triangles > self.budget:
            raise SdfError(f'{where}: world exceeds max_triangles ({self.scene.triangles} '
                           f'triangles so far, {self.budget} allowed)')
        if geometry.vertices.size and np.abs(geometry.vertices).max() > 1e6:
            raise SdfError(f'{where}: a vertex is beyond the 1e+06 m a world may span')
        self.scene.parts.append((WorldObject(name, 'sdf', mat, default_class(material),
                                             material in FOLIAGE_MATERIALS, shape.ground, n),
                                 geometry))
        self.scene.files += [f for f in shape.files if f not in self.scene.files]
        self.scene.report.append((name, material, why))

    def world(self, path: str | Path) -> SdfScene:
        """Walk the SDF file at path."""
        path = Path(path)
        self.scene.files.append(path)
        self.files = Files(path, self.model_paths)
        root = self.files.root(path, 'SDF file')
        if root.tag != 'sdf':
            raise SdfError(f'{path}: root element <{root.tag}>, expected <sdf>')
        check_expansion(self.files, path, root)
        world = root.find('world')
        top = world if world is not None else root
        for k, el in enumerate(top):
            where = f'{path}'
            if el.tag == 'model':
                self.model(el, IDENTITY, '', path, None, None)
            elif el.tag == 'include':
                self.include(el, IDENTITY, '', path, None)
            elif el.tag == 'population':
                self.population(el, k, path)
            elif el.tag == 'actor':
                actor, why = read_actor(el, IDENTITY, str(path),
                                        choose(el.get('name', ''), None, self.mapping,
                                               self.default)[0])
                if actor is None:
                    LOG.debug('%s: %s; not drawn', path, why)
                else:
                    self.scene.actors.append(actor)
            elif el.tag == 'light' and el.get('type') == 'directional' and self.scene.sun is None:
                self.scene.sun = _sun_direction(el, f'{path}: light {el.get("name", "")}')
            elif isinstance(el.tag, str):
                self.ignore(el, where)
        gone = self.scene.missing
        if gone and not self.warn:
            raise SdfMissing(gone[0] if len(gone) == 1 else f'{path}: {len(gone)} models or '
                             'meshes missing (missing: warn loads the rest): ' + ' | '.join(gone))
        if gone:
            LOG.warning('%s: loaded without %d missing model(s) or mesh(es) (missing: warn): %s',
                        path, len(gone), ' | '.join(gone))
        return self.scene

    def population(self, el: Element, index: int, src: Path) -> None:
        """Add the clones of a <population> as models named MODEL_clone_i at their positions."""
        where = f"{src}: population '{el.get('name', index)}'"
        model, positions = clone_positions(el, index, where)
        base = model.get('name') or 'model'
        for i, p in enumerate(positions):
            world_from = np.eye(4)
            world_from[:3, 3] = p
            self.model(model, IDENTITY, '', src, f'{base}_clone_{i}', world_from)

    def include(self, el: Element, parent: NDArray[np.float64], prefix: str, src: Path,
                frames: ModelFrames | None) -> None:
        """Place an <include>: its model file, name, pose (replacing the model's) and static."""
        uri = (el.findtext('uri') or '').strip()
        where = f"{src}: include '{uri}'"
        try:
            target, root = self.files.included(el, src, where)
        except SdfMissing as exc:
            self.skip(exc)
            return
        name = (el.findtext('name') or '').strip() or None
        pose_el = el.find('pose')
        if target == 'builtin:sun':
            LOG.debug('%s: the Sun is a light; the rays ignore it', where)
            return
        if target == 'builtin:ground_plane':
            scoped = prefix + (name or 'ground_plane')
            pose, rel = parse_pose(pose_el, f'{where}/pose')
            base = frames.frame(rel, where) if frames is not None and rel else parent
            v, t = plane([GROUND_PLANE_SIZE_M, GROUND_PLANE_SIZE_M])
            grey = _script_only('Gazebo/Grey')
            self.add(f'{scoped}::link::visual', Shape(v, np.asarray(t, np.int64), ground=True),
                     base @ pose, grey, where)
            return
        if isinstance(target, str) or root is None:     # uris.BUILTIN holds those two only
            raise SdfError(f'{where}: unknown built-in model {target}')
        if target not in self.scene.files:
            self.scene.files.append(target)
        model_el = root if root.tag == 'model' else root.find('model')
        if model_el is None and root.find('light') is not None:
            LOG.debug('%s: %s holds lights only; the rays ignore it', where, target)
            return
        if model_el is None:
            raise SdfError(f'{target}: no <model> in the included file ({where})')
        params = el.find(PARAMS)
        if params is not None:
            model_el = copy.deepcopy(model_el)      # the file's tree is shared by its includes
            apply_params(model_el, params, where)
        override = None
        if pose_el is not None:
            pose, rel = parse_pose(pose_el, f'{where}/pose')
            override = (frames.frame(rel, where) if frames is not None and rel else parent) @ pose
        self.model(model_el, parent, prefix, target, name, override, frames)

    def model(self, el: Element, parent: NDArray[np.float64], prefix: str, src: Path,
              name: str | None, world_from: NDArray[np.float64] | None,
              frames: ModelFrames | None = None) -> None:
        """Walk one <model> (world_from: an include's pose, replacing the model's own)."""
        name = name or el.get('name') or 'model'
        scoped = prefix + name
        where = f"{src}: model '{scoped}'"
        self.scene.models += 1
        if self.scene.models > MAX_MODELS:
            raise SdfError(f'{where}: more than {MAX_MODELS} models')
        if world_from is None:
            pose, rel = parse_pose(el.find('pose'), f'{where}/pose')
            world_from = (frames.frame(rel, where) if frames is not None and rel
                          else parent) @ pose
        own = ModelFrames(el, world_from, scoped)
        for child in el:
            if child.tag == 'link':
                self.link(child, own, scoped, src, where)
            elif child.tag == 'model':
                self.model(child, world_from, scoped + '::', src, None, None, own)
            elif child.tag == 'include':
                self.include(child, world_from, scoped + '::', src, own)
            elif isinstance(child.tag, str) and child.tag not in DRAWN:
                self.ignore(child, where)

    def link(self, el: Element, frames: ModelFrames, scoped: str, src: Path, where: str) -> None:
        """Add the visuals or collisions of one <link>."""
        lname = el.get('name') or 'link'
        where = f"{where}: link '{lname}'"
        world_link = frames.frame(lname, where)
        visuals, collisions = el.findall('visual'), el.findall('collision')
        chosen = visuals if (self.use == 'visual' and visuals) or not collisions else collisions
        for k, item in enumerate(chosen):
            iname = item.get('name') or f'{item.tag}_{k}'
            here = f"{where}: {item.tag} '{iname}'"
            geom = item.find('geometry')
            if geom is None:
                raise SdfError(f'{here}: <geometry> missing')
            try:
                shape = read_geometry(geom, f'{here}/geometry',
                                      (Path(src).parent, self.files.world_dir),
                                      self.model_paths, self.budget - self.scene.triangles)
            except SdfMissing as exc:
                self.skip(exc)
                continue
            if shape is None:
                continue
            self.add(f'{scoped}::{lname}::{iname}', shape, frames.placed(item, world_link, here),
                     item, here)


def _script_only(script: str) -> Element:
    """Return a stand-in <visual> whose only content is a Gazebo material script name."""
    visual = Element('visual')
    SubElement(SubElement(SubElement(visual, 'material'), 'script'), 'name').text = script
    return visual


def _sun_direction(el: Element, where: str) -> np.ndarray:
    """
    Return a directional light's <direction> (default 0 0 -1) turned by its <pose>, (3,).

    SDF's light: ``direction`` "Direction of the light, only applicable for spot and
    directional lights", in the light's frame (sdformat spec, light.sdf; default 0 0 -1).
    """
    d = np.asarray(numbers(text_of(el, 'direction', where, '0 0 -1'), 3, f'{where}/direction',
                           'direction'))
    if not np.linalg.norm(d) > 0.0:
        raise SdfError(f'{where}/direction: a zero vector')
    return np.asarray(parse_pose(el.find('pose'), where)[0][:3, :3] @ d, np.float64)


def load_sdf(path: str | Path, model_paths: Sequence[str] = (), use: str = SDF_GEOMETRY_DEFAULT,
             mapping: Mapping[str, str] | None = None, default: str = 'other',
             budget: int = 5_000_000, missing: str = 'error') -> SdfScene:
    """Return the SdfScene of an SDF world file (SdfError: one line: file, model, element)."""
    return _Walk(model_paths, use, mapping or {}, default, budget, missing).world(path)
