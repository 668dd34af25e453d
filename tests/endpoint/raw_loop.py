"""A loop that speaks raw HTTP with httpx (no SDK on the wire): the reference loop's decisions,
its requests spelled as JSON by hand and posted to `call.base_url` with `call.api_key`, streams
read from their SSE events. What it sends is what an SDK-less client (another language, a
framework on plain httpx) would; the endpoint must judge it exactly as the SDK loops."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2

from harness.capture import parse_sse
from harness.loop.adapters import ProviderCallError, Request, Turn
from harness.loop.contract import LoopCall, LoopResult
from harness.loop.reference import run_loop

ANTHROPIC_VERSION = "2023-06-01"


def raw_http_loop(call: LoopCall) -> LoopResult:
    adapter = {"anthropic": RawAnthropic, "openai": RawOpenAI, "gemini": RawGemini}[call.provider]
    with httpx2.Client(timeout=60) as http:
        return run_loop(adapter(call, http), call)


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value, default=dict))  # Mapping proxies of tool schemas


def _post(http: httpx2.Client, url: str, body: Any, headers: dict[str, str]) -> httpx2.Response:
    try:
        response = http.post(url, json=_json(body), headers=headers)
    except httpx2.HTTPError as exc:
        raise ProviderCallError(f"{type(exc).__name__}: {exc}") from exc
    if response.status_code >= 400:
        raise ProviderCallError(f"HTTP {response.status_code}: {response.text[:300]}")
    return response


def _events(response: httpx2.Response) -> Iterator[Any]:
    for event in parse_sse(response.text):
        yield event.data


class RawAnthropic:
    def __init__(self, call: LoopCall, http: httpx2.Client) -> None:
        self.call, self.http = call, http

    def send(self, request: Request[Any]) -> Turn[Any]:
        from anthropic.types import Message

        from harness.loop.adapters.anthropic import request_to_anthropic, turn_from_anthropic

        body = request_to_anthropic(request, model=self.call.model)
        if self.call.stream:
            body["stream"] = True
        headers = {"x-api-key": self.call.api_key, "anthropic-version": ANTHROPIC_VERSION}
        response = _post(self.http, f"{self.call.base_url}/v1/messages", body, headers)
        data = accumulate_anthropic(_events(response)) if self.call.stream else response.json()
        return turn_from_anthropic(Message.model_validate(data))


def accumulate_anthropic(events: Iterator[Any]) -> dict[str, Any]:
    """The message an Anthropic stream describes, from its events."""
    message: dict[str, Any] = {}
    partial: dict[int, str] = {}
    for event in events:
        kind = event.get("type")
        if kind == "message_start":
            message = dict(event["message"])
        elif kind == "content_block_start":
            message["content"].append(dict(event["content_block"]))
        elif kind == "content_block_delta":
            block, delta = message["content"][event["index"]], event["delta"]
            field = {
                "text_delta": "text",
                "thinking_delta": "thinking",
                "signature_delta": "signature",
            }.get(delta["type"])
            if field is not None:
                block[field] = block.get(field, "") + delta[field]
            elif delta["type"] == "input_json_delta":
                partial[event["index"]] = partial.get(event["index"], "") + delta["partial_json"]
        elif kind == "content_block_stop" and event["index"] in partial:
            message["content"][event["index"]]["input"] = json.loads(partial[event["index"]])
        elif kind == "message_delta":
            message.update(event["delta"])
            message["usage"] = {**message.get("usage", {}), **event.get("usage", {})}
    return message


class RawOpenAI:
    def __init__(self, call: LoopCall, http: httpx2.Client) -> None:
        self.call, self.http = call, http

    def send(self, request: Request[Any]) -> Turn[Any]:
        from openai.types.responses import Response

        from harness.loop.adapters.openai import request_to_openai, turn_from_openai

        body = request_to_openai(request, model=self.call.model)
        if self.call.stream:
            body["stream"] = True
        headers = {"authorization": f"Bearer {self.call.api_key}"}
        response = _post(self.http, f"{self.call.base_url}/responses", body, headers)
        if not self.call.stream:
            return turn_from_openai(Response.model_validate(response.json()))
        for data in _events(response):
            if isinstance(data, dict) and data.get("type") == "response.completed":
                return turn_from_openai(Response.model_validate(data["response"]))
        raise ProviderCallError("the stream ended without response.completed")


class RawGemini:
    def __init__(self, call: LoopCall, http: httpx2.Client) -> None:
        self.call, self.http = call, http

    def send(self, request: Request[Any]) -> Turn[Any]:
        from google.genai import types

        from harness.loop.adapters.gemini import (
            first_content,
            fit_request,
            merge_chunks,
            turn_from_gemini,
        )

        wire = fit_request(request, self.call.request_size_limit)
        body = gemini_body(wire.contents, wire.config)
        action = "streamGenerateContent?alt=sse" if self.call.stream else "generateContent"
        url = f"{self.call.base_url}/v1beta/models/{self.call.model}:{action}"
        response = _post(self.http, url, body, {"x-goog-api-key": self.call.api_key})
        if self.call.stream:
            chunks = [types.GenerateContentResponse.model_validate(d) for d in _events(response)]
            return turn_from_gemini(merge_chunks(chunks))
        reply = types.GenerateContentResponse.model_validate(response.json())
        return turn_from_gemini(first_content(reply) or types.Content(role="model", parts=[]))


def gemini_body(contents: list[Any], config: Any) -> dict[str, Any]:
    """The REST body google-genai would send for these contents and this config."""

    def dump(value: Any) -> Any:
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)

    body: dict[str, Any] = {"contents": [dump(c) for c in contents]}
    if config.system_instruction:
        body["systemInstruction"] = {"parts": [{"text": config.system_instruction}]}
    if config.tools:
        body["tools"] = [dump(t) for t in config.tools]
    if config.tool_config:
        body["toolConfig"] = dump(config.tool_config)
    body["generationConfig"] = {}  # google-genai always sends it, empty when nothing is set
    return body
