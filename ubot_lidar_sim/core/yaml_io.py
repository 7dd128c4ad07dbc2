"""
The one YAML reader of the package, with safe loading and hostile input refused.

It reads world, Nav2 map, material, node parameter and dataset spec files, and the YAML values
of ``--set``. Safe loading only, so a Python object tag is refused instead of run, with
libyaml's C parser when PyYAML has it (``Loader``: ~3x faster on large worlds). A hostile input
is refused before it costs anything: a path that is not a regular file (a device, a FIFO, a
directory) or is larger than MAX_FILE_BYTES is not read, and YAML aliases (``*name``) are
refused, because a few hundred bytes of nested aliases ("billion laughs") expand to billions
of nodes for whoever walks or prints the value. No file of the package needs an alias, and rcl
refuses them in parameter files. ``read_yaml`` turns every problem into one line; ``load`` and
``parse`` raise OSError / yaml.YAMLError for callers with their own wording.
"""

from collections.abc import Callable
from pathlib import Path
import re
from typing import Any

from ubot_lidar_sim.core.errors import WorldError
# check_regular_file and FileRefused live in core/file_checks.py (the one check before a read).
from ubot_lidar_sim.core.file_checks import (check_regular_file, FileRefused,  # noqa: F401
                                             read_checked, TEXT_MAX_BYTES)
import yaml

MAX_FILE_BYTES = TEXT_MAX_BYTES


class Loader(getattr(yaml, 'CSafeLoader', yaml.SafeLoader)):
    """The safe loader, reading an exponent without a dot (1e9, 2E-3) as a float (YAML 1.2)."""


# YAML 1.1, PyYAML's, wants a dot in a float: `rate: 1e9` was the string '1e9'.
Loader.add_implicit_resolver('tag:yaml.org,2002:float', re.compile(
    r'^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$'), list('-+0123456789.'))


class AliasError(yaml.MarkedYAMLError):
    """A YAML alias, or a key given twice in one mapping: both refused."""


def _refuse_aliases(node: yaml.Node) -> None:
    """
    Raise AliasError on a node reached twice (an alias) or a key given twice in one mapping.

    One pass over the nodes. YAML 1.1 loaders keep the last of two equal keys without a word,
    so a file that says `frames: 1` and later `frames: 2` would silently mean 2.
    """
    seen, todo = set(), [node]
    while todo:
        node = todo.pop()
        if id(node) in seen:
            raise AliasError(problem='YAML aliases (*name) are not allowed',
                             problem_mark=node.start_mark)
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys = set()
            for key, _ in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if (key.tag, key.value) in keys:
                        raise AliasError(problem=f'duplicate key {key.value!r} (each key once)',
                                         problem_mark=key.start_mark)
                    keys.add((key.tag, key.value))
            todo.extend(item for pair in node.value for item in pair)
        elif isinstance(node, yaml.SequenceNode):
            todo.extend(node.value)


def parse(text: str, name: str | Path | None = None) -> Any:
    """Return the value of one YAML document (str); yaml.YAMLError (AliasError) if refused."""
    loader = Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _refuse_aliases(node)
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        if name is not None:        # the message names the file, not '<unicode string>'
            for attr in ('context_mark', 'problem_mark'):
                mark = getattr(exc, attr)
                if mark is not None:
                    setattr(exc, attr, yaml.Mark(str(name), mark.index, mark.line,
                                                 mark.column, None, None))
        raise
    finally:
        loader.dispose()


def read_bytes(path: str | Path) -> bytes:
    """Return the bytes of a regular file of at most MAX_FILE_BYTES (FileRefused / OSError)."""
    return read_checked(path, MAX_FILE_BYTES)


def load(path: str | Path) -> Any:
    """Return the YAML text file at path parsed (None when blank); OSError, yaml.YAMLError."""
    return parse(read_bytes(path).decode('utf-8'), path)


def read_yaml(path: str | Path, error: Callable[[str, str], Exception] | None = None,
              allow_empty: bool = False) -> Any:
    """
    Return the parsed content of the YAML text file at path.

    Every problem raises error(where, problem), where is 'file' or 'line N' and problem one line
    (default: WorldError('<path>: <where>: <problem>')). allow_empty: a blank file returns None
    instead of raising.
    """
    if error is None:
        def error(where: str, problem: str) -> Exception:
            return WorldError(f'{path}: {where}: {problem}')
    try:
        data = read_bytes(path)
    except FileRefused as exc:
        raise error('file', f'{exc.strerror}, expected a YAML text file') from exc
    except OSError as exc:
        raise error('file', f'cannot be read ({exc.strerror})') from exc
    if not data.strip():
        if allow_empty:
            return None
        raise error('file', 'the file is empty')
    if b'\0' in data:
        raise error('file', 'binary content, expected a YAML text file')
    try:
        return parse(data.decode('utf-8'))
    except UnicodeDecodeError as exc:
        raise error('file', 'not UTF-8 text, expected a YAML text file') from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        line = f'line {mark.line + 1}' if mark is not None else 'file'
        problem = getattr(exc, 'problem', None) or str(exc).splitlines()[0]
        raise error(line, problem if isinstance(exc, AliasError)
                    else f'YAML syntax error: {problem}') from exc
