"""package.xml declares exactly the third-party modules the package and its tests import."""

import ast
import pathlib
import sys
import xml.etree.ElementTree as ET

ROOT = pathlib.Path(__file__).resolve().parents[1]

# Import name -> package.xml key (rosdep key or ROS package name), where they differ.
ROSDEP_KEY = {
    'numpy': 'python3-numpy',
    'yaml': 'python3-yaml',
    'matplotlib': 'python3-matplotlib',
    'transforms3d': 'python3-transforms3d',
    'numba': 'python3-numba',
    'tqdm': 'python3-tqdm',
    'trimesh': 'python3-trimesh-pip',     # rosdep/python.yaml: no apt key, a pip one
    'defusedxml': 'python3-defusedxml',
    'PIL': 'python3-pil',
    'pytest': 'python3-pytest',
    'hypothesis': 'python3-hypothesis',
    'scipy': 'python3-scipy',
    'yourdfpy': 'python3-yourdfpy-pip',   # rosdep/python.yaml: a pip key
    'mypy': 'python3-mypy',
    'ament_flake8': 'ament_flake8',
    'ament_pep257': 'ament_pep257',
}
# Imported but not declarable: no rosdep key exists (the README says how to install them), or,
# nav2_simple_commander, not released for every distro the workflow covers (not Rolling: the
# workflow installs Nav2 where it exists, and test/nav2 skips without it).
UNDECLARABLE = {'open3d', 'rosbags', 'embreex', 'ray', 'mcap', 'mcap_ros2', 'pypcd4', 'kiss_icp',
                'rerun', 'nav2_simple_commander'}
# This package, and modules of its own test and benchmark folders (helpers imported by name).
FIRST_PARTY = {'ubot_lidar_sim', 'test'} | {
    p.stem for d in ('test', 'benchmarks') for p in (ROOT / d).rglob('*.py')}
# Interface packages the tests build themselves (test/support, scripts/build_test_interfaces.sh):
# the livox_ros_driver2 stand-in; the package itself only imports it at run time, optionally.
FIRST_PARTY |= {p.parent.name for p in (ROOT / 'test' / 'support').glob('*/package.xml')}


def _imports(paths):
    """Top-level module names imported by the Python files below paths."""
    names = set()
    for base in paths:
        for path in sorted((ROOT / base).rglob('*.py')):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names.update(a.name.split('.')[0] for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names.add(node.module.split('.')[0])
    return {n for n in names
            if n not in sys.stdlib_module_names and n not in FIRST_PARTY}


def _declared(*tags):
    root = ET.parse(ROOT / 'package.xml').getroot()
    return {e.text.strip() for tag in tags for e in root.iter(tag)}


def _keys(modules):
    return {ROSDEP_KEY.get(m, m) for m in modules - UNDECLARABLE}


def test_every_runtime_import_is_an_exec_depend():
    missing = _keys(_imports(['ubot_lidar_sim', 'launch'])) - _declared('exec_depend', 'depend')
    assert not missing, f'imported but not declared as exec_depend in package.xml: {missing}'


def test_every_exec_depend_is_imported():
    unused = _declared('exec_depend') - _keys(_imports(['ubot_lidar_sim', 'launch']))
    assert not unused, f'declared in package.xml but imported nowhere: {unused}'


def test_every_test_import_is_declared():
    wanted = _keys(_imports(['test']))
    missing = wanted - _declared('exec_depend', 'test_depend', 'depend')
    assert not missing, f'tests import modules package.xml does not declare: {missing}'


def test_every_test_depend_is_imported_by_a_test():
    unused = _declared('test_depend') - _keys(_imports(['test']))
    assert not unused, f'test_depend declared but no test imports it: {unused}'
