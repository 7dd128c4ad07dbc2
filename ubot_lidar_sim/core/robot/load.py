"""
One entry to robot descriptions: ``load_robot(source, args, model_paths)`` by the file's form.

``.urdf`` -> urdf.read_urdf; ``.xacro`` (``.urdf.xacro``) -> expanded with args first;
``.sdf``, a model directory or ``model://NAME`` -> sdf_model.read_sdf_model. ``parse_args``
reads xacro arguments written ``name:=value`` separated by spaces (as ``robot_args:=``).
A node's ``robot_description`` of ``topic`` (or ``topic:NAME``) names the topic that
robot_state_publisher publishes the URDF text on instead of a file (``description_topic``);
``load_robot_text`` reads that text.
"""

from collections.abc import Mapping, Sequence
from pathlib import Path

from ubot_lidar_sim.core.robot.description import RobotDescription, RobotError
from ubot_lidar_sim.core.robot.sdf_model import read_sdf_model
from ubot_lidar_sim.core.robot.urdf import read_urdf, read_urdf_text, XACRO_SUFFIXES

URDF_SUFFIXES = ('.urdf',) + XACRO_SUFFIXES
TOPIC = 'topic'
DEFAULT_TOPIC = 'robot_description'     # robot_state_publisher's (relative: in a namespace)


def description_topic(value: str) -> str | None:
    """Return the topic of a robot_description 'topic' or 'topic:NAME', else None (a file)."""
    head, sep, name = value.partition(':')
    if head != TOPIC:
        return None
    if sep and not name.strip():
        raise RobotError(f"robot_description: got '{value}', allowed a file, 'topic' or "
                         "'topic:NAME'")
    return name.strip() if sep else DEFAULT_TOPIC


def load_robot_text(text: str, source: str,
                    model_paths: Sequence[str] = ()) -> RobotDescription:
    """Return the RobotDescription of URDF text from source (a topic); meshes from the cwd."""
    return read_urdf_text(text, source, Path.cwd(), model_paths)


def parse_args(text: str | None) -> dict[str, str]:
    """Return {name: value} of 'a:=1 b:=x'; RobotError for an item without ':='."""
    out = {}
    for item in (text or '').split():
        name, sep, value = item.partition(':=')
        if not sep or not name:
            raise RobotError(f"robot_args: got '{item}', allowed NAME:=VALUE items separated "
                             'by spaces')
        out[name] = value
    return out


def load_robot(source: str | Path, args: Mapping[str, str] | None = None,
               model_paths: Sequence[str] = ()) -> RobotDescription:
    """Return the RobotDescription of a robot file, model directory or model:// URI."""
    text = str(source)
    path = Path(text)
    if path.suffix in URDF_SUFFIXES:
        return read_urdf(path, args or {}, model_paths)
    if args:
        raise RobotError(f"{text}: xacro arguments given ({', '.join(sorted(args))}) but the "
                         'file is not a .xacro')
    if text.startswith('model://') or path.suffix == '.sdf' or path.is_dir():
        return read_sdf_model(text, model_paths)
    raise RobotError(f'{text}: not a robot description (allowed: .urdf, .urdf.xacro / .xacro, '
                     'an SDF model.sdf, a model directory or model://NAME)')
