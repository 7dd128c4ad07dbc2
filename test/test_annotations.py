"""
Every public function of core/ and of output/ is annotated.

Public: a module-level function or a method of a module-level class, neither named with a
leading underscore. Annotated: a return annotation and one on every parameter but self / cls.
The offenders are listed as file:line name.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / 'ubot_lidar_sim'
CHECKED = ('core', 'output')


def _functions(tree):
    """Yield the public FunctionDefs of a module: module level and public classes' methods."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
        elif isinstance(node, ast.ClassDef) and not node.name.startswith('_'):
            yield from (n for n in node.body
                        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def _unannotated(fn):
    """Return True when fn lacks its return annotation or one of its parameters'."""
    a = fn.args
    params = a.posonlyargs + a.args + a.kwonlyargs + [p for p in (a.vararg, a.kwarg) if p]
    return fn.returns is None or any(
        p.annotation is None for k, p in enumerate(params)
        if not (k == 0 and p.arg in ('self', 'cls') and p in a.posonlyargs + a.args))


def unannotated_public_functions(root=PACKAGE):
    """Return 'file:line name' of every public function of the checked packages not annotated."""
    out = []
    for top in CHECKED:
        for path in sorted((root / top).rglob('*.py')):
            rel = path.relative_to(root).as_posix()
            tree = ast.parse(path.read_text(encoding='utf-8'), str(path))
            out += [f'{rel}:{fn.lineno} {fn.name}' for fn in _functions(tree)
                    if not fn.name.startswith('_') and _unannotated(fn)]
    return out


def test_a_function_without_annotations_is_found(tmp_path):
    (tmp_path / 'core').mkdir()
    (tmp_path / 'core' / 'm.py').write_text(
        'def f(x) -> int:\n    return x\n\n\n'
        'def g(x: int):\n    return x\n\n\n'
        'def _h(x):\n    return x\n\n\n'
        'class C:\n    def m(self, y: int) -> int:\n        return y\n\n'
        '    def n(self, y):\n        pass\n')
    assert unannotated_public_functions(tmp_path) == [
        'core/m.py:1 f', 'core/m.py:5 g', 'core/m.py:17 n']


def test_every_public_function_of_core_and_output_is_annotated():
    missing = unannotated_public_functions()
    assert not missing, f'{len(missing)} public functions not annotated:\n' + '\n'.join(missing)
