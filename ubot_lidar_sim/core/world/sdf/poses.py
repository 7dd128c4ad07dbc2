"""
SDF poses and frames: ``<pose>`` text -> 4 x 4 transforms, and the frame graph of one model.

A pose is six numbers x y z roll pitch yaw (radians; ``degrees="true"`` for degrees), or seven
with ``rotation_format="quat_xyzw"`` (SDF 1.9). It is expressed in the frame its ``relative_to``
(SDF 1.7+) or ``frame`` (SDF 1.5-1.6) attribute names, else in the element's default frame: a
model's in its parent model's (the world's at the top), a link's, frame's or nested model's in
the model frame, a visual's or collision's in its link's. Frame names are those of the model's
links, ``<frame>`` elements, joints (a joint's pose is in its child link's frame by default:
sdformat sdf/1.7/joint.sdf) and nested models, plus ``__model__``. Every number is within
schema.MAX_EXTENT_M (metres, radians or quaternion components alike): 1e300 is refused, not
rounded into a NaN or the identity.
"""

import math
from xml.etree.ElementTree import Element

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.poses import pose_matrix, to_matrix
from ubot_lidar_sim.core.world.schema import MAX_EXTENT_M
from ubot_lidar_sim.core.world.sdf.reading import numbers, SdfError

IDENTITY: NDArray[np.float64] = np.eye(4)


def parse_pose(el: Element | None, where: str) -> tuple[NDArray[np.float64], str]:
    """Return the transform (4, 4) of a <pose> element (None: identity) and its frame name."""
    if el is None:
        return IDENTITY, ''
    text = (el.text or '').strip() or '0 0 0 0 0 0'
    frame = el.get('relative_to') or el.get('frame') or ''
    if el.get('rotation_format', 'euler_rpy') == 'quat_xyzw':
        v = numbers(text, 7, where, 'pose (x y z qx qy qz qw)', MAX_EXTENT_M)
        norm = math.sqrt(sum(q * q for q in v[3:]))
        if not norm > 0:
            raise SdfError(f"{where}: pose quaternion '{text}' has zero length")
        t = to_matrix(v[:3], np.asarray(v[3:]) / norm)
        return t, frame
    v = numbers(text, 6, where, 'pose', MAX_EXTENT_M)
    rpy = np.radians(v[3:]) if el.get('degrees', 'false').strip() == 'true' else np.asarray(v[3:])
    return pose_matrix(v[:3], rpy), frame


class ModelFrames:
    """The frames of one model, resolved in the world frame from the model's own transform."""

    def __init__(self, model_el: Element, world_from_model: NDArray[np.float64],
                 where: str) -> None:
        """model_el: the <model> element; world_from_model (4, 4); where names it in errors."""
        self.where, self.model = where, world_from_model
        self._els: dict[str, Element] = {}
        for tag in ('link', 'frame', 'joint', 'model', 'include'):
            for el in model_el.findall(tag):
                name = el.get('name') or (el.findtext('name') or '').strip()
                if name:
                    self._els[name] = el
        self._done: dict[str, NDArray[np.float64]] = {'__model__': world_from_model,
                                                      '': world_from_model}

    def _link(self, name: str, where: str) -> tuple[NDArray[np.float64], str]:
        """Return (pose (4, 4), the frame it is relative to) of the element called name."""
        if '::' in name:
            raise SdfError(f"{where}: relative_to '{name}' names a frame inside a nested model "
                           '(not supported; name a frame of this model)')
        if name not in self._els:
            raise SdfError(f"{where}: relative_to '{name}' is not a frame of model "
                           f"{self.where} ({', '.join(sorted(self._els)) or 'no frames'})")
        el = self._els[name]
        pose, rel = parse_pose(el.find('pose'), f'{where}/{el.tag}[{name}]/pose')
        if el.tag == 'frame' and not rel:
            rel = el.get('attached_to') or ''
        if el.tag == 'joint' and not rel:
            rel = (el.findtext('child') or '').strip()
        return pose, rel

    def frame(self, name: str, where: str) -> NDArray[np.float64]:
        """Return the world transform of the frame called name in this model."""
        chain: list[tuple[str, NDArray[np.float64]]] = []
        busy: set[str] = set()       # followed iteratively: a chain may be any length
        while name not in self._done:
            if name in busy:
                raise SdfError(f"{where}: the pose of '{name}' is relative to itself (a cycle)")
            busy.add(name)
            pose, rel = self._link(name, where)
            chain.append((name, pose))
            name = rel
        world_from = self._done[name]
        for done, pose in reversed(chain):
            world_from = self._done[done] = world_from @ pose
        return world_from

    def placed(self, el: Element, parent: NDArray[np.float64], where: str) -> NDArray[np.float64]:
        """Return the world transform of a visual / collision: pose in parent or relative_to."""
        pose, rel = parse_pose(el.find('pose'), f'{where}/pose')
        return (self.frame(rel, where) if rel else parent) @ pose
