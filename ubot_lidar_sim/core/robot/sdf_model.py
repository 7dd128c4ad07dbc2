"""
An SDF robot model (model.sdf, a model directory or model://NAME) -> RobotDescription.

Uses the world loader's reader: ``read_xml``, ``ModelFrames`` (poses with relative_to, in the
model frame), ``read_geometry`` and ``resolve`` / ``model_file``. Joints: parent_from_child is
the links' model poses at position 0, the joint frame its <pose> in the child link (SDF 1.7+
default), the axis ``<axis><xyz>`` in the joint frame, ``<axis><mimic>`` the joint it follows
(sdformat sdf/1.11/mimic.sdf). Links' <sensor>s and the model's
<plugin>s are read; nested models, includes and world-joints are listed as not read.
"""

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ubot_lidar_sim.core.robot.description import (Joint, Mimic, Note, Part, RobotDescription,
                                                   RobotError)
from ubot_lidar_sim.core.robot.plugins import read_drive
from ubot_lidar_sim.core.robot.sensors import read_sensor
from ubot_lidar_sim.core.robot.tree import check_count, check_mimics, root_of
from ubot_lidar_sim.core.world.sdf.geometry import read_geometry
from ubot_lidar_sim.core.world.sdf.poses import IDENTITY, ModelFrames, parse_pose
from ubot_lidar_sim.core.world.sdf.reading import numbers, read_xml, SdfError
from ubot_lidar_sim.core.world.sdf.uris import model_file, resolve

# Model children that hold nothing for the rays, the sensors or the base.
QUIET = ('pose', 'static', 'self_collide', 'allow_auto_disable', 'enable_wind', 'frame',
         'link', 'joint', 'plugin')


def model_path(source: str | Path, model_paths: Sequence[str] = ()) -> Path:
    """Return the SDF file of model.sdf, a model directory or a model:// URI."""
    text = str(source)
    try:
        target = (resolve(text, (Path.cwd(),), model_paths, 'robot') if '://' in text
                  else Path(text))
        if isinstance(target, str):
            raise RobotError(f'{text}: a built-in world model, not a robot')
        return model_file(target, text) if target.is_dir() else target
    except SdfError as exc:
        raise RobotError(str(exc)) from None


def read_sdf_model(source: str | Path, model_paths: Sequence[str] = (), budget: int = 2_000_000
                   ) -> RobotDescription:
    """Return the RobotDescription of an SDF model (RobotError: one line)."""
    try:
        return _read(model_path(source, model_paths), model_paths, budget)
    except SdfError as exc:
        raise RobotError(str(exc)) from None


def _read(path, model_paths, budget):
    """Read the first <model> of the SDF file at path."""
    root = read_xml(path, 'SDF model')
    model = root if root.tag == 'model' else root.find('model')
    if model is None:
        raise RobotError(f'{path}: no <model> element')
    name = model.get('name') or 'robot'
    where = f"{path}: model '{name}'"
    links = model.findall('link')
    check_count(len(links), str(path))
    frames = ModelFrames(model, IDENTITY, name)
    desc = RobotDescription(name, str(path), '', files=[path])
    poses = {}
    for link in links:
        lname = link.get('name') or 'link'
        poses[lname] = frames.frame(lname, where)
        desc.links[lname] = []
    for joint in model.findall('joint'):
        _joint(joint, poses, desc, where)
    desc.root = root_of(desc.links, desc.joints, str(path)) if desc.links else ''
    check_mimics(desc.joints, str(path))
    if desc.root:
        desc.model_from_root = poses[desc.root]
    used = 0
    for link in links:
        lname = link.get('name') or 'link'
        here = f"{where}: link '{lname}'"
        inv = np.linalg.inv(poses[lname])
        for kind in ('collision', 'visual'):
            for k, item in enumerate(link.findall(kind)):
                iname = item.get('name') or f'{kind}_{k}'
                geom = item.find('geometry')
                if geom is None:
                    raise RobotError(f"{here}: {kind} '{iname}': <geometry> missing")
                shape = read_geometry(geom, f"{here}: {kind} '{iname}'/geometry", (path.parent,),
                                      model_paths, budget - used)
                if shape is None:
                    continue
                used += len(shape.triangles)
                desc.files += [f for f in shape.files if f not in desc.files]
                desc.links[lname].append(Part(iname, kind, shape,
                                              inv @ frames.placed(item, poses[lname], here)))
        for sensor in link.findall('sensor'):
            desc.add_sensor(read_sensor(sensor, lname, here, desc.notes))
    for plugin in model.findall('plugin'):
        drive = read_drive(plugin, name, where, desc.notes)
        if drive is not None:
            desc.drive = drive
    for child in model:
        if isinstance(child.tag, str) and child.tag not in QUIET:
            desc.notes.append(Note(where, child.tag, 'nested models and includes of a robot '
                                   'model are not read' if child.tag in ('model', 'include')
                                   else 'not read for a robot'))
    return desc


def _joint(el, poses, desc, where):
    """Add one <joint>: its links' model poses at 0 and its joint frame in the child."""
    jname = el.get('name') or 'joint'
    here = f"{where}: joint '{jname}'"
    parent, child = (el.findtext('parent') or '').strip(), (el.findtext('child') or '').strip()
    if parent == 'world':
        desc.notes.append(Note(here, 'parent world', 'the robot is placed by --pose / base_sim'))
        return
    for end in (parent, child):
        if end not in poses:
            raise RobotError(f"{here}: '{end}' is not a link of the model "
                             f"({', '.join(sorted(poses))})")
    pose, rel = parse_pose(el.find('pose'), f'{here}/pose')
    if rel and rel != child:
        desc.notes.append(Note(here, 'pose relative_to', f"'{rel}' is read as the child link"))
    axis = np.asarray(numbers(el.findtext('axis/xyz') or '0 0 1', 3, f'{here}/axis/xyz',
                              'axis'))
    if not np.linalg.norm(axis) > 0:
        raise RobotError(f'{here}/axis/xyz: the zero vector (allowed: a direction)')
    origin = np.linalg.inv(poses[parent]) @ poses[child] @ pose
    desc.joints.append(Joint(jname, el.get('type') or 'fixed', parent, child, origin, axis,
                             np.linalg.inv(pose), _mimic(el.find('axis/mimic'), here, desc)))


def _mimic(el, here, desc):
    """Return the Mimic of an <axis><mimic> (sdformat sdf/1.11/mimic.sdf), or None."""
    if el is None:
        return None
    where = f'{here}/axis/mimic'
    leader = (el.get('joint') or '').strip()
    if not leader:
        raise RobotError(f'{where}: no joint attribute (allowed: the name of the joint it '
                         'follows)')
    if el.get('axis', 'axis') != 'axis':
        desc.notes.append(Note(where, 'mimic axis', 'a leader joint has one axis here; '
                               "'axis' is followed"))
    values = {key: numbers(el.findtext(key) or str(default), 1, f'{where}/{key}', key)[0]
              for key, default in (('multiplier', 1.0), ('offset', 0.0), ('reference', 0.0))}
    return Mimic(leader, **values)
