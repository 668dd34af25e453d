"""A server-sent-event body as a cassette keeps it: a list of events whose JSON data is stored
parsed (reviewable), plus just enough layout to rebuild the exact bytes the API sent.

The layout facts, all seen in real recordings (shared/realwire):
- the event separator: `\\n\\n` (Anthropic, OpenAI) or `\\r\\n\\r\\n` (Gemini `alt=sse`);
- whitespace the API put inside or after the JSON: Anthropic pads each `data:` line with a
  run of spaces, Gemini mixes `", "` and `","`. It is kept as insertions (`ws`: offset in the
  compact JSON, the whitespace) so the data itself stays a parsed mapping;
- `\\uXXXX` escapes instead of UTF-8 (`ascii: true`).
A frame that does not fit this grammar (a comment line, several `data:` lines) is kept
verbatim as `raw`. Replay sends one event per chunk, so the SDK under test really streams.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.limits import LimitError, loads_json

CRLF_SEPARATOR = "\r\n\r\n"
LF_SEPARATOR = "\n\n"
WHITESPACE = frozenset(" \t\r\n")


@dataclass(frozen=True, kw_only=True)
class SseEvent:
    """One frame. Either `raw` (the frame text, verbatim) or `event` + `data`, where `data` is
    decoded JSON when `is_json`, else the text after `data: ` (e.g. `[DONE]`)."""

    event: str | None = None
    data: Any = None
    is_json: bool = True
    ascii: bool = False
    ws: tuple[tuple[int, str], ...] = ()
    raw: str | None = None

    def text(self, line_separator: str) -> str:
        if self.raw is not None:
            return self.raw
        lines = [f"event: {self.event}"] if self.event is not None else []
        lines.append(f"data: {self._data_text()}")
        return line_separator.join(lines)

    def _data_text(self) -> str:
        if not self.is_json:
            return str(self.data)
        compact = compact_json(self.data, ascii=self.ascii)
        if not self.ws:
            return compact
        out, last = [], 0
        for offset, space in self.ws:
            out += [compact[last:offset], space]
            last = offset
        out.append(compact[last:])
        return "".join(out)


@dataclass(frozen=True, kw_only=True)
class SseBody:
    events: tuple[SseEvent, ...]
    separator: str = LF_SEPARATOR
    tail: str = ""  # text after the last separator (a stream that did not end on one)

    @property
    def line_separator(self) -> str:
        return "\r\n" if self.separator == CRLF_SEPARATOR else "\n"

    def chunks(self) -> list[bytes]:
        """One chunk per event, separator included, as the API flushed them."""
        out = [(e.text(self.line_separator) + self.separator).encode() for e in self.events]
        if self.tail:
            out.append(self.tail.encode())
        return out

    def text(self) -> str:
        return b"".join(self.chunks()).decode()


def compact_json(data: Any, ascii: bool = False) -> str:
    return json.dumps(data, ensure_ascii=ascii, separators=(",", ":"))


def body_from_text(text: str) -> SseBody:
    """Split an SSE body into events, keeping what is needed to rebuild it byte for byte."""
    separator = CRLF_SEPARATOR if CRLF_SEPARATOR in text else LF_SEPARATOR
    line_separator = "\r\n" if separator == CRLF_SEPARATOR else "\n"
    pieces = text.split(separator)
    tail = pieces.pop()  # "" when the body ends on a separator
    events = tuple(_event_from_frame(p, line_separator) for p in pieces)
    return SseBody(events=events, separator=separator, tail=tail)


def _event_from_frame(frame: str, line_separator: str) -> SseEvent:
    lines = frame.split(line_separator)
    name: str | None = None
    if len(lines) == 2 and lines[0].startswith("event: "):
        name = lines[0][len("event: ") :]
        lines = lines[1:]
    if len(lines) != 1 or not lines[0].startswith("data: "):
        return SseEvent(raw=frame)
    data_text = lines[0][len("data: ") :]
    event = _json_event(name, data_text)
    if event is None:
        event = SseEvent(event=name, data=data_text, is_json=False)
    return event if event.text(line_separator) == frame else SseEvent(raw=frame)


def _json_event(name: str | None, data_text: str) -> SseEvent | None:
    try:
        data = loads_json(data_text)
    except (json.JSONDecodeError, LimitError):
        return None  # kept as text: a frame too deep or not valid Unicode is not parsed
    if not isinstance(data, (dict, list)):
        return None  # a bare scalar (`[DONE]` is not JSON; a number would be ambiguous)
    for ascii in (False, True):
        ws = whitespace_insertions(data_text, compact_json(data, ascii=ascii))
        if ws is not None:
            return SseEvent(event=name, data=data, ascii=ascii, ws=ws)
    return None


def whitespace_insertions(original: str, compact: str) -> tuple[tuple[int, str], ...] | None:
    """The whitespace to insert into `compact` to get `original`, as (offset, text) pairs, or
    None when they differ by more than whitespace."""
    out: list[tuple[int, str]] = []
    i = j = 0
    while i < len(original):
        if j < len(compact) and original[i] == compact[j]:
            i, j = i + 1, j + 1
            continue
        if original[i] not in WHITESPACE:
            return None
        start = i
        while i < len(original) and original[i] in WHITESPACE:
            i += 1
        out.append((j, original[start:i]))
    return tuple(out) if j == len(compact) else None


def event_to_yaml(event: SseEvent) -> dict[str, Any]:
    if event.raw is not None:
        return {"raw": event.raw}
    out: dict[str, Any] = {}
    if event.event is not None:
        out["event"] = event.event
    out["data"] = event.data
    if not event.is_json:
        out["text"] = True
    if event.ascii:
        out["ascii"] = True
    if event.ws:
        out["ws"] = [[offset, space] for offset, space in event.ws]
    return out


def event_from_yaml(raw: Any) -> SseEvent:
    """The inverse of `event_to_yaml`; ValueError/TypeError/KeyError on a malformed entry."""
    if not isinstance(raw, Mapping):
        raise TypeError(f"an event must be a mapping, not {type(raw).__name__}")
    unknown = set(raw) - {"raw", "event", "data", "text", "ascii", "ws"}
    if unknown:
        raise ValueError(f"unknown event key(s) {sorted(unknown)}")
    if "raw" in raw:
        return SseEvent(raw=_string(raw["raw"], "raw"))
    if "data" not in raw:
        raise KeyError("data")
    name = raw.get("event")
    return SseEvent(
        event=None if name is None else _string(name, "event"),
        data=raw["data"],
        is_json=not raw.get("text", False),
        ascii=bool(raw.get("ascii", False)),
        ws=_ws(raw.get("ws", ())),
    )


def body_to_yaml(body: SseBody) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The stream's layout (`sse:`, empty when default) and its events (`events:`)."""
    layout: dict[str, Any] = {}
    if body.separator != LF_SEPARATOR:
        layout["separator"] = body.separator
    if body.tail:
        layout["tail"] = body.tail
    return layout, [event_to_yaml(e) for e in body.events]


def body_from_yaml(layout: Any, events: Any) -> SseBody:
    layout = layout or {}
    if not isinstance(layout, Mapping):
        raise TypeError("`sse` must be a mapping")
    if not isinstance(events, Sequence) or isinstance(events, str):
        raise TypeError("`events` must be a list")
    separator = layout.get("separator", LF_SEPARATOR)
    if separator not in (LF_SEPARATOR, CRLF_SEPARATOR):
        raise ValueError(f"sse separator must be '\\n\\n' or '\\r\\n\\r\\n', not {separator!r}")
    parsed = []
    for number, event in enumerate(events, 1):
        try:
            parsed.append(event_from_yaml(event))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"event {number}: {_problem(exc)}") from None
    return SseBody(
        events=tuple(parsed), separator=separator, tail=_string(layout.get("tail", ""), "tail")
    )


def _ws(raw: Any) -> tuple[tuple[int, str], ...]:
    out = []
    for item in raw:
        offset, space = item
        if not isinstance(offset, int) or not isinstance(space, str) or set(space) - WHITESPACE:
            raise ValueError(f"ws entries are [offset, whitespace], not {item!r}")
        out.append((offset, space))
    return tuple(out)


def _string(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"`{field}` must be a string, not {type(value).__name__}")
    return value


def _problem(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing `{exc.args[0]}`"
    return str(exc)
