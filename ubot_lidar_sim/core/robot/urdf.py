"""
A URDF (or a xacro expanded by the ``xacro`` package with its arguments) -> RobotDescription.

Links and joints come from yourdfpy; their geometry goes through the SDF reader's
``read_geometry`` (one place for boxes, cylinders, spheres and meshes, with ``package://``,
``model://`` and ``file://`` resolved as in worlds). The ``<gazebo>`` extensions, which no URDF
library reads, are walked here: ``<gazebo reference="LINK">`` sensors, reference-less model
plugins, and every other tag listed as not honoured.
"""

from collections.abc import Iterable, Mapping, Sequence
import io
from pathlib import Path
from xml.etree import ElementTree

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring, iterparse
import numpy as np

from ubot_lidar_sim.core.robot.description import (Joint, Mimic, Note, Part, RobotDescription,
                                                   RobotError)
from ubot_lidar_sim.core.robot.plugins import read_drive
from ubot_lidar_sim.core.robot.sensors import read_sensor
from ubot_lidar_sim.core.robot.tree import check_count, check_mimics, MAX_LINKS, root_of
from ubot_lidar_sim.core.world.sdf.geometry import read_geometry
from ubot_lidar_sim.core.world.sdf.reading import read_xml, SdfError
from ubot_lidar_sim.core.yaml_io import MAX_FILE_BYTES
import xacro
import yourdfpy

XACRO_SUFFIXES = ('.xacro',)


def expand(path: str | Path, args: Mapping[str, str] | Iterable[tuple[str, str]]) -> str:
    """Return the URDF text of a file: a .xacro expanded with args {name: value}."""
    path = Path(path)
    if path.suffix not in XACRO_SUFFIXES:
        _count_links(path)
        try:
            root = read_xml(path, 'URDF file')   # size-capped, no DTD or entities
        except SdfError as exc:
            raise RobotError(str(exc)) from None
        check_count(len(root.findall('link')), str(path))   # before anything else is built
        return ElementTree.tostring(root, encoding='unicode')
    if not path.is_file():
        raise RobotError(f'{path}: robot description not found')
    try:
        doc = xacro.process_file(str(path), mappings=dict(args))
    except Exception as exc:  # noqa: B902 (XacroException, and the errors its eval raises)
        text = ' '.join(str(exc).split())
        hint = (" (pass it with robot_args:='NAME:=VALUE' or --robot-args 'NAME:=VALUE')"
                if 'arg' in text.lower() else '')
        raise RobotError(f'{path}: xacro: {text}{hint}') from None
    return doc.toxml()


def _count_links(path):
    """Refuse a file of more than MAX_LINKS links as the parser meets them (no full parse)."""
    n = 0
    try:
        for _, el in iterparse(str(path), events=('end',)):
            n += el.tag == 'link'
            if n > MAX_LINKS:
                check_count(n, f'{path} (counting stopped there)')
            el.clear()
    except (OSError, SyntaxError, ValueError, DefusedXmlException):
        return          # read_xml names what is wrong with the file


def _geometry_element(geometry):
    """Return the SDF <geometry> element of a yourdfpy Geometry."""
    geom = ElementTree.Element('geometry')
    if geometry.box is not None:
        ElementTree.SubElement(ElementTree.SubElement(geom, 'box'), 'size').text = \
            ' '.join(map(str, geometry.box.size))
    elif geometry.cylinder is not None:
        el = ElementTree.SubElement(geom, 'cylinder')
        ElementTree.SubElement(el, 'radius').text = str(geometry.cylinder.radius)
        ElementTree.SubElement(el, 'length').text = str(geometry.cylinder.length)
    elif geometry.sphere is not None:
        el = ElementTree.SubElement(geom, 'sphere')
        ElementTree.SubElement(el, 'radius').text = str(geometry.sphere.radius)
    elif geometry.mesh is not None:
        el = ElementTree.SubElement(geom, 'mesh')
        ElementTree.SubElement(el, 'uri').text = geometry.mesh.filename
        scale = geometry.mesh.scale
        if scale is not None:
            scale = np.broadcast_to(np.asarray(scale, np.float64), (3,))
            ElementTree.SubElement(el, 'scale').text = ' '.join(map(str, scale))
    return geom


def read_urdf(path: str | Path, args: Mapping[str, str] | Iterable[tuple[str, str]] = (),
              model_paths: Sequence[str] = (), budget: int = 2_000_000) -> RobotDescription:
    """Return the RobotDescription of a URDF or xacro file (RobotError: one line)."""
    path = Path(path)
    return read_urdf_text(expand(path, args), path, path.parent, model_paths, budget)


def read_urdf_text(text: str, source: str | Path, base_dir: str | Path,
                   model_paths: Sequence[str] = (), budget: int = 2_000_000) -> RobotDescription:
    """
    Return the RobotDescription of URDF text (RobotError: one line naming source).

    source names it in errors (a file, or the /robot_description topic, whose text
    robot_state_publisher publishes expanded); base_dir holds its relative mesh paths.
    """
    path = Path(source) if not isinstance(source, Path) else source
    if len(text.encode()) > MAX_FILE_BYTES:
        raise RobotError(f'{source}: {len(text.encode())} bytes, at most {MAX_FILE_BYTES}')
    try:
        root = fromstring(text)
    except Exception as exc:  # noqa: B902 (ParseError and defusedxml's refusals)
        raise RobotError(f'{path}: not valid URDF XML ({exc})') from None
    if root.tag != 'robot':
        raise RobotError(f'{path}: root element <{root.tag}>, expected <robot>')
    check_count(len(root.findall('link')), str(path))
    try:
        robot = yourdfpy.URDF.load(io.StringIO(text), build_scene_graph=False,
                                   load_meshes=False, load_collision_meshes=False).robot
    except Exception as exc:  # noqa: B902 (yourdfpy's URDFError and lxml's errors)
        raise RobotError(f"{path}: URDF: {' '.join(str(exc).split())}") from None
    desc = RobotDescription(robot.name, str(path), '', files=[path] if path.is_file() else [])
    for link in robot.links:
        desc.links[link.name] = []
    for j in robot.joints:
        axis = np.asarray(j.axis if j.axis is not None else (1.0, 0.0, 0.0), np.float64)
        mimic = None if j.mimic is None else Mimic(   # yourdfpy's defaults: 1, 0 (the spec's)
            j.mimic.joint, float(j.mimic.multiplier), float(j.mimic.offset))
        desc.joints.append(Joint(j.name, j.type, j.parent, j.child,
                                 np.eye(4) if j.origin is None else np.asarray(j.origin),
                                 axis, mimic=mimic))
    desc.root = root_of(desc.links, desc.joints, str(path))
    check_mimics(desc.joints, str(path))
    used = 0
    for link in robot.links:
        for kind, items in (('collision', link.collisions), ('visual', link.visuals)):
            for k, item in enumerate(items):
                name = item.name or f'{kind}_{k}'
                where = f"{path}: link '{link.name}': {kind} '{name}'"
                if item.geometry is None:
                    continue
                try:
                    shape = read_geometry(_geometry_element(item.geometry), where,
                                          (Path(base_dir),), model_paths, budget - used)
                except SdfError as exc:
                    raise RobotError(str(exc)) from None
                if shape is None:
                    continue
                used += len(shape.triangles)
                desc.files += [f for f in shape.files if f not in desc.files]
                desc.links[link.name].append(Part(name, kind, shape, np.eye(4) if item.origin
                                                  is None else np.asarray(item.origin)))
    _gazebo(root, desc, path)
    return desc


def _gazebo(root, desc, path):
    """Read the <gazebo> extensions: sensors by reference, model plugins, the rest as notes."""
    for block in root.findall('gazebo'):
        ref = block.get('reference')
        where = f"{path}: gazebo reference='{ref}'" if ref else f'{path}: gazebo'
        if ref and ref not in desc.links:
            raise RobotError(f"{where}: '{ref}' is not a link of the robot")
        for el in block:
            if not isinstance(el.tag, str):
                continue
            if el.tag == 'sensor' and ref:
                desc.add_sensor(read_sensor(el, ref, where, desc.notes))
            elif el.tag == 'plugin' and not ref:
                drive = read_drive(el, desc.name, where, desc.notes)
                if drive is not None:
                    desc.drive = drive
            else:
                desc.notes.append(Note(where, el.tag, 'a physics or rendering property; the '
                                       'rays use the geometry and the material table'))
