"""Entry points: which API a URL is, one exchange → `WireCall`, a run's exchanges → `Trace`,
and a cassette interaction → a capture `Exchange` so recorded files read the same way."""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from harness.capture import Exchange, SseEvent, parse_sse
from harness.cassettes.read import RecordedExchange
from harness.trace import anthropic, gemini, gemini_response, openai_chat, openai_responses
from harness.trace.common import (
    HttpReply,
    HttpRequest,
    Problems,
    RequestSpelling,
    envelope_error,
)
from harness.trace.model import (
    ApiName,
    ParseProblem,
    Trace,
    WireCall,
    WireRequest,
    WireResponse,
)

GEMINI_ACTION = re.compile(r"/models/[^/:]+:(?:generateContent|streamGenerateContent)$")
# Path endings per API; a prefix (`/s/<scenario>/r/<run>`, a proxy) may come before them.
PATH_SUFFIXES: tuple[tuple[str, ApiName], ...] = (
    ("/v1/messages", "anthropic"),
    ("/chat/completions", "openai-chat"),
    ("/responses", "openai-responses"),
)


class EventLike(Protocol):
    @property
    def event(self) -> str | None: ...
    @property
    def data(self) -> Any: ...


class ExchangeLike(Protocol):
    """What the parsers read from an exchange (`harness.capture.Exchange` fits)."""

    @property
    def url(self) -> str: ...
    @property
    def request_headers(self) -> Mapping[str, str]: ...
    @property
    def request_body(self) -> Any: ...
    @property
    def status(self) -> int | None: ...
    @property
    def response_body(self) -> Any: ...
    @property
    def events(self) -> Sequence[EventLike] | None: ...
    @property
    def error(self) -> str | None: ...


@dataclass(frozen=True, kw_only=True)
class WireFormat:
    request: Callable[[HttpRequest, Problems], WireRequest]
    response: Callable[[HttpReply, Problems], WireResponse]
    error_type_keys: tuple[str, ...]
    spelling: RequestSpelling  # equivalent ways to say one request (the drift check)


FORMATS: dict[ApiName, WireFormat] = {
    "anthropic": WireFormat(
        request=anthropic.request_from_anthropic,
        response=anthropic.response_from_anthropic,
        error_type_keys=anthropic.ERROR_TYPE_KEYS,
        spelling=anthropic.REQUEST_SPELLING,
    ),
    "openai-responses": WireFormat(
        request=openai_responses.request_from_openai_responses,
        response=openai_responses.response_from_openai_responses,
        error_type_keys=openai_responses.ERROR_TYPE_KEYS,
        spelling=openai_responses.REQUEST_SPELLING,
    ),
    "openai-chat": WireFormat(
        request=openai_chat.request_from_openai_chat,
        response=openai_chat.response_from_openai_chat,
        error_type_keys=openai_chat.ERROR_TYPE_KEYS,
        spelling=openai_chat.REQUEST_SPELLING,
    ),
    "gemini": WireFormat(
        request=gemini.request_from_gemini,
        response=gemini_response.response_from_gemini,
        error_type_keys=gemini.ERROR_TYPE_KEYS,
        spelling=gemini.REQUEST_SPELLING,
    ),
}


def api_of(url: str) -> ApiName | None:
    """The API a request URL calls, from its path alone (query strings are ignored)."""
    path = urlsplit(url).path.rstrip("/")
    for suffix, api in PATH_SUFFIXES:
        if path.endswith(suffix):
            return api
    return "gemini" if GEMINI_ACTION.search(path) else None


# A cell's exchanges are read by several views (checks, verdicts, outcome, table, results);
# each exchange is parsed once per call number and the immutable result shared. Entries live
# as long as their exchange (keyed by identity: exchanges hold dicts and cannot be hashed).
_PARSED: dict[tuple[int, int, str | None], tuple[weakref.ref[Any], WireCall]] = {}


def parse_exchange(number: int, exchange: ExchangeLike, api: ApiName | None = None) -> WireCall:
    """One model call. Bad data becomes `ParseProblem`s, never an exception; a URL that is
    no model call (and no `api` given) is the caller's error (`ValueError`)."""
    key = (id(exchange), number, api)
    hit = _PARSED.get(key)
    if hit is not None and hit[0]() is exchange:
        return hit[1]
    call = _parse_exchange(number, exchange, api)

    def forget(_gone: weakref.ref[Any]) -> None:
        _PARSED.pop(key, None)

    try:
        ref = weakref.ref(exchange, forget)
    except TypeError:  # not weak-referenceable: parse again next time
        return call
    _PARSED[key] = (ref, call)
    return call


def _parse_exchange(number: int, exchange: ExchangeLike, api: ApiName | None) -> WireCall:
    api = api or api_of(exchange.url)
    if api is None:
        raise ValueError(f"not a model-call URL: {exchange.url}")
    wire = FORMATS[api]
    request_problems, response_problems = Problems("request"), Problems("response")
    request = wire.request(
        HttpRequest(
            url=exchange.url,
            headers={k.lower(): v for k, v in exchange.request_headers.items()},
            body=exchange.request_body,
        ),
        request_problems,
    )
    reply = HttpReply(
        status=exchange.status,
        body=exchange.response_body,
        events=None
        if exchange.events is None
        else tuple(SseEvent(event=e.event, data=e.data) for e in exchange.events),
        transport_error=exchange.error,
    )
    response = _response(wire, reply, response_problems)
    return WireCall(
        number=number,
        url=exchange.url,
        request=request,
        response=response,
        problems=request_problems.items + response_problems.items,
    )


def _response(wire: WireFormat, reply: HttpReply, problems: Problems) -> WireResponse:
    if reply.status is None:
        return WireResponse(status=None, error=reply.transport_error or "no response")
    if reply.status >= 400:
        return _failed(wire, reply, problems)
    return wire.response(reply, problems)


def _failed(wire: WireFormat, reply: HttpReply, problems: Problems) -> WireResponse:
    """A non-2xx reply: the message and type from the provider's error envelope."""
    body = reply.body
    if body is None and reply.events:
        body = reply.events[0].data
    message, kind = envelope_error(body, wire.error_type_keys)
    if message is None:
        problems.add(f"HTTP {reply.status} body is not the provider's error envelope", "")
        text = body if isinstance(body, str) else None
        message = (text or "").strip()[:300] or reply.transport_error or f"HTTP {reply.status}"
    return WireResponse(
        status=reply.status,
        error=message,
        error_type=kind,
        streamed=reply.events is not None,
        raw=body,
    )


def parse_trace(exchanges: Iterable[ExchangeLike]) -> Trace:
    """Every model call of a run, numbered from 1; other requests are noted as problems."""
    calls: list[WireCall] = []
    problems: list[ParseProblem] = []
    for exchange in exchanges:
        if api_of(exchange.url) is None:
            problems.append(
                ParseProblem(
                    message="not a model call; skipped", path=exchange.url, side="exchange"
                )
            )
            continue
        calls.append(parse_exchange(len(calls) + 1, exchange))
    return Trace(calls=tuple(calls), problems=tuple(problems))


def exchange_from_recorded(recorded: RecordedExchange) -> Exchange:
    """A cassette interaction as a capture `Exchange`: JSON decoded, SSE split into events,
    a Gemini JSON-array stream decoded as its list."""
    sse = recorded.response_json is None and _is_sse(recorded)
    events = tuple(parse_sse(recorded.response_text)) if sse else None
    return Exchange(
        seq=recorded.index + 1,
        method=recorded.method,
        url=recorded.uri,
        request_headers=_joined(recorded.request_headers),
        request_body=_json_or_text(recorded.request_json, recorded.request_text),
        status=recorded.status,
        response_headers=_joined(recorded.response_headers),
        response_body=None
        if sse
        else _json_or_text(recorded.response_json, recorded.response_text),
        events=events,
        error=None,
        started=0.0,
        elapsed=0.0,
    )


def _is_sse(recorded: RecordedExchange) -> bool:
    return "text/event-stream" in (recorded.header("content-type") or "")


def _joined(headers: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    return {k.lower(): ", ".join(v) for k, v in headers.items()}


def _json_or_text(decoded: Any, text: str) -> Any:
    if decoded is not None or not text.strip():
        return decoded
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def stream_completed(url: str, events: tuple[SseEvent, ...]) -> bool:
    """The stream's terminal event arrived, by its protocol (each provider's
    `TERMINAL_*` constant): the reply is whole, whoever closed the connection afterwards."""
    api = api_of(url)
    if api is None:
        return False
    check = {
        "anthropic": anthropic.stream_completed,
        "openai-responses": openai_responses.stream_completed,
        "openai-chat": openai_chat.stream_completed,
        "gemini": gemini_response.stream_completed,
    }[api]
    return check(events)
