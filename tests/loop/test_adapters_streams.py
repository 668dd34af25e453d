"""Broken or unfinished streams through the real SDKs (an httpx2 transport serves the bytes):
the loop reports them in `LoopResult.error` and never raises or invents an answer (L15)."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2
import openai
import pytest
from google import genai

from harness.loop.contract import LoopCall, ProviderName
from harness.loop.reference import reference_loop

GARBAGE = {
    "anthropic": "event: message_start\ndata: {not json\n\n",
    "openai": "event: response.created\ndata: {not json\n\n",
    "gemini": "data: {not json\n\n",
}
OUT_OF_ORDER = (
    'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
    '"content_block":{"type":"text","text":""}}\n\n'
)
UNFINISHED = {
    "anthropic": 'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1",'
    '"type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,'
    '"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":0}}}\n\n',
    "openai": 'event: response.created\ndata: {"type":"response.created","sequence_number":0,'
    '"response":{"id":"resp_1","object":"response","created_at":1,"model":"m",'
    '"status":"in_progress","output":[],"parallel_tool_calls":true,"tool_choice":"auto",'
    '"tools":[]}}\n\n',
    "gemini": "",
}


def client(provider: ProviderName, body: str) -> Any:
    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=body.encode()
        )

    http = httpx2.Client(transport=httpx2.MockTransport(answer))
    if provider == "anthropic":
        return anthropic.Anthropic(api_key="dummy", http_client=http, max_retries=0)
    if provider == "openai":
        return openai.OpenAI(api_key="dummy", http_client=http, max_retries=0)
    options = genai.types.HttpOptions(base_url="http://stream.invalid", httpx_client=http)
    return genai.Client(api_key="dummy", http_options=options)


def run(provider: ProviderName, body: str) -> tuple[str, str | None]:
    call = LoopCall(
        provider=provider,
        client=client(provider, body),
        model="model-test",
        system="Be brief.",
        history=(),
        message="hi",
        tools=(),
        max_rounds=2,
        stream=True,
    )
    result = reference_loop(call)
    return result.answer, result.error


@pytest.mark.parametrize("provider", ["anthropic", "openai", "gemini"])
def test_a_stream_that_is_not_json_is_reported(provider: ProviderName) -> None:
    answer, error = run(provider, GARBAGE[provider])
    assert answer == ""
    assert error is not None and error.startswith(f"{provider} call 1 failed:")


def test_anthropic_events_out_of_order_are_reported() -> None:
    answer, error = run("anthropic", OUT_OF_ORDER)
    assert answer == ""
    assert error is not None and "without a message_start event" in error


@pytest.mark.parametrize(
    ("provider", "problem"),
    [
        ("anthropic", "returned an empty reply"),
        ("openai", "ended without a response.completed event"),
        ("gemini", "returned an empty reply"),
    ],
)
def test_an_unfinished_stream_is_reported(provider: ProviderName, problem: str) -> None:
    answer, error = run(provider, UNFINISHED[provider])
    assert answer == ""
    assert error is not None and problem in error
