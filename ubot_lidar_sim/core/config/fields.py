"""
Config fields: one declaration per field carries its default and its ROS descriptor.

``metadata`` keys: ``description``, ``unit``, ``min``/``max`` (inclusive unless
``min_exclusive``/``max_exclusive``), ``allow_inf``, ``choices``, ``read_only``, ``nonempty``
and, for tuples, ``item_type``, ``length`` and the range that applies to every item. A value is
checked against them (type, range, choices) and converted (int -> float, list -> tuple);
ConfigError names the field, the value and what is allowed.
"""

import dataclasses
from dataclasses import field
import math
import numbers
import typing
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Tuple

import numpy as np

from ubot_lidar_sim.core.errors import ConfigError


#: The types of list parameters (tuples of item_type; is_list tells them).
Bools = Tuple[bool, ...]
Floats = Tuple[float, ...]
Strs = Tuple[str, ...]


def parameter(default: Any, description: str, unit: str = '', **meta: Any) -> Any:
    """Declare one config field: its default and its descriptor metadata (see the module doc)."""
    meta.update(description=description, unit=unit)
    return field(default=default, metadata=meta)


def allowed_text(meta: Mapping[str, Any], kind: str) -> str:
    """Describe the allowed values of a field for an error message."""
    if 'choices' in meta:
        return 'one of ' + ', '.join(repr(c) for c in meta['choices'])
    lo, hi = meta.get('min'), meta.get('max')
    lo_op = '(' if meta.get('min_exclusive') else '['
    hi_op = ')' if meta.get('max_exclusive') else ']'
    if lo is not None and hi is not None:
        return f'{kind} in {lo_op}{lo}, {hi}{hi_op}'
    if lo is not None:
        return f'{kind} {">" if lo_op == "(" else ">="} {lo}'
    if hi is not None:
        return f'{kind} {"<" if hi_op == ")" else "<="} {hi}'
    return kind


def _coerce_scalar(name: str, value: Any, kind: type, meta: Mapping[str, Any]) -> Any:
    """Check one scalar against its type and range; returns it converted (int -> float)."""
    allowed = allowed_text(meta, kind.__name__)
    if kind is bool:
        if not isinstance(value, (bool, np.bool_)):
            raise ConfigError(name, value, 'a bool')
        return bool(value)
    if kind is str:
        if not isinstance(value, str):
            raise ConfigError(name, value, 'a string')
        if meta.get('nonempty') and not value:
            raise ConfigError(name, value, 'a non-empty string')
    elif kind is int:
        integral = isinstance(value, numbers.Real) and not isinstance(value, bool) \
            and math.isfinite(value) and float(value).is_integer()
        if not integral:
            raise ConfigError(name, value, allowed)
        value = int(value)
    elif kind is float:
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            raise ConfigError(name, value, allowed)
        value = float(value)
        if math.isnan(value) or (math.isinf(value) and not meta.get('allow_inf')):
            raise ConfigError(name, value, allowed)
    if 'choices' in meta:
        if value not in meta['choices']:
            raise ConfigError(name, value, allowed)
        return value
    lo, hi = meta.get('min'), meta.get('max')
    if lo is not None and (value < lo or (meta.get('min_exclusive') and value == lo)):
        raise ConfigError(name, value, allowed)
    if hi is not None and (value > hi or (meta.get('max_exclusive') and value == hi)):
        raise ConfigError(name, value, allowed)
    return value


def is_list(f: 'dataclasses.Field[Any]') -> bool:
    """Return whether a field holds a list parameter (a tuple of item_type; ``Tuple[X, ...]``)."""
    return f.type is tuple or typing.get_origin(f.type) is tuple


def check_field(obj: Any, f: 'dataclasses.Field[Any]') -> None:
    """Validate and normalise one field of a config in place (frozen-safe)."""
    value = getattr(obj, f.name)
    meta = f.metadata
    if is_list(f):
        if isinstance(value, (str, bytes)) or not hasattr(value, '__iter__'):
            raise ConfigError(f.name, value, f'a list of {meta["item_type"].__name__}')
        items = tuple(value)
        n = meta.get('length')
        if n is not None and len(items) != n:
            raise ConfigError(f.name, value, f'a list of {n} {meta["item_type"].__name__}')
        checked = tuple(_coerce_scalar(f.name, v, meta['item_type'], meta) for v in items)
    else:
        checked = _coerce_scalar(f.name, value, f.type, meta)  # type: ignore[arg-type]
    object.__setattr__(obj, f.name, checked)


class Validated:
    """Base of a part (a frozen dataclass): check each field from its metadata, then the rest."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            check_field(self, f)
        self._check_cross()

    def _check_cross(self) -> None:
        """Check the rules between fields (none here; configs override and call super())."""


def _group(f: 'dataclasses.Field[Any]') -> Optional[type]:
    """Return a field's type when it is a part or a config of parts (a dataclass), else None."""
    kind = f.type
    return kind if isinstance(kind, type) and dataclasses.is_dataclass(kind) else None


_PATHS: Dict[type, Dict[str, Tuple[str, ...]]] = {}     # flat_paths by class, computed once


def flat_paths(cls: type) -> Dict[str, Tuple[str, ...]]:
    """
    Return {flat parameter name: attribute path} of a config of parts, in parameter order.

    The one mapping between the flat names (ROS parameters, presets, ``--set``) and the parts:
    ``LidarConfig``'s ``'range_at_10pct_m'`` is ``('physical_model', 'radiometry',
    'range_at_10pct_m')``. A part's fields are flat names themselves. Read-only: shared.
    """
    if cls not in _PATHS:
        out: Dict[str, Tuple[str, ...]] = {}
        for f in dataclasses.fields(cls):
            part = _group(f)
            if part is None:
                out[f.name] = (f.name,)
            else:
                out.update({name: (f.name, *path) for name, path in flat_paths(part).items()})
        _PATHS[cls] = out
    return _PATHS[cls]


def flat_fields(cls: type) -> Tuple['dataclasses.Field[Any]', ...]:
    """Return the field declarations (default, metadata) of every flat parameter of cls."""
    out: List['dataclasses.Field[Any]'] = []
    for f in dataclasses.fields(cls):
        part = _group(f)
        out.extend((f,) if part is None else flat_fields(part))
    return tuple(out)


def group_names(cls: type) -> FrozenSet[str]:
    """Return the flat parameter names of a config, a config of parts or a part class."""
    return frozenset(flat_paths(cls))


class Composed:
    """
    Base of a config of parts, built from flat parameters: ``LidarConfig(channels=32, ...)``.

    Each part (a dataclass field whose type is a part class) gets the parameters of its names
    (over a whole part of that field, if one is given) and validates them; flat names read
    through to their part (``cfg.channels``), so a ConfigError still names the flat parameter.
    """

    def __init__(self, **params: Any) -> None:
        names = flat_paths(type(self))
        parts = {f.name: _group(f) for f in dataclasses.fields(self)}  # type: ignore[arg-type]
        for key in params:
            if key not in names and key not in parts:
                raise TypeError(f'{type(self).__name__}() got an unexpected keyword argument '
                                f'{key!r}')
        for name, part in parts.items():
            assert part is not None, f'{name}: a field of a config of parts is a part'
            own = group_names(part)
            # A whole part given (dataclasses.replace passes them) is the base of its names.
            given = params.get(name)
            values = {k: getattr(given, k) for k in own} if isinstance(given, part) else {}
            values.update((k, v) for k, v in params.items() if k in own)
            object.__setattr__(self, name, part(**values))
        self._check_cross()

    def _check_cross(self) -> None:
        """Check the rules between parts (none here; configs override and call super())."""

    def __getattr__(self, name: str) -> Any:
        """Return flat parameter ``name`` from its part (only called for names not found)."""
        path = None if name.startswith('_') else flat_paths(type(self)).get(name)
        if path is None:
            raise AttributeError(f'{type(self).__name__!r} object has no attribute {name!r}')
        value: Any = self
        for step in path:
            value = getattr(value, step)
        return value
