"""Neutral trace values. Wire parsers (one module per format) build them from captured
exchanges; checks read only these (plus the raw exchange, for evidence).

JSON paths (`path`) point into the request or response body as sent, e.g.
`messages[3].content[1]` or `input[5]`, so a finding can say exactly where.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

ApiName: TypeAlias = Literal["anthropic", "openai-responses", "openai-chat", "gemini"]
ToolChoice: TypeAlias = Literal["auto", "none", "required", "named", "unset"]
OpaqueKind: TypeAlias = Literal[
    "reasoning", "thinking", "redacted_thinking", "thought_signature", "thought"
]


@dataclass(frozen=True, kw_only=True)
class WireToolCall:
    """A tool request. `id` is the pairing key (Anthropic tool_use.id, OpenAI call_id, Chat
    tool_calls[].id, Gemini functionCall.id — None when Gemini gave none). `item_id` is
    OpenAI's `fc_…` item id. `arguments` is decoded when it was a JSON string."""

    id: str | None
    name: str
    arguments: Any
    path: str
    item_id: str | None = None
    signature: str | None = None  # Gemini thoughtSignature on this part


@dataclass(frozen=True, kw_only=True)
class WireToolResult:
    call_id: str | None
    name: str | None  # Gemini functionResponse.name
    content: str  # text of the result (JSON-encoded when it was structured)
    is_error: bool
    path: str


@dataclass(frozen=True, kw_only=True)
class Opaque:
    """A reasoning item, thinking block or signature: must travel back unchanged."""

    kind: OpaqueKind
    id: str | None  # OpenAI rs_… id
    token: str | None  # encrypted_content / signature / thoughtSignature
    text: str | None  # thinking text or summary
    path: str
    raw: Any = None  # the item/block exactly as on the wire
    # Other tokens the same reply gave for this item: a Responses stream re-encrypts the
    # reasoning in each event that carries it (`output_item.added`, `.done`, `completed`), and
    # the API accepts any of them back (realwire2 `…stream_encrypted_reasoning_resent…`).
    alternates: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class WireMessage:
    """One message of the request's conversation.

    role `user`: the person's text. `model`: a model turn (text, calls, opaque items; for
    OpenAI Responses a run of consecutive output items). `tool`: tool results (Anthropic's user
    message holding tool_result blocks — `results_first` says whether they came before any text;
    OpenAI's run of function_call_output items; Chat's run of `tool` messages; Gemini's user
    content of functionResponse parts)."""

    role: Literal["user", "model", "tool"]
    text: str = ""
    calls: tuple[WireToolCall, ...] = ()
    results: tuple[WireToolResult, ...] = ()
    opaque: tuple[Opaque, ...] = ()
    results_first: bool = True
    path: str = ""
    raw: Any = None  # the message/content/items exactly as on the wire


@dataclass(frozen=True, kw_only=True)
class WireRequest:
    api: ApiName
    model: str
    stream: bool
    declared_tools: tuple[str, ...]
    tool_choice: ToolChoice
    tool_choice_name: str | None  # for `named` (or Gemini ANY with one allowed name)
    system: str
    messages: tuple[WireMessage, ...]
    store: bool | None = None  # OpenAI Responses; None when absent
    previous_response_id: str | None = None
    include: tuple[str, ...] = ()
    parallel_tool_calls: bool | None = None
    automatic_function_calling: bool = False  # Gemini: the SDK's `afc` client header
    size_bytes: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class WireResponse:
    status: int | None
    text: str = ""
    calls: tuple[WireToolCall, ...] = ()
    opaque: tuple[Opaque, ...] = ()
    stop_reason: str | None = None
    usage: Mapping[str, int] = field(default_factory=dict)
    error: str | None = None  # the provider's error message, or a transport error
    error_type: str | None = None
    candidates: int = 1  # Gemini: responses per call
    streamed: bool = False
    id: str | None = None  # msg_… / resp_… / chatcmpl-… / Gemini responseId
    raw: Any = None  # the turn as the model gave it (Anthropic content, OpenAI output, ...)


@dataclass(frozen=True, kw_only=True)
class ParseProblem:
    """Something the parser could not read (an unknown item type, a malformed body). Never
    dropped silently: checks turn it into a finding."""

    message: str
    path: str
    side: Literal["request", "response", "exchange"] = "request"  # which body `path` is in


@dataclass(frozen=True, kw_only=True)
class WireCall:
    """One model call: the request and its response, numbered from 1 in the run."""

    number: int
    url: str
    request: WireRequest
    response: WireResponse
    problems: tuple[ParseProblem, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Trace:
    calls: tuple[WireCall, ...]
    problems: tuple[ParseProblem, ...] = ()
