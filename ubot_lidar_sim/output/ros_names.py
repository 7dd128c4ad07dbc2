"""
ROS's naming rules for what a recording writes: topic names, frame ids, and a TF tree.

Topics follow rmw's rules for a fully qualified topic name (ros2/rmw
``rmw_validate_full_topic_name``, the rules of the ROS 2 design article "Topic and Service
name mapping to DDS"): it starts with '/', does not end with '/', holds only ASCII letters,
digits, '_' and '/', no '//', no token that starts with a digit, at most 247 characters. A
recording has no node to expand '~' or '{}' against, so its names are fully qualified.

Frame ids follow tf2 (``BufferCore::validateFrameId``) and REP 105: not empty and no leading
'/'. The transforms of a recording must form a tree: every frame has at most one parent, one
transform from it, and no frame is its own ancestor.
"""

from collections.abc import Hashable, Iterable
import re

from ubot_lidar_sim.core.errors import ConfigError

TOPIC_MAX_LENGTH = 255 - 8     # rmw's RMW_TOPIC_MAX_NAME_LENGTH
_TOPIC_TOKEN = re.compile(r'[A-Za-z_][A-Za-z0-9_]*\Z')
TOPIC_RULE = ("a fully qualified ROS topic name: '/' then tokens of ASCII letters, digits and "
              "'_' separated by single '/', no token starting with a digit, no trailing '/', "
              f'at most {TOPIC_MAX_LENGTH} characters')
FRAME_RULE = "a tf2 frame id: not empty and without a leading '/' (REP 105)"


def topic_problem(name: object) -> str | None:
    """Return why name is not a fully qualified topic name, or None when it is one."""
    if not isinstance(name, str) or not name:
        return 'empty or not a string'
    if not name.startswith('/'):
        return "not absolute (no leading '/')"
    if name.endswith('/'):
        return "ends with '/'"
    if len(name) > TOPIC_MAX_LENGTH:
        return f'longer than {TOPIC_MAX_LENGTH} characters'
    for token in name[1:].split('/'):
        if not token:
            return "holds '//'"
        if not _TOPIC_TOKEN.match(token):
            return (f'token {token!r} starts with a digit' if token[0].isdigit() else
                    f'token {token!r} holds a character other than ASCII letters, digits, _')
    return None


def check_topic(name: str, where: str) -> str:
    """Raise ConfigError(where, name, the rule) unless name is a fully qualified topic name."""
    problem = topic_problem(name)
    if problem is not None:
        raise ConfigError(where, name, f'{TOPIC_RULE} ({problem})')
    return name


def check_frame_id(name: str, where: str) -> str:
    """Raise ConfigError(where, name, the rule) unless name is a valid tf2 frame id."""
    if not isinstance(name, str) or not name.strip() or name.startswith('/'):
        raise ConfigError(where, name, FRAME_RULE)
    return name


def check_tf_tree(edges: Iterable[tuple[str, str, str, Hashable]]) -> None:
    """
    Raise ConfigError unless the transforms edges form a tree.

    edges: [(where, parent, child, transform key)]; the key is any hashable value that is equal
    for the same transform (None for a moving one). The same edge given twice with the same key
    is one transform; a child with two parents or two different transforms, or a cycle, is an
    error naming where.
    """
    parent_of = {}
    for where, parent, child, key in edges:
        check_frame_id(parent, where)
        check_frame_id(child, where)
        if child in parent_of and parent_of[child] != (parent, key):
            raise ConfigError(where, child, f'a frame of its own: {child!r} already has a '
                              f'transform from {parent_of[child][0]!r} (TF takes one parent '
                              'and one transform per frame)')
        if child == parent:
            raise ConfigError(where, child, f'a frame other than its parent {parent!r} (a TF '
                              'frame cannot be its own parent)')
        frame, seen = parent, set()
        while frame is not None and frame not in seen:   # child must not be an ancestor
            if frame == child:
                raise ConfigError(where, child, f'a frame that is neither {parent!r} nor one of '
                                  'its ancestors (the transform would close a cycle; TF needs '
                                  'a tree)')
            seen.add(frame)
            frame = parent_of.get(frame, (None,))[0]
        parent_of[child] = (parent, key)
