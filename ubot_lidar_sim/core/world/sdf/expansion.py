"""
The files of one SDF load, each read once, and the size of the world before anything is built.

``Files`` resolves an ``<include>`` and reads each file once per load (a tree of includes
names the same files again and again). ``check_expansion`` walks the world's structure without
building it, iteratively within a file and once per file across includes (memoised), and
refuses in one line an include cycle (a model that includes itself, or A -> B -> A), a nesting
deeper than MAX_NESTING models (a 3,000-deep inline nest) and a world that expands to more than
reading.MAX_MODELS models (a tree of doubling includes: 2^k models from k small files, counted
in k steps). sdformat has no such limits: it recurses until the stack or memory ends.
"""

from collections.abc import Iterable
from pathlib import Path
from xml.etree.ElementTree import Element

from ubot_lidar_sim.core.world.sdf.population import clone_count
from ubot_lidar_sim.core.world.sdf.reading import MAX_MODELS, read_xml, SdfError, SdfMissing
from ubot_lidar_sim.core.world.sdf.uris import model_file, resolve

# [ENG] The deepest nesting of models and includes a load accepts; the public worlds tried
# (AWS, gz-sim, Classic, PX4, Nav2) nest fewer than 10 deep, and the walk recurses per level.
MAX_NESTING = 100
CONTAINERS = ('world', 'model', 'population')


class Files:
    """The XML roots of one load's files by resolved path, and include resolution."""

    def __init__(self, world_path: str | Path, model_paths: Iterable[str]) -> None:
        """world_path: the SDF world file; model_paths: the model_paths parameter."""
        self.world_dir, self.model_paths = Path(world_path).parent, tuple(model_paths)
        self._roots: dict[Path, Element] = {}
        self._targets: dict[tuple[str, Path], Path | str] = {}

    def root(self, path: str | Path, what: str = 'model file') -> Element:
        """Return the root element of path, read once per load."""
        key = Path(path).resolve()
        if key not in self._roots:
            self._roots[key] = read_xml(path, what)
        return self._roots[key]

    def included(self, el: Element, src: str | Path, where: str
                 ) -> tuple[Path | str, Element | None]:
        """Return (file Path or BUILTIN name, root element or None) of an <include>."""
        uri = (el.findtext('uri') or '').strip()
        if not uri:
            raise SdfError(f'{where}: <uri> missing')
        key = (uri, Path(src).parent)       # the same include resolves the same way in a load
        if key not in self._targets:
            target = resolve(uri, (Path(src).parent, self.world_dir), self.model_paths,
                             f'{where}/uri')
            if not isinstance(target, str) and target.is_dir():
                target = model_file(target, where, self.root)
            if not isinstance(target, str) and not target.is_file():
                raise SdfMissing(f"{where}/uri: '{target}' not found")
            self._targets[key] = target
        target = self._targets[key]
        return target, None if isinstance(target, str) else self.root(target)


def _size(files: Files, path: str | Path, root: Element, chain: list[Path],
          memo: dict[Path, tuple[int, int]]) -> tuple[int, int]:
    """Return (models, nesting depth) of the file at path; SdfError past a limit or a cycle."""
    key = Path(path).resolve()
    if key in chain:
        loop = [str(p) for p in chain[chain.index(key):]] + [str(key)]
        raise SdfError('include cycle: ' + ' -> '.join(loop))
    if key in memo:
        return memo[key]
    chain = chain + [key]
    top = int(root.tag == 'model')      # a bare <model> file
    models, deepest = top, top
    todo = [(root, top, 1)]             # (element, nesting depth, clones of it)
    while todo:
        el, depth, factor = todo.pop()
        for child in el:
            if child.tag in CONTAINERS:
                n = clone_count(child, f'{path}: population') if child.tag == 'population' \
                    else 1
                inner = depth + (child.tag == 'model')
                models += factor if child.tag == 'model' else 0
                deepest = max(deepest, inner)
                todo.append((child, inner, factor * n))
            elif child.tag == 'include':
                try:
                    target, sub = files.included(child, path, f'{path}: include')
                except SdfMissing:
                    continue                # the walk reports it (or skips it: missing warn)
                if sub is not None:
                    n, d = _size(files, target, sub, chain, memo)
                    models += factor * n
                    deepest = max(deepest, depth + d)
            if deepest > MAX_NESTING:
                raise SdfError(f'{path}: models nest deeper than {MAX_NESTING} levels '
                               '(with their includes)')
            if models > MAX_MODELS:
                raise SdfError(f'{path}: the world expands to more than {MAX_MODELS} models '
                               '(each include and population clone counted)')
    memo[key] = (models, deepest)
    return memo[key]


def check_expansion(files: Files, path: str | Path, root: Element) -> None:
    """Raise SdfError if the world at path cycles, nests too deep or has too many models."""
    _size(files, path, root, [], {})
