"""
Which tests depend on the ROS release: the part ``.ci/run`` re-runs on Jazzy.

A test module depends on the release when its source, or a helper module or package module it
imports (transitively, child-process scripts in strings included), imports rclpy, a ROS
interface or launch package, or starts a ROS process (a node executable, ``ros2``, a launch
file, the ``run`` subcommand that starts the nodes). Every other test runs the same code on
any release: it never imports rclpy (test/test_layers.py keeps core/, output/, dataset/ and
pipeline/ free of it), so Kilted's run of it stands for Jazzy's. conftest.py marks each test
of a release-dependent module ``release_dependent``; a new test falls under the rule by what
it imports and starts, with no list to update. Imported by name (pytest puts test/ on
sys.path).
"""

import functools
from pathlib import Path
import re

TEST_DIR = Path(__file__).resolve().parent
PACKAGE = TEST_DIR.parent / 'ubot_lidar_sim'
MARKER = 'release_dependent'

#: Top-level modules that come from ROS: rclpy, launch, ament, rosidl and interface packages.
_ROS_EXACT = {'rclpy', 'rcl_interfaces', 'launch', 'launch_ros', 'launch_testing',
              'launch_testing_ros', 'ament_index_python', 'std_srvs', 'builtin_interfaces',
              'livox_ros_driver2', 'rosbag2_py', 'rpyutils', 'tf2_ros', 'message_filters'}
_ROS_SUFFIX = ('_msgs', '_srvs', '_interfaces')
_ROS_PREFIX = ('rosidl', 'rcl', 'rmw', 'ament')
_IMPORT = re.compile(r'^\s*(?:from\s+([A-Za-z_][\w.]*)\s+import\s+([\w ,()]+)|'
                     r'import\s+([A-Za-z_][\w.]*))', re.M)
#: Source text that starts a ROS process: a node executable (setup.py console_scripts), the
#: ros2 command, a launch file, node_argv (test/reliability/rel_helpers.py), the CLI's run.
_QUOTE = '[\'"]'
_PROCESS = re.compile(r'\b(?:lidar_3d|laser_scan|terrain_sensor|demo_driver|base_sim)_node\b|'
                      rf'{_QUOTE}ros2{_QUOTE}|\.launch\.py\b|\bnode_argv\(|{_QUOTE}run{_QUOTE}')


def is_ros_module(dotted):
    """Return True if the module dotted (a.b.c) is from ROS rather than PyPI or the stdlib."""
    top = dotted.split('.')[0]
    return (top in _ROS_EXACT or top.endswith(_ROS_SUFFIX) or top.startswith(_ROS_PREFIX)
            or dotted == 'ubot_lidar_sim.msg' or dotted.startswith('ubot_lidar_sim.msg.'))


def imported_names(text):
    """Return the module names a source imports (from a import b also gives a.b)."""
    names = set()
    for base, members, plain in _IMPORT.findall(text):
        if plain:
            names.add(plain)
            continue
        names.add(base)
        names.update(f'{base}.{m.strip()}' for m in members.strip('() ').split(',')
                     if m.strip() and ' ' not in m.strip())
    return names


def _package_file(dotted):
    """Return the file of a ubot_lidar_sim module, or None."""
    parts = dotted.split('.')
    if parts[0] != 'ubot_lidar_sim':
        return None
    base = PACKAGE.joinpath(*parts[1:])
    for path in (base.with_suffix('.py'), base / '__init__.py'):
        if path.is_file():
            return path
    return None


@functools.lru_cache(maxsize=None)
def _helpers():
    """Return {name: path} of the test tree's importable helper modules (not test_*.py)."""
    return {p.stem: p for p in sorted(TEST_DIR.rglob('*.py'))
            if not p.name.startswith('test_') and p.name != 'conftest.py'
            and 'support' not in p.relative_to(TEST_DIR).parts}


@functools.lru_cache(maxsize=None)
def _own(path):
    """Return (reasons of path's own text, files of the package and test helpers it imports)."""
    text = path.read_text()
    why, files = [], []
    process = _PROCESS.search(text) if PACKAGE not in path.parents else None
    if process:         # the package's own processes show through its imports of rclpy
        why.append(f'{path.name} starts a ROS process ({process.group(0)})')
    for name in sorted(imported_names(text)):
        if is_ros_module(name):
            why.append(f'{path.name} imports {name}')
        elif (target := _package_file(name)
              or (_helpers().get(name) if '.' not in name else None)) is not None:
            files.append(target)
    return why, tuple(files)


def reasons(path):
    """Return why the source file path depends on the ROS release ([] if it does not)."""
    path = Path(path).resolve()
    rel = path.relative_to(TEST_DIR).parts if TEST_DIR in path.parents else ()
    why = [f'test/{rel[0]}/ holds the node and Nav2 tests'] if rel[:1] in (('ros',), ('nav2',)) \
        else []
    todo, seen = [path], {path}
    while todo:
        own, files = _own(todo.pop())
        why += own
        todo += [f for f in files if f not in seen]
        seen.update(files)
    return why


@functools.lru_cache(maxsize=None)
def depends_on_release(path):
    """Return True if the test file path depends on the ROS release (cached per file)."""
    return bool(reasons(path))
