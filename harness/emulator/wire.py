"""What every emulated API shares: the request as received, the reply to send, an API error,
and the interface each provider module implements (`WireApi`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.emulator.openai_store import RunResponses, responses_of
from harness.emulator.tokens import Minter
from harness.scenario.model import FaultKind, ScriptedTurn, ScriptOptions


@dataclass(frozen=True, kw_only=True)
class ApiError:
    """A rejection as the real API words it. `kind` is the provider's error type/status
    (`invalid_request_error`, `INVALID_ARGUMENT`, …); `code` and `param` are OpenAI's."""

    status: int
    message: str
    kind: str = ""
    code: str | None = None
    param: str | None = None
    rule: str = ""  # our catalogue id (E1, O3, G1, …), for the log and tests; never sent
    headers: Mapping[str, str] = field(default_factory=dict)  # e.g. retry-after


@dataclass(frozen=True, kw_only=True)
class Reply:
    """An HTTP reply. A streamed reply is a list of chunks written (and flushed) one by one."""

    status: int
    headers: Mapping[str, str]
    chunks: Sequence[bytes]
    streamed: bool = False


@dataclass(frozen=True, kw_only=True)
class Position:
    """Where a request stands in the script, read from the request alone (stateless play).

    `user_text`: the last user text in the request (tells which user message this query is);
    `model_turns`: model turns after it (the index of the turn to play next);
    `tools_forbidden`: the request forbids tool calls (the provider's "none") or declares none.
    """

    user_text: str | None
    model_turns: int
    tools_forbidden: bool


@dataclass(frozen=True, kw_only=True)
class Step:
    """What to answer: a scripted turn (or the closing text as an answer turn)."""

    turn: ScriptedTurn
    user_index: int
    turn_index: int  # the model call's place in the query (ids follow it); -1: the closing
    note: str | None = None  # set when the request ran past the script (`script.exhausted`)


@dataclass(frozen=True, kw_only=True)
class Context:
    """Facts about the request the provider module needs to answer it."""

    model: str
    stream: bool
    options: ScriptOptions
    minter: Minter
    query: Mapping[str, str] = field(default_factory=dict)
    # The run this request belongs to and the emulator that serves it: what an API that keeps
    # state between requests (OpenAI Responses under `store: true`) keeps it by.
    run: str = ""
    store_owner: object | None = None

    @property
    def responses(self) -> RunResponses | None:
        """This run's stored responses (`openai_store`); None outside an emulator, where
        nothing is kept and every `previous_response_id` is unknown."""
        if self.store_owner is None:
            return None
        return responses_of(self.store_owner, self.run)


class WireApi(Protocol):
    """One emulated API. Implementations live in one module per wire format."""

    name: str
    max_body_bytes: int  # the real API's request-size limit; above it, `too_large`

    def validate(self, body: Any, ctx: Context) -> ApiError | None:
        """The error the real API gives this request, or None if it accepts it."""

    def position(self, body: Mapping[str, Any]) -> Position:
        """Where in the script this (already valid) request stands."""

    def render(self, step: Step, body: Mapping[str, Any], ctx: Context) -> Reply:
        """The provider's exact response (JSON or stream) for this step."""

    def error(self, err: ApiError, ctx: Context | None = None) -> Reply:
        """The provider's error envelope for `err` (status, headers such as retry-after)."""

    def malformed(self, detail: str, raw: bytes | None = None) -> ApiError:
        """The real API's answer to a body that is not valid JSON."""

    def fault(
        self, kind: FaultKind, retry_after: float | None, ctx: Context | None = None
    ) -> ApiError:
        """The real API's error for an injected fault: `rate_limit` (429), `server_error`
        (500) or `overloaded` (Anthropic 529; the others' 503)."""

    def too_large(self, limit: int, size: int) -> ApiError:
        """The real API's 413 for a body over `limit` bytes (`size`: as declared, or seen)."""

    def rejected(self, message: str, status: int = 400) -> ApiError:
        """A problem the emulator finds itself (a limit of its own, or a failure of its own),
        worded by `message` but in this API's envelope, so every SDK reads it as an API error."""


def text_of(value: Any) -> str | None:
    """A wire field read as a name, id or type tag: the string, or None for any other JSON
    value, so a hostile body (an object where an id goes) can be hashed and compared safely."""
    return value if isinstance(value, str) else None


def json_reply(status: int, payload: Any, headers: Mapping[str, str] | None = None) -> Reply:
    import json

    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return Reply(
        status=status,
        headers={"content-type": "application/json", **(headers or {})},
        chunks=(body,),
    )


def sse_reply(frames: Sequence[bytes], headers: Mapping[str, str] | None = None) -> Reply:
    return Reply(
        status=200,
        headers={
            "content-type": "text/event-stream; charset=utf-8",
            "cache-control": "no-cache",
            **(headers or {}),
        },
        chunks=tuple(frames),
        streamed=True,
    )
