"""Strategies for the fuzz suite: hostile values, hostile YAML fragments, byte mutations and
structural mutations (one node of a valid document replaced by something hostile).

The suite is bounded (`FUZZ`: few examples, a deadline per example, no example database) so
it runs in seconds on two cores; every example must end in the harness's own one-line error
or a valid value."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import yaml
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

Path_ = tuple[str | int, ...]

FUZZ = settings(
    max_examples=60,
    # One example: without the limits a bomb or a ReDoS takes minutes; with them the slowest
    # example takes well under a second (the first, which warms up imports, a few).
    deadline=timedelta(seconds=5),
    database=None,  # no .hypothesis folder in the work tree
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def billion_laughs(levels: int) -> str:
    """A YAML flow value whose aliases expand to 9**levels strings."""
    parts = ["&l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for n in range(1, levels):
        parts.append(f"&l{n} [{', '.join([f'*l{n - 1}'] * 9)}]")
    return "[" + ", ".join(parts) + "]"


# Hand-made attacks (issue 14), as YAML text to splice in as a value.
YAML_ATTACKS = [
    billion_laughs(9),
    "[" * 1000 + "]" * 1000,
    "{a: " * 300 + "1" + "}" * 300,
    '"\\ud800"',
    '"caf\\udc80"',
    "!!python/object/apply:os.system [echo pwned]",
    "!custom 1",
    "*nowhere",
    "&self [*self]",
    "{<<: 1}",
    "{$ref: 'http://127.0.0.1:9/schema.json'}",
    "{$ref: 'file:///etc/passwd'}",
    "{$ref: '#'}",
    "{type: string, pattern: '^(a+)+$'}",
    "{patternProperties: {'^(a+)+$': {}}, additionalProperties: false}",
    "!!binary H4sIAAAAAAAA/w==",
    "2026-13-45",
    "0x" + "f" * 5000,
    "1" * 5000,
]

# JSON values a reader may not expect: wrong types, deep nesting, surrogates, huge numbers.
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(["\ud800", "a\udfff", "http://[::1", "sk-ant-" + "x1" * 12, "", "#"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(max_size=8) | st.sampled_from(["$ref", "\ud800"]), inner, max_size=4
        )
    ),
    max_leaves=12,
)
# Past every nesting limit, yet shallow enough for the test's own YAML/JSON writers (PyYAML's
# representer recurses per level); deeper texts come from YAML_ATTACKS and the byte mutations.
DEEP = st.integers(min_value=45, max_value=160).map(lambda n: json.loads("[" * n + "]" * n))


def nodes(value: Any, path: Path_ = ()) -> Iterator[Path_]:
    """Every node's path in a JSON-like document, the root first."""
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from nodes(child, (*path, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from nodes(child, (*path, i))


def replaced(value: Any, path: Path_, new: Any) -> Any:
    if not path:
        return new
    out = copy.deepcopy(value)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = new
    return out


@st.composite
def structural(draw: st.DrawFn, document: Any) -> Any:
    """The document with one node replaced by a hostile value."""
    paths = list(nodes(document))
    path = draw(st.sampled_from(paths))
    return replaced(document, path, draw(st.one_of(VALUES, DEEP)))


@st.composite
def spliced(draw: st.DrawFn, text: str) -> str:
    """The YAML text with one line's value replaced by a hand-made attack."""
    lines = text.splitlines()
    candidates = [i for i, line in enumerate(lines) if ": " in line]
    i = draw(st.sampled_from(candidates))
    key = lines[i].split(": ", 1)[0]
    lines[i] = f"{key}: {draw(st.sampled_from(YAML_ATTACKS))}"
    return "\n".join(lines) + "\n"


@st.composite
def byte_mutated(draw: st.DrawFn, data: bytes) -> bytes:
    """A few random edits: bytes inserted (any, including invalid UTF-8), deleted, repeated."""
    out = bytearray(data)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        at = draw(st.integers(min_value=0, max_value=len(out)))
        kind = draw(st.sampled_from(["insert", "delete", "repeat"]))
        if kind == "insert":
            out[at:at] = draw(st.binary(min_size=1, max_size=8) | st.sampled_from([b"&a ", b"*a"]))
        elif kind == "delete":
            del out[at : at + draw(st.integers(min_value=1, max_value=40))]
        else:
            out[at:at] = out[at : at + draw(st.integers(min_value=1, max_value=200))]
    return bytes(out)


def dump_yaml(document: Any) -> str:
    """YAML for a mutated document; lone surrogates come out as `\\ud800` escapes."""
    return yaml.safe_dump(document, allow_unicode=True, sort_keys=False, width=100)


def one_line(message: str, path: object) -> None:
    assert str(message).startswith(str(path)), message
    assert "\n" not in str(message), message
    assert "Traceback" not in str(message), message
