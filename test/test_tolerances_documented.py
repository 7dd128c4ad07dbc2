"""
Every numeric tolerance in test/ says where it comes from (issue 26).

The rule, per file under test/ (this one excepted: it spells the patterns out): a line that
holds a tolerance, that is ``atol=``, ``rtol=``, ``approx(``, ``allclose(`` (numpy's and
``assert_allclose``) or ``isclose(``, must itself or in one of the 3 lines above it hold either
a ``bound:`` comment (the argument: an error bound, or why an exact-equality comparison holds on
every CPU) or a bound name: a name the file imports from test/tolerances.py, or a module-level
name the file assigns from an expression that uses one.
"""

import ast
import pathlib
import re

TEST_DIR = pathlib.Path(__file__).resolve().parent
TOLERANCE = re.compile(r'\batol=|\brtol=|\bapprox\(|allclose\(|\bisclose\(')
WINDOW = 3     # lines above the tolerance that may carry its `bound:`


def bound_names(tree):
    """Names imported from tolerances, plus module-level names assigned from them."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == 'tolerances':
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.asname or a.name for a in node.names if a.name == 'tolerances')
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(n, ast.Name) and n.id in names for n in ast.walk(node.value)):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def undocumented(source):
    """(line number, line) of each tolerance without a `bound:` or a bound name near it."""
    names = bound_names(ast.parse(source))
    named = re.compile(r'\b(%s)\b' % '|'.join(map(re.escape, sorted(names)))) if names else None
    lines = source.splitlines()
    bad = []
    for i, line in enumerate(lines):
        if not TOLERANCE.search(line):
            continue
        window = '\n'.join(lines[max(0, i - WINDOW):i + 1])
        if 'bound:' in window or (named is not None and named.search(window)):
            continue
        bad.append((i + 1, line.strip()))
    return bad


def test_rule_can_fail():
    snippet = '\n'.join([
        'from tolerances import F32_EPS',
        'TOL = 4 * F32_EPS',
        'x = 1.0',
        '',
        '',
        'np.testing.assert_allclose(a, b, atol=1e-5)',              # no argument: flagged
        'np.testing.assert_allclose(a, b, rtol=TOL)',               # a derived bound name
        '# bound: exact, integer counts',
        'assert n == pytest.approx(3)',                             # covered by the comment
        '',
        '',
        '',
        'assert np.isclose(x, 1.0)',                                # 4 lines below: flagged
        'assert np.allclose(x, 1.0, atol=F32_EPS)',                 # an imported bound name
    ])
    assert undocumented(snippet) == [(6, 'np.testing.assert_allclose(a, b, atol=1e-5)'),
                                     (13, 'assert np.isclose(x, 1.0)')]
    assert undocumented('x = 1.0\n') == []


def test_every_tolerance_states_its_bound():
    me = pathlib.Path(__file__).resolve()
    bad = [f'{path.relative_to(TEST_DIR)}:{n}: {line}'
           for path in sorted(TEST_DIR.rglob('*.py')) if path.resolve() != me
           for n, line in undocumented(path.read_text())]
    assert not bad, 'tolerances without a `# bound:` or a tolerances.py name:\n' + '\n'.join(bad)
