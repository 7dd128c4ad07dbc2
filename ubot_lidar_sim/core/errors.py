"""Typed errors of the core: each names what was wrong, the value given and what is allowed."""

from collections.abc import Iterable
import difflib
from itertools import islice
import reprlib

_SMALL_ITEMS = 10_000          # values with more items (counted with repeats) are abbreviated
_BRIEF = reprlib.Repr()
_BRIEF.maxlevel, _BRIEF.maxstring, _BRIEF.maxother = 2, 40, 40
_BRIEF.maxlist = _BRIEF.maxtuple = _BRIEF.maxset = _BRIEF.maxdict = 4


def shown(value: object) -> str:
    """
    Return repr(value), or an abbreviation when value is large.

    The size is measured first, by counting the items of nested lists, tuples, sets and dicts
    (and 1 per 100 characters of text) up to _SMALL_ITEMS: a value that shares its parts (YAML
    aliases, ``[v] * 9`` nested) can hold billions of items in a few kB, and its repr would
    never end.
    """
    todo, count = [value], 0
    while todo and count <= _SMALL_ITEMS:
        item = todo.pop()
        count += 1
        if isinstance(item, dict):
            item = (part for pair in item.items() for part in pair)
        elif isinstance(item, (str, bytes)):
            count += len(item) // 100       # a long text is as large as its lines
            continue
        elif not isinstance(item, (list, tuple, set, frozenset)):
            continue
        todo.extend(islice(item, _SMALL_ITEMS + 1 - count))
    if count <= _SMALL_ITEMS:
        return repr(value)
    text = _BRIEF.repr(value)
    return text if len(text) <= 100 else text[:97] + '...'


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Return " (did you mean 'x'?)" for the closest of choices to name, or ''."""
    close = difflib.get_close_matches(str(name), list(choices), n=1, cutoff=0.6)
    return f' (did you mean {close[0]!r}?)' if close else ''


class SimError(Exception):
    """Base class of every error the simulator raises on bad input."""


class ConfigError(SimError, ValueError):
    """
    A configuration value is out of its allowed range or of the wrong type.

    The message always reads ``<name>: got <value!r>, allowed <allowed>``.
    """

    def __init__(self, name: str, value: object, allowed: str) -> None:
        self.name = name
        self.value = value
        self.allowed = allowed
        super().__init__(f'{name}: got {shown(value)}, allowed {allowed}')


class WorldError(SimError):
    """
    A world file, mesh, heightfield or map cannot be loaded.

    The message names the file, the key and the problem.
    """


class ScanError(SimError):
    """A scan cannot be computed as configured (e.g. more rays than max_rays_per_scan)."""
