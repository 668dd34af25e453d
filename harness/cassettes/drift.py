"""Drift: does the loop still send what it sent when the cassette was recorded?

Requests are compared for what changes what the model is shown or offered, not for how it is
spelled. First each side is put in one spelling of its API (`RequestSpelling`, declared in the
provider's wire module beside its evidence): a default made explicit is the same as left out
(`is_error: false`, `tool_choice: auto`, `parallel_tool_calls: true`, Gemini's mode AUTO), a
string is the same as one text block, a null the same as no key, Gemini's snake_case the same
as its camelCase, key order never matters; sampling and bookkeeping settings (`max_tokens`,
`temperature`, cache marks, metadata) are not compared, nor the project's `drift_ignore`
fields. Then what legitimately changes between runs is normalised: ids the model minted and
the loop echoes back (`toolu_`, `call_`, `fc_`, `rs_`, `msg_`, `resp_`, …) and ids the loop
makes up, renamed by order of first appearance so that pairing is still compared (a result
sent with the wrong id still differs); opaque tokens (signatures, encrypted reasoning); and
timestamps. What remains is what the loop decided: roles, texts, tools, tool choice, order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness.cassettes.cassette import RecordedRequest

ID_PATTERN = re.compile(
    r"^(?:toolu|srvtoolu|call|fc|rs|msg|resp|ctc|chatcmpl|req|item)_[A-Za-z0-9_\-]{4,}$"
)
# Keys whose value is an id whatever it looks like (Gemini's functionCall.id has no prefix).
ID_KEYS = frozenset({"id", "tool_use_id", "call_id", "item_id", "previous_response_id"})
# Opaque tokens: valid only byte-exact, different on every live recording.
OPAQUE_KEYS = frozenset({"signature", "thoughtSignature", "thought_signature", "encrypted_content"})
TIME_KEYS = frozenset({"created_at", "created", "timestamp"})
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
MAX_LINES = 8
MAX_VALUE = 90


@dataclass(frozen=True, kw_only=True)
class Drift:
    """How a sent request differs from the recorded one, after normalisation."""

    lines: tuple[str, ...]  # readable differences, first few
    first_path: str  # JSON path of the first difference ("" for method/URL)
    total: int

    def text(self) -> str:
        more = self.total - len(self.lines)
        return "; ".join(self.lines) + (f"; … and {more} more" if more > 0 else "")


KeyPath = tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Spelling:
    """One API's `RequestSpelling` with the fields left out (its own and the project's
    `drift_ignore`), keyed by key path for the walk."""

    defaults: Mapping[KeyPath, Any]
    text_blocks: Mapping[KeyPath, str]
    free_form: frozenset[KeyPath]
    skipped: frozenset[KeyPath]  # exact paths left out
    skipped_like: tuple[KeyPath, ...]  # paths with `*` for any one key
    key_form: Callable[[str], str] | None

    def canonical(self, value: Any, path: KeyPath = ()) -> Any:
        """`value` in this one spelling (see the module doc)."""
        if isinstance(value, list):
            return [self.canonical(v, path) for v in value]
        if not isinstance(value, Mapping):
            return value
        out: dict[Any, Any] = {}
        # In sorted key order: when two spellings of one field meet (`tool_config` and
        # `toolConfig`), which one is kept must not depend on the order they were written in.
        for key, item in sorted(value.items(), key=lambda pair: str(pair[0])):
            name = self.key_form(key) if self.key_form and isinstance(key, str) else key
            here = (*path, str(name))
            if item is None or self._skipped(here):
                continue
            if here not in self.free_form:
                item = self.canonical(item, here)
            if here in self.text_blocks:
                item = _one_text(item, self.text_blocks[here])
            if here in self.defaults and item == self.defaults[here]:
                continue
            out[name] = item
        return out

    def _skipped(self, path: KeyPath) -> bool:
        if path in self.skipped:
            return True
        return any(
            len(p) == len(path) and all(a in ("*", b) for a, b in zip(p, path, strict=True))
            for p in self.skipped_like
        )


def _one_text(value: Any, block: str) -> Any:
    """A list of one plain text block of type `block`, as the string it stands for."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], Mapping):
        only = value[0]
        if only.keys() == {"type", "text"} and only["type"] == block:
            return only["text"]
    return value


def spelling_for(api: str | None, ignore: Sequence[str] = ()) -> Spelling | None:
    """The spelling of `api` (None: not a model API, compared as sent) with `ignore` (the
    `drift_ignore` setting: `path` or `provider:path`) left out too."""
    return _spelling(api, tuple(ignore)) if api is not None or ignore else None


@cache
def _spelling(api: str | None, ignore: tuple[str, ...]) -> Spelling:
    from harness.emulator.apis import PROVIDER_OF_API
    from harness.trace.common import RequestSpelling
    from harness.trace.parse import FORMATS

    spellings: dict[str, RequestSpelling] = {k: f.spelling for k, f in FORMATS.items()}
    spelling = spellings.get(api or "", RequestSpelling())
    provider = PROVIDER_OF_API.get(api or "", "")
    form = spelling.key_form or (lambda key: key)
    paths = {tuple(p.split(".")) for p in spelling.not_compared}
    for entry in ignore:
        scope, _, path = entry.rpartition(":")
        if scope in ("", provider):
            paths.add(tuple(form(k) for k in path.split(".")))
    return Spelling(
        defaults={tuple(k.split(".")): v for k, v in spelling.defaults.items()},
        text_blocks={tuple(k.split(".")): v for k, v in spelling.text_blocks.items()},
        free_form=frozenset(tuple(k.split(".")) for k in spelling.free_form),
        skipped=frozenset(p for p in paths if "*" not in p),
        skipped_like=tuple(sorted(p for p in paths if "*" in p)),
        key_form=spelling.key_form,
    )


def normalise(body: Any, spelling: Spelling | None = None) -> Any:
    """`body` in one spelling (when given), volatile values replaced by stable placeholders
    (see the module doc)."""
    names: dict[str, str] = {}
    canonical = spelling.canonical(body) if spelling is not None else body
    return _walk(canonical, names, key=None, parent=None)


def _walk(value: Any, names: dict[str, str], key: str | None, parent: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _walk(value[k], names, k, value) for k in sorted(value, key=str)}
    if isinstance(value, list):
        return [_walk(v, names, key, value) for v in value]
    if not isinstance(value, str):
        return "<time>" if key in TIME_KEYS and isinstance(value, (int, float)) else value
    if key in OPAQUE_KEYS or (key == "data" and _kind(parent) == "redacted_thinking"):
        return "<opaque>"
    if key in ID_KEYS or ID_PATTERN.match(value):
        return names.setdefault(value, f"<id {len(names) + 1}>")
    if key in TIME_KEYS or TIMESTAMP.match(value):
        return "<time>"
    return value


def _kind(parent: Any) -> Any:
    return parent.get("type") if isinstance(parent, Mapping) else None


def endpoint(uri: str) -> str:
    """Method-independent identity of the URL: path and query (the host is the base URL's)."""
    parts = urlsplit(uri)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def request_drift(
    recorded: RecordedRequest,
    method: str,
    uri: str,
    body: Any,
    ignore: Sequence[str] | None = None,
) -> Drift | None:
    """None when the sent request matches the recording after normalisation. `ignore`: the
    `drift_ignore` fields (None: the project's, from `[tool.harness]`)."""
    if method == recorded.method and uri == recorded.uri and body == recorded.body:
        return None  # the same request (a replay's usual case): equal after normalising too
    lines: list[str] = []
    if method != recorded.method:
        lines.append(f"method: recorded {recorded.method}, sent {method}")
    if endpoint(uri) != endpoint(recorded.uri):
        lines.append(f"url: recorded {endpoint(recorded.uri)}, sent {endpoint(uri)}")
    spelling = _recorded_spelling(recorded, ignore)
    old, new = normalise(recorded.body, spelling), normalise(body, spelling)
    if old == new and not lines:
        return None
    body_lines = [] if old == new else diff_lines(old, new)
    first = "" if lines else (body_lines[0][0] if body_lines else "")
    every = lines + [text for _, text in body_lines]
    return Drift(lines=tuple(every[:MAX_LINES]), first_path=first, total=len(every))


def diff_lines(old: Any, new: Any) -> list[tuple[str, str]]:
    """(JSON path, readable line) for each difference, via deepdiff, in document order."""
    from deepdiff import DeepDiff

    # threshold 0: always name the keys that differ, never "the whole body changed"
    diff = DeepDiff(old, new, verbose_level=2, threshold_to_diff_deeper=0)
    out: list[tuple[str, str]] = []
    for kind, entries in diff.items():
        for path, detail in dict(entries).items():
            out.append((json_path(path), _line(kind, json_path(path), detail)))
    return sorted(out)


def _line(kind: str, path: str, detail: Any) -> str:
    if kind in ("values_changed", "type_changes"):
        old, new = _short(detail.get("old_value")), _short(detail.get("new_value"))
        return f"{path}: recorded {old}, sent {new}"
    if kind in ("dictionary_item_added", "iterable_item_added"):
        return f"{path}: sent {_short(detail)}, not in the recording"
    if kind in ("dictionary_item_removed", "iterable_item_removed"):
        return f"{path}: recorded {_short(detail)}, not sent"
    return f"{path}: {kind.replace('_', ' ')}"


def json_path(deepdiff_path: str) -> str:
    """`root['messages'][1]['content']` -> `messages[1].content`."""
    path = re.sub(r"\['([^']*)'\]", r".\1", deepdiff_path.removeprefix("root"))
    return path.removeprefix(".") or "(body)"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 1] + "…"


def distance(
    recorded: RecordedRequest,
    method: str,
    uri: str,
    body: Any,
    ignore: Sequence[str] | None = None,
) -> int:
    """How unlike two requests are (for "the closest recorded request"): differing leaves."""
    penalty = (method != recorded.method) * 1000 + (endpoint(uri) != endpoint(recorded.uri)) * 500
    spelling = _recorded_spelling(recorded, ignore)
    old, new = _leaves(normalise(recorded.body, spelling)), _leaves(normalise(body, spelling))
    return penalty + len(old ^ new)


def _leaves(value: Any, path: str = "") -> set[tuple[str, str]]:
    if isinstance(value, Mapping):
        return {leaf for k, v in value.items() for leaf in _leaves(v, f"{path}.{k}")}
    if isinstance(value, list):
        return {leaf for i, v in enumerate(value) for leaf in _leaves(v, f"{path}[{i}]")}
    return {(path, repr(value))}


def _recorded_spelling(recorded: RecordedRequest, ignore: Sequence[str] | None) -> Spelling | None:
    """Both sides are read in the spelling of the API the recording called."""
    from harness.trace.parse import api_of

    return spelling_for(api_of(recorded.uri), project_ignore() if ignore is None else ignore)


def project_ignore(start: Path | None = None) -> tuple[str, ...]:
    """`drift_ignore` of the project around `start` (the current folder): the replay compares
    with it whoever runs it (`harness run`, the pytest plugin)."""
    from harness.settings import find_pyproject

    path = find_pyproject(start)
    if path is None:
        return ()
    stat = path.stat()
    return _ignore_in(path, stat.st_mtime_ns, stat.st_size)


@cache
def _ignore_in(path: Path, _mtime_ns: int, _size: int) -> tuple[str, ...]:
    """Read once per version of the file (the replay asks at every call)."""
    from harness.settings import load_settings

    return load_settings(path.parent).drift_ignore
