"""Results dataclasses to JSON values and back, driven by their type hints.

Only the shapes `model.py` uses are supported (dataclasses, tuples, mappings, optionals,
literals, plain JSON values); anything else is a programming error, raised at once. The schema
has already been checked when `from_json` runs, so it trusts the data's shape.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar, Union

T = TypeVar("T")


def to_json(value: Any) -> Any:
    """A JSON-ready value: dataclasses become objects, tuples lists. A field typed `Any` holds
    decoded JSON already (a raw body) and is passed through: walking the raw bodies was most
    of the time to write a large file."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        hints = _hints(type(value))
        return {
            f.name: _field_json(hints[f.name], getattr(value, f.name))
            for f in dataclasses.fields(value)
        }
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return value


def _field_json(hint: Any, value: Any) -> Any:
    return value if hint is Any else to_json(value)


def from_json(cls: type[T], data: Any) -> T:
    """The dataclass `cls` read back from `to_json`'s output."""
    value: T = _convert(cls, data)
    return value


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _convert(hint: Any, data: Any) -> Any:
    if hint is Any or data is None:
        return data
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        return _convert(options[0], data) if len(options) == 1 else data
    if origin is tuple:
        item = typing.get_args(hint)[0]
        return tuple(_convert(item, v) for v in data)
    if origin in (Mapping, dict) or hint is dict:
        args = typing.get_args(hint)
        value_hint = args[1] if args else Any
        return {k: _convert(value_hint, v) for k, v in data.items()}
    if origin is typing.Literal or hint in (str, int, bool):
        return data
    if hint is float:
        return float(data)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        hints = _hints(hint)
        names = {f.name for f in dataclasses.fields(hint) if f.init}
        return hint(**{k: _convert(hints[k], v) for k, v in data.items() if k in names})
    raise TypeError(f"results codec: unsupported type {hint!r}")
