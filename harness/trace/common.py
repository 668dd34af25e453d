"""What the four wire parsers share: the HTTP request and reply they read, the problem
collector, and JSON access that never raises (wire data is whatever the loop or the provider
sent, so every field may be missing or of the wrong type)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.capture import SseEvent
from harness.trace.model import (
    ApiName,
    Opaque,
    ParseProblem,
    WireRequest,
    WireResponse,
    WireToolCall,
)

Side = Literal["request", "response", "exchange"]


@dataclass(frozen=True, kw_only=True)
class RequestSpelling:
    """The ways one API lets a request say the same thing (read by the replay's drift check,
    `harness.cassettes.drift`). Paths are keys joined by dots, lists passed through
    (`messages.content.is_error` is that key in every block of every message)."""

    # A value that means the same as leaving the key out (the API's default).
    defaults: Mapping[str, Any] = field(default_factory=dict)
    # Content that may be a plain string or a list of one text block of this type (compared
    # as the string).
    text_blocks: Mapping[str, str] = field(default_factory=dict)
    # Settings that shape sampling or bookkeeping, not what the model is shown or offered.
    not_compared: frozenset[str] = frozenset()
    # The app's own data (tool arguments, schemas, results): compared exactly as sent.
    free_form: frozenset[str] = frozenset()
    # Keys spelled two ways for one field (proto JSON takes snake_case and camelCase): the
    # one form they are compared in. None: keys are compared as sent.
    key_form: Callable[[str], str] | None = None


@dataclass(frozen=True, kw_only=True)
class HttpRequest:
    url: str
    headers: Mapping[str, str]  # names lower-cased
    body: Any  # decoded JSON, or text when it was not JSON


@dataclass(frozen=True, kw_only=True)
class HttpReply:
    status: int | None
    body: Any  # decoded JSON (a list for Gemini's JSON-array stream), text, or None
    events: tuple[SseEvent, ...] | None  # SSE frames, None when not streamed as SSE
    transport_error: str | None  # no complete response arrived (refused, cut)


@dataclass(frozen=True, kw_only=True)
class Reassembled:
    """A response body: as sent, or rebuilt from its stream the way the SDK does."""

    body: dict[str, Any]
    error: tuple[str, str | None] | None = None  # (message, type) of a mid-stream error
    complete: bool = True  # the stream reached its final event without an error

    def turn_problems(self, problems: Problems) -> Problems:
        """Where to report what is wrong inside the turn. A cut stream's partial turn is
        not what the SDK returns (it raises), and its truncated tool arguments are expected:
        the cut itself is already reported (the error, or a missing final event)."""
        return problems if self.complete else Problems(problems.side)


@dataclass(frozen=True, kw_only=True)
class Turn:
    """What a model turn says, in any format: its text, tool calls and opaque items."""

    text: str = ""
    calls: tuple[WireToolCall, ...] = ()
    opaque: tuple[Opaque, ...] = ()


class Problems:
    """Collects what a parser could not read, instead of raising."""

    def __init__(self, side: Side) -> None:
        self.side: Side = side
        self._items: list[ParseProblem] = []

    def add(self, message: str, path: str) -> None:
        self._items.append(ParseProblem(message=message, path=path, side=self.side))

    @property
    def items(self) -> tuple[ParseProblem, ...]:
        return tuple(self._items)


@dataclass
class TurnBuilder:
    """Accumulates one model turn while walking its blocks, items or parts."""

    texts: list[str] = field(default_factory=list)
    calls: list[WireToolCall] = field(default_factory=list)
    opaque: list[Opaque] = field(default_factory=list)

    def turn(self) -> Turn:
        # Text pieces of one turn are joined as the SDKs' `.text` helpers do: with nothing.
        return Turn(text="".join(self.texts), calls=tuple(self.calls), opaque=tuple(self.opaque))


def obj(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def text_of(value: Any) -> str:
    return value if isinstance(value, str) else ""


def opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def opt_bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def kind_of(value: Any) -> str | None:
    """The `type` of a block/item, or None."""
    data = obj(value)
    return opt_str(data.get("type")) if data is not None else None


def compact(value: Any) -> str:
    """Compact JSON, as the SDKs send it (non-ASCII kept)."""
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def size_bytes(body: Any) -> int:
    return len(compact(body).encode("utf-8"))


def content_text(value: Any) -> str:
    """A result's content as text: a string as is, anything structured as compact JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else compact(value)


def decode_arguments(raw: Any, path: str, problems: Problems) -> Any:
    """Tool arguments sent as a JSON string, decoded. An empty string means no arguments
    (the Anthropic SDK and OpenAI streams both produce it for argument-less tools)."""
    if not isinstance(raw, str):
        return raw
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        problems.add(f"tool arguments are not valid JSON ({exc.msg}): {raw[:80]!r}", path)
        return raw


def flat_usage(value: Any, prefix: str = "") -> dict[str, int]:
    """Every integer in a usage block, nested keys joined with dots
    (`output_tokens_details.reasoning_tokens`); strings and lists are left out."""
    out: dict[str, int] = {}
    for key, item in (obj(value) or {}).items():
        name = f"{prefix}{key}"
        if isinstance(item, bool):
            continue
        if isinstance(item, int):
            out[name] = item
        elif isinstance(item, dict):
            out.update(flat_usage(item, f"{name}."))
    return out


def picked(body: Mapping[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    return {k: body[k] for k in keys if k in body}


def empty_request(api: ApiName, body: Any, problems: Problems) -> WireRequest:
    """The request when its body is not a JSON object at all."""
    problems.add(f"request body is not a JSON object ({type(body).__name__})", "")
    return WireRequest(
        api=api,
        model="",
        stream=False,
        declared_tools=(),
        tool_choice="unset",
        tool_choice_name=None,
        system="",
        messages=(),
        size_bytes=size_bytes(body) if body is not None else 0,
    )


def envelope_error(body: Any, type_keys: tuple[str, ...]) -> tuple[str | None, str | None]:
    """(message, type) from a provider error envelope `{"error": {"message": …}}` — also
    inside a list (Gemini's JSON-array stream) — or (None, None)."""
    if isinstance(body, list) and body:
        body = body[0]
    error = obj((obj(body) or {}).get("error"))
    if error is None:
        return None, None
    kind = next((v for k in type_keys if isinstance(v := error.get(k), str | int)), None)
    return opt_str(error.get("message")), None if kind is None else str(kind)


def json_body(reply: HttpReply, problems: Problems) -> Reassembled | None:
    """A non-streamed 2xx body, which must be a JSON object."""
    body = obj(reply.body)
    if body is None:
        problems.add("response body is not a JSON object", "")
        return None
    return Reassembled(body=body)


def unreadable(reply: HttpReply) -> WireResponse:
    return WireResponse(status=reply.status, error=reply.transport_error, raw=reply.body)
