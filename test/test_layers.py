"""
Imports point one way: the layers of docs/architecture.md, no cycle, none inside a function.

Read from the source with ast (nothing is imported), so the test names the file and line of
every import that points back up a layer, joins a cycle or hides in a function.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / 'ubot_lidar_sim'

#: Lowest first: a module may import its own group and any group of a lower rank.
LAYERS = (
    (0, 'core.base', ('core.errors', 'core.yaml_io', 'core.resources', 'core.numba_cache',
                      'core.file_checks', 'core.safe_write', 'core.processes',
                      'core.poses', 'core.labels', 'core.memory', 'core.limits',
                      'core.detection', 'core.material_ids', 'core.class_ids')),
    (1, 'core.raycast', ('core.raycast',)),
    (2, 'core.world', ('core.world',)),
    # The parts of the configs (core/config: fields, the physical model and its parts) sit below
    # the laws, which take them typed (issue 49); the configs of parts stay at core.config.
    (2, 'core.config.parts', ('core.config.fields', 'core.config.optics',
                              'core.config.radiometry', 'core.config.atmosphere',
                              'core.config.imperfections', 'core.config.physical_model')),
    (3, 'core.physics', ('core.physics',)),
    (4, 'core.beams', ('core.beams',)),
    (5, 'core.config', ('core.config',)),
    (6, 'core.sensors', ('core.sensors',)),
    (6, 'core.motion', ('core.motion',)),
    (7, 'core.execution', ('core.execution',)),
    (7, 'core.robot', ('core.robot',)),     # robot descriptions: configs, sensors, body
    (8, 'output', ('output',)),
    (9, 'pipeline', ('pipeline',)),   # rig, trajectory, record, interrupts: no rclpy
    (10, 'dataset', ('dataset',)),    # dataset and ros share a rank: neither imports the other
    (10, 'ros', ('ros', 'msg', 'srv')),
    (11, 'pipeline.run', ('pipeline.run',)),    # the all-in-one run starts the ROS nodes
    (12, 'entry', ('cli', '__main__', 'compile_kernels', 'param_reference')),
)


def _modules():
    """Return {dotted name below the package: path} of every module of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob('*.py')):
        parts = path.relative_to(PACKAGE).with_suffix('').parts
        if parts[-1] == '__init__':
            parts = parts[:-1]
        out['.'.join(parts)] = path
    return out


MODULES = _modules()


def _layer(name):
    """Return (rank, group) of a module below the package."""
    best = None
    for rank, group, prefixes in LAYERS:
        for prefix in prefixes:
            if name == prefix or name.startswith(prefix + '.'):
                if best is None or len(prefix) > best[2]:
                    best = (rank, group, len(prefix))
    assert best is not None, f'{name}: in no layer of LAYERS'
    return best[:2]


def _resolve(dotted):
    """Return the package module an import names (its longest module prefix), or None."""
    parts = dotted.split('.')
    if parts[0] != 'ubot_lidar_sim':
        return None
    parts = parts[1:]
    while parts:
        if '.'.join(parts) in MODULES:
            return '.'.join(parts)
        parts.pop()
    return None


def _imports():
    """Yield (module, imported module, line, inside a function or class) of the package."""
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))
        nested = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                nested.update(id(n) for n in ast.walk(node) if n is not node)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                targets = [_resolve(f'{node.module}.{a.name}') for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [_resolve(a.name) for a in node.names]
            else:
                continue
            for target in targets:
                if target and target != name:
                    yield name, target, node.lineno, id(node) in nested


def test_every_import_points_down_the_layers():
    wrong = []
    for name, target, line, _ in _imports():
        (rank, group), (t_rank, t_group) = _layer(name), _layer(target)
        if group != t_group and t_rank >= rank:
            wrong.append(f'{name}:{line} ({group}) imports {target} ({t_group})')
    assert not wrong, '\n'.join(wrong)


def test_no_module_imports_the_package_inside_a_function():
    # An import inside a function hides a dependency (often one that dodges a cycle).
    local = [f'{name}:{line} imports {target}' for name, target, line, inner in _imports()
             if inner]
    assert not local, '\n'.join(local)


def test_the_package_has_no_import_cycle():
    graph = {}
    for name, target, _, _ in _imports():
        graph.setdefault(name, set()).add(target)
    state, cycles = {}, []

    def visit(node, path):
        state[node] = 'open'
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 'open':
                cycles.append(' -> '.join(path[path.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 'done'

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert not cycles, '\n'.join(cycles)


def test_the_layer_check_sees_a_layer_pointing_back_up():
    # The checks above are not vacuous: core.physics importing core.sensors is caught.
    (rank, group), (t_rank, t_group) = _layer('core.physics.echoes'), _layer('core.sensors.lidar')
    assert group != t_group and t_rank >= rank
    assert _resolve('ubot_lidar_sim.core.sensors.lidar.LidarSimulator') == 'core.sensors.lidar'
    assert len(MODULES) > 80 and sum(1 for _ in _imports()) > 200
