"""
The one YAML file reader of the core: yaml.safe_load of a UTF-8 text file, one-line errors.

World files, Nav2 map files and material files go through ``read_yaml``; safe_load only, so a
Python object tag in a file is refused instead of run.
"""

from pathlib import Path

from ubot_lidar_sim.core.errors import WorldError


def read_yaml(path, error=None, allow_empty=False):
    """
    Return the parsed content of the YAML text file at path.

    Every problem raises error(where, problem), where is 'file' or 'line N' and problem one line
    (default: WorldError('<path>: <where>: <problem>')). allow_empty: a blank file returns None
    instead of raising.
    """
    # Imported here: flake8's google order without application names would put yaml after us.
    import yaml

    if error is None:
        def error(where, problem):
            return WorldError(f'{path}: {where}: {problem}')
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise error('file', f'cannot be read ({exc.strerror})') from exc
    if not data.strip():
        if allow_empty:
            return None
        raise error('file', 'the file is empty')
    if b'\0' in data:
        raise error('file', 'binary content, expected a YAML text file')
    try:
        return yaml.safe_load(data.decode('utf-8'))
    except UnicodeDecodeError as exc:
        raise error('file', 'not UTF-8 text, expected a YAML text file') from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        line = f'line {mark.line + 1}' if mark is not None else 'file'
        problem = getattr(exc, 'problem', None) or str(exc).splitlines()[0]
        raise error(line, f'YAML syntax error: {problem}') from exc
