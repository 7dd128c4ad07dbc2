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
from typing import Any, Mapping

import numpy as np

from ubot_lidar_sim.core.errors import ConfigError


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


def _coerce_scalar(name, value, kind, meta):
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


def check_field(obj: Any, f: dataclasses.Field) -> None:
    """Validate and normalise one field of a config in place (frozen-safe)."""
    value = getattr(obj, f.name)
    meta = f.metadata
    if f.type is tuple:
        if isinstance(value, (str, bytes)) or not hasattr(value, '__iter__'):
            raise ConfigError(f.name, value, f'a list of {meta["item_type"].__name__}')
        items = tuple(value)
        n = meta.get('length')
        if n is not None and len(items) != n:
            raise ConfigError(f.name, value, f'a list of {n} {meta["item_type"].__name__}')
        checked = tuple(_coerce_scalar(f.name, v, meta['item_type'], meta) for v in items)
    else:
        checked = _coerce_scalar(f.name, value, f.type, meta)
    object.__setattr__(obj, f.name, checked)


class Validated:
    """Mixin of a frozen config dataclass: check every field from its metadata, then the rest."""

    def __post_init__(self):
        for f in dataclasses.fields(self):
            check_field(self, f)
        self._check_cross()

    def _check_cross(self) -> None:
        """Check the rules between fields (none here; configs override and call super())."""

    @classmethod
    def of(cls, cfg: Any) -> Any:
        """Return the sub-config of class cls holding cfg's values of its fields."""
        return cls(**{f.name: getattr(cfg, f.name)
                      for f in dataclasses.fields(cls)})  # type: ignore[arg-type]


def group_names(cls: Any) -> frozenset:
    """Return the field names of a config or sub-config class."""
    return frozenset(f.name for f in dataclasses.fields(cls))
