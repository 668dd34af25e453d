"""Drift: does the loop still send what it sent when the cassette was recorded?

Requests are compared after normalising what legitimately changes between runs: ids the model
minted and the loop echoes back (`toolu_`, `call_`, `fc_`, `rs_`, `msg_`, `resp_`, …) and ids the
loop makes up, renamed by order of first appearance so that pairing is still compared (a result
sent with the wrong id still differs); opaque tokens (signatures, encrypted reasoning); and
timestamps. What remains is what the loop decided: roles, texts, tools, tool choice, order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
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


def normalise(body: Any) -> Any:
    """`body` with volatile values replaced by stable placeholders (see the module doc)."""
    names: dict[str, str] = {}
    return _walk(body, names, key=None, parent=None)


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


def request_drift(recorded: RecordedRequest, method: str, uri: str, body: Any) -> Drift | None:
    """None when the sent request matches the recording after normalisation."""
    lines: list[str] = []
    if method != recorded.method:
        lines.append(f"method: recorded {recorded.method}, sent {method}")
    if endpoint(uri) != endpoint(recorded.uri):
        lines.append(f"url: recorded {endpoint(recorded.uri)}, sent {endpoint(uri)}")
    old, new = normalise(recorded.body), normalise(body)
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


def distance(recorded: RecordedRequest, method: str, uri: str, body: Any) -> int:
    """How unlike two requests are (for "the closest recorded request"): differing leaves."""
    penalty = (method != recorded.method) * 1000 + (endpoint(uri) != endpoint(recorded.uri)) * 500
    old, new = _leaves(normalise(recorded.body)), _leaves(normalise(body))
    return penalty + len(old ^ new)


def _leaves(value: Any, path: str = "") -> set[tuple[str, str]]:
    if isinstance(value, Mapping):
        return {leaf for k, v in value.items() for leaf in _leaves(v, f"{path}.{k}")}
    if isinstance(value, list):
        return {leaf for i, v in enumerate(value) for leaf in _leaves(v, f"{path}[{i}]")}
    return {(path, repr(value))}
