"""YAML nodes to plain values, remembering the line of every node by its JSON path, so a problem
found later (schema, semantics) still names FILE:LINE: FIELD. Every YAML problem becomes a
`ScenarioError` here: nothing from PyYAML escapes as a traceback.

Only plain YAML is accepted: mappings, lists and the core scalars (text, numbers, booleans,
null). Tags such as `!!python/object:…` or `!custom` are rejected, never constructed.

Merge keys (`<<: *defaults`, `<<: [*a, *b]`) are supported as the YAML merge spec says
(https://yaml.org/type/merge.html): keys written in the mapping win over merged ones, and among
merged mappings the first wins. A merged field keeps the line where its value is written (in the
anchored mapping), which is where a fix goes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import yaml

from harness.errors import ScenarioError
from harness.limits import LimitError, check_int

Path_ = tuple[str | int, ...]
ErrorAt = Callable[[Path_, str], ScenarioError]  # `Located.error`: the problem at a field

MAP_TAG = "tag:yaml.org,2002:map"
SEQ_TAG = "tag:yaml.org,2002:seq"
MERGE_TAG = "tag:yaml.org,2002:merge"
# The scalar tags a scenario can use; `timestamp` stays because PyYAML resolves an unquoted
# date (2024-03-01) to it implicitly.
SCALAR_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "timestamp")
)
PLAIN_YAML = "only plain YAML is allowed: mappings, lists, text, numbers, booleans and null"


def field_name(path: Path_) -> str:
    if not path:
        return "(document)"
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{shown(part)}" if out else shown(part))
    return out


def shown(key: str, keep: int = 60) -> str:
    """A key as a message shows it: as written when printable, else escaped (a key holding a
    newline must not break the one-line message), and cut when long."""
    text = key if key.isprintable() else repr(key)
    return text if len(text) <= keep else text[:keep] + "…"


def yaml_error(
    file: str, exc: yaml.YAMLError, field: str, line: int | None = None, text: str = ""
) -> ScenarioError:
    """A PyYAML error as one line: the line of its problem mark (or, for a character YAML
    does not allow, of its position in `text`), else `line`."""
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        line = mark.line + 1
    if isinstance(exc, yaml.reader.ReaderError):
        if text:
            line = text.count("\n", 0, exc.position) + 1
        code = exc.character if isinstance(exc.character, int) else ord(exc.character[:1] or b"?")
        problem = f"character U+{code:04X} is not allowed in YAML ({exc.reason})"
    else:
        problem = getattr(exc, "problem", None) or str(exc)
    return ScenarioError(file, line, field, f"invalid YAML: {' '.join(problem.split())}")


@dataclass(frozen=True, kw_only=True)
class _Pair:
    key: yaml.Node
    value: yaml.Node
    merged: bool


class Located:
    """The parsed document plus the line of every node, by JSON path."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.lines: dict[Path_, int] = {}
        self._open: set[int] = set()  # nodes being built: an alias inside its own anchor

    def line(self, path: Iterable[str | int]) -> int | None:
        key = tuple(path)
        while key not in self.lines and key:
            key = key[:-1]
        return self.lines.get(key)

    def error(self, path: Iterable[str | int], problem: str) -> ScenarioError:
        p = tuple(path)
        return ScenarioError(self.file, self.line(p), field_name(p), problem)

    def _at(self, node: yaml.Node, path: Path_, problem: str) -> ScenarioError:
        return ScenarioError(self.file, node.start_mark.line + 1, field_name(path), problem)

    def build(self, node: yaml.Node, path: Path_) -> Any:
        if id(node) in self._open:
            raise self._at(node, path, "an alias refers to a node that contains it (a cycle)")
        self.lines[path] = node.start_mark.line + 1
        self._open.add(id(node))
        try:
            if isinstance(node, yaml.MappingNode):
                return self._mapping(node, path)
            if isinstance(node, yaml.SequenceNode):
                self._check_tag(node, path, SEQ_TAG)
                return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
            return self._scalar(node, path)
        finally:
            self._open.discard(id(node))

    def _check_tag(self, node: yaml.Node, path: Path_, *allowed: str) -> None:
        if node.tag not in allowed:
            raise self._at(node, path, f"unsupported YAML tag {node.tag!r}: {PLAIN_YAML}")

    def _mapping(self, node: yaml.MappingNode, path: Path_) -> dict[str, Any]:
        self._check_tag(node, path, MAP_TAG)
        out: dict[str, Any] = {}
        for pair in self._pairs(node, path, merged=False, inside=frozenset()):
            key = self.build(pair.key, path)
            if not isinstance(key, str):
                raise self.error(path, f"keys must be text, found {key!r}")
            if key in out:
                if pair.merged:
                    continue  # a key written in the mapping, or merged earlier, wins
                raise self._at(pair.key, (*path, key), "duplicate key")
            out[key] = self.build(pair.value, (*path, key))
            self.lines.setdefault((*path, key), pair.key.start_mark.line + 1)
        return out

    def _pairs(
        self, node: yaml.MappingNode, path: Path_, merged: bool, inside: frozenset[int]
    ) -> list[_Pair]:
        """The mapping's own pairs first, then those of its merge sources, in order."""
        if id(node) in inside:
            raise self._at(node, path, "a merge key (<<) merges a mapping into itself (a cycle)")
        inside = inside | {id(node)}
        pairs = [_Pair(key=k, value=v, merged=merged) for k, v in node.value if k.tag != MERGE_TAG]
        for key, value in node.value:
            if key.tag == MERGE_TAG:
                for source in self._merge_sources(value, path):
                    pairs.extend(self._pairs(source, path, merged=True, inside=inside))
        return pairs

    def _merge_sources(self, value: yaml.Node, path: Path_) -> list[yaml.MappingNode]:
        if isinstance(value, yaml.MappingNode):
            return [value]
        if isinstance(value, yaml.SequenceNode) and all(
            isinstance(item, yaml.MappingNode) for item in value.value
        ):
            return list(value.value)
        raise self._at(
            value,
            path,
            "a merge key (<<) takes a mapping or a list of mappings, e.g. <<: *defaults",
        )

    def _scalar(self, node: yaml.Node, path: Path_) -> Any:
        self._check_tag(node, path, *SCALAR_TAGS)
        loader = yaml.SafeLoader("")
        try:
            value = loader.construct_object(node, deep=True)
            if isinstance(value, int):
                check_int(value)
            return value
        except LimitError as exc:
            raise self._at(node, path, exc.problem) from None
        except yaml.YAMLError as exc:
            raise yaml_error(self.file, exc, field_name(path), node.start_mark.line + 1) from None
        except (ValueError, LookupError, AttributeError):
            # PyYAML's constructors raise these for an explicit tag on a value that does not
            # fit it (`!!int abc`: ValueError, `!!bool maybe`: KeyError, `!!timestamp x`:
            # AttributeError).
            raise self._at(node, path, f"{node.value!r} is not a valid {node.tag!r}") from None
        finally:
            loader.dispose()
