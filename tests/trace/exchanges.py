"""Hand-built exchanges for the wire-parser tests."""

from __future__ import annotations

from typing import Any

from harness.capture import Exchange, SseEvent
from harness.trace.model import WireCall
from harness.trace.parse import parse_exchange

URLS = {
    "anthropic": "http://127.0.0.1:9/s/demo/r/run/v1/messages",
    "openai-responses": "http://127.0.0.1:9/s/demo/r/run/v1/responses",
    "openai-chat": "http://127.0.0.1:9/s/demo/r/run/v1/chat/completions",
    "gemini": "http://127.0.0.1:9/s/demo/r/run/v1beta/models/gemini-3-flash:generateContent",
    "gemini-stream": "http://127.0.0.1:9/v1beta/models/gemini-3-flash:streamGenerateContent?alt=sse",
}


def exchange(
    api: str,
    request: Any = None,
    response: Any = None,
    *,
    status: int | None = 200,
    events: list[tuple[str | None, Any]] | None = None,
    error: str | None = None,
    headers: dict[str, str] | None = None,
) -> Exchange:
    return Exchange(
        seq=1,
        method="POST",
        url=URLS[api],
        request_headers=headers or {},
        request_body=request,
        status=status,
        response_headers={},
        response_body=response,
        events=None if events is None else tuple(SseEvent(event=e, data=d) for e, d in events),
        error=error,
        started=0.0,
        elapsed=0.0,
    )


NO_BODY: Any = object()


def call(api: str, request: Any = NO_BODY, response: Any = None, **kwargs: Any) -> WireCall:
    """Parse one hand-built exchange. Without a request body: `{}`; without a response
    (body or events): no response arrived, so only the request is read."""
    if response is None and kwargs.get("events") is None:
        kwargs.setdefault("status", None)
    body = {} if request is NO_BODY else request
    return parse_exchange(1, exchange(api, body, response, **kwargs))


def problems(call: WireCall) -> list[str]:
    return [f"{p.side}:{p.path}: {p.message}" for p in call.problems]
