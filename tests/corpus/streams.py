"""A raw-HTTP client that stops reading a stream at its terminal event and closes it.

The shape of hand-written SSE readers (and of several SDK-less clients) that `break` out of
their line loop as soon as the protocol says the message is over — Anthropic's
`message_delta` carrying the `stop_reason`, Responses' `response.completed`, Gemini's chunk
with a `finishReason` — and leave the `with client.stream(...)` block, which closes the
connection before the server has sent its last bytes. The loop's decisions are the reference
loop's (`run_loop`); only the transport differs, so it must be judged exactly as the SDK loop.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2

from harness.loop.adapters import ProviderCallError, Request, Turn
from harness.loop.contract import LoopCall, LoopResult
from harness.loop.reference import run_loop
from tests.endpoint.raw_loop import ANTHROPIC_VERSION, accumulate_anthropic, gemini_body


def stream_closed_at_terminal_event(call: LoopCall) -> LoopResult:
    with httpx2.Client(timeout=60) as http:
        return run_loop(_EarlyCloser(call, http), call)


def _terminal(provider: str, event: Any) -> bool:
    if not isinstance(event, dict):
        return False
    if provider == "anthropic":
        return event.get("type") == "message_delta" and bool(
            event.get("delta", {}).get("stop_reason")
        )
    if provider == "openai":
        return event.get("type") == "response.completed"
    return any(c.get("finishReason") for c in event.get("candidates", []))


class _EarlyCloser:
    def __init__(self, call: LoopCall, http: httpx2.Client) -> None:
        self.call, self.http = call, http

    def send(self, request: Request[Any]) -> Turn[Any]:
        url, body, headers = self._spelled(request)
        events = list(self._events_until_terminal(url, body, headers))
        return self._turn(events)

    def _events_until_terminal(self, url: str, body: Any, headers: dict[str, str]) -> Iterator[Any]:
        body = json.loads(json.dumps(body, default=dict))
        try:
            with self.http.stream("POST", url, json=body, headers=headers) as response:
                if response.status_code >= 400:
                    response.read()
                    raise ProviderCallError(f"HTTP {response.status_code}: {response.text[:300]}")
                for line in response.iter_lines():
                    if not line.startswith("data:"):
                        continue
                    event = json.loads(line[5:].strip())
                    yield event
                    if _terminal(self.call.provider, event):
                        break  # leaving the block closes the connection here
        except httpx2.HTTPError as exc:
            raise ProviderCallError(f"{type(exc).__name__}: {exc}") from exc

    def _spelled(self, request: Request[Any]) -> tuple[str, Any, dict[str, str]]:
        call = self.call
        if call.provider == "anthropic":
            from harness.loop.adapters.anthropic import request_to_anthropic

            body = {**request_to_anthropic(request, model=call.model), "stream": True}
            headers = {"x-api-key": call.api_key, "anthropic-version": ANTHROPIC_VERSION}
            return f"{call.base_url}/v1/messages", body, headers
        if call.provider == "openai":
            from harness.loop.adapters.openai import request_to_openai

            body = {**request_to_openai(request, model=call.model), "stream": True}
            return f"{call.base_url}/responses", body, {"authorization": f"Bearer {call.api_key}"}
        from harness.loop.adapters.gemini import fit_request

        wire = fit_request(request, call.request_size_limit)
        url = f"{call.base_url}/v1beta/models/{call.model}:streamGenerateContent?alt=sse"
        return url, gemini_body(wire.contents, wire.config), {"x-goog-api-key": call.api_key}

    def _turn(self, events: list[Any]) -> Turn[Any]:
        if self.call.provider == "anthropic":
            from anthropic.types import Message

            from harness.loop.adapters.anthropic import turn_from_anthropic

            return turn_from_anthropic(Message.model_validate(accumulate_anthropic(iter(events))))
        if self.call.provider == "openai":
            from openai.types.responses import Response

            from harness.loop.adapters.openai import turn_from_openai

            return turn_from_openai(Response.model_validate(events[-1]["response"]))
        from google.genai import types

        from harness.loop.adapters.gemini import merge_chunks, turn_from_gemini

        chunks = [types.GenerateContentResponse.model_validate(e) for e in events]
        return turn_from_gemini(merge_chunks(chunks))
