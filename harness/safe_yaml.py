"""YAML from untrusted files, bounded before anything is built from it.

PyYAML composes an alias as a second reference to its anchor's node, so composing is cheap;
it is everything after (building values, `json.dumps`, the checks) that walks the expansion.
A "billion laughs" document of 600 bytes expands to ~10^9 values. So the event stream (the
parser's output, produced without recursion) is scanned first, counting for every anchor the
values and nesting it stands for, and the document is refused when:

- aliases add more than `MAX_ALIAS_VALUES` values beyond what is written (aliases themselves
  stay allowed: merge keys and vcrpy's `&id001` anchors use them);
- it nests deeper than the reader's limit, counting what an alias stands for (PyYAML's
  composer and constructor recurse per level: ~1,000 levels is a RecursionError);
- a scalar or key holds a lone surrogate (a `"\\ud800"` escape), which no file can be
  written back with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from harness.limits import MAX_ALIAS_VALUES, LimitError, check_json_value, surrogate_in

Loader: Any
try:
    Loader = yaml.CSafeLoader
except AttributeError:  # PyYAML built without libyaml
    Loader = yaml.SafeLoader

_OPEN = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSE = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


@dataclass(kw_only=True)
class _Open:
    """A mapping or list being scanned: the values and the nesting below it so far."""

    anchor: str | None
    values: int = 1
    depth: int = 1


@dataclass(kw_only=True)
class _Scan:
    max_depth: int
    max_alias_values: int
    anchors: dict[str, tuple[int, int]] = field(default_factory=dict)  # -> (values, depth)
    stack: list[_Open] = field(default_factory=list)
    added: int = 0  # values the aliases add beyond the alias itself

    def done(self, anchor: str | None, values: int, depth: int, line: int | None) -> None:
        """A node of `values` values and `depth` levels ends here (written or by alias)."""
        if len(self.stack) + depth > self.max_depth:
            raise LimitError(f"nested deeper than {self.max_depth} levels", line)
        if anchor is not None:
            self.anchors[anchor] = (values, depth)
        if self.stack:
            parent = self.stack[-1]
            parent.values += values
            parent.depth = max(parent.depth, depth + 1)

    def alias(self, name: str, line: int | None) -> None:
        values, depth = self.anchors.get(name, (1, 0))  # an unknown one: the composer says so
        self.added += values - 1
        if self.added > self.max_alias_values:
            raise LimitError(
                f"aliases (*{name} and others) expand to more than {self.max_alias_values:,} "
                "values: write the values out, or use fewer aliases",
                line,
            )
        self.done(None, values, depth, line)


def check_yaml(
    text: str, max_depth: int, max_alias_values: int = MAX_ALIAS_VALUES, loader: Any = None
) -> None:
    """Refuse `text` (LimitError with its line) past the limits above. YAML syntax errors are
    raised as `yaml.YAMLError`, as PyYAML raises them. `loader`: the one that will build the
    document (libyaml's by default), so both accept the same texts."""
    scan = _Scan(max_depth=max_depth, max_alias_values=max_alias_values)
    for event in yaml.parse(text, Loader=loader or Loader):
        line = event.start_mark.line + 1 if event.start_mark is not None else None
        if isinstance(event, _OPEN):
            if len(scan.stack) >= max_depth:
                raise LimitError(f"nested deeper than {max_depth} levels", line)
            scan.stack.append(_Open(anchor=event.anchor))
        elif isinstance(event, _CLOSE):
            node = scan.stack.pop()
            scan.done(node.anchor, node.values, node.depth, line)
        elif isinstance(event, yaml.ScalarEvent):
            _check_scalar(event.value, line)
            scan.done(event.anchor, 1, 0, line)
        elif isinstance(event, yaml.AliasEvent):
            scan.alias(event.anchor or "", line)


def _check_scalar(value: str, line: int | None) -> None:
    found = surrogate_in(value)
    if found is not None:
        raise LimitError(
            f"a lone surrogate ({found}) is not valid Unicode and cannot be written as "
            "UTF-8; escape a whole character instead (e.g. \\U0001F600)",
            line,
        )


def yaml_problem(exc: yaml.YAMLError, text: str = "") -> str:
    """A PyYAML error on one line: its problem and where (PyYAML's own text spans several
    lines, quoting the input and drawing a caret under it)."""
    if isinstance(exc, yaml.reader.ReaderError):
        line = text.count("\n", 0, exc.position) + 1 if text else None
        code = exc.character if isinstance(exc.character, int) else ord(exc.character[:1] or b"?")
        where = f" (line {line})" if line else ""
        return f"character U+{code:04X} is not allowed in YAML{where}"
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem:
        context = f"{exc.context}: " if exc.context else ""
        mark = exc.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        return " ".join(f"{context}{exc.problem}{where}".split())
    return " ".join(str(exc).split())


def load_yaml(text: str, max_depth: int) -> Any:
    """`yaml.load` (safe) after `check_yaml`, and the values checked as `check_json_value`
    does (integers of any size are the one thing the event scan cannot see); LimitError or
    yaml.YAMLError when refused."""
    check_yaml(text, max_depth)
    try:
        data = yaml.load(text, Loader=Loader)
    except (ValueError, TypeError, OverflowError, LookupError, AttributeError) as exc:
        # A constructor failing on a value its tag cannot hold (`2026-13-45` as a date, an
        # integer past Python's 4,300 digits): a YAML problem of this file, said as one.
        raise yaml.YAMLError(f"a value cannot be read: {exc}") from None
    check_json_value(data, max_depth)
    return data
