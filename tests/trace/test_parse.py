"""Entry points: routing by URL, whole exchanges, traces, and cassette interactions."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from harness.capture import SseEvent
from harness.cassettes.read import RecordedExchange
from harness.trace.model import ApiName
from harness.trace.parse import api_of, exchange_from_recorded, parse_exchange, parse_trace
from tests.trace.exchanges import exchange

GOOGLE = "https://generativelanguage.googleapis.com/v1beta/models"
VERTEX = "https://aiplatform.googleapis.com/v1beta1/projects/p/locations/l/publishers/google/models"
AZURE = "https://x.openai.azure.com/openai/deployments/d"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://api.anthropic.com/v1/messages", "anthropic"),
        ("https://api.anthropic.com/v1/messages?beta=true", "anthropic"),
        ("http://127.0.0.1:8123/s/demo/r/run-1/v1/messages", "anthropic"),
        ("https://api.openai.com/v1/responses", "openai-responses"),
        ("http://127.0.0.1:8123/s/demo/r/run-1/v1/chat/completions", "openai-chat"),
        (f"{AZURE}/chat/completions?api-version=1", "openai-chat"),
        (f"{GOOGLE}/gemini-2.5-flash:generateContent", "gemini"),
        ("http://h/s/a/r/b/v1/models/gemini-3-pro:streamGenerateContent?alt=sse", "gemini"),
        (f"{VERTEX}/g:generateContent", "gemini"),
        ("https://api.anthropic.com/v1/messages/count_tokens", None),
        ("https://api.openai.com/v1/models", None),
        (f"{GOOGLE}/gemini-2.5-flash:countTokens", None),
        ("not a url", None),
    ],
)
def test_api_of(url: str, expected: ApiName | None) -> None:
    assert api_of(url) == expected


def test_no_response_at_all() -> None:
    got = parse_exchange(3, exchange("anthropic", {}, status=None, error="ConnectError: refused"))
    assert (got.number, got.response.status, got.response.error) == (
        3,
        None,
        "ConnectError: refused",
    )


def test_a_url_that_is_no_model_call_is_the_callers_error() -> None:
    odd = exchange("anthropic", {})
    with pytest.raises(ValueError, match="not a model-call URL"):
        parse_exchange(1, replace(odd, url="https://example.com/x"))
    assert parse_exchange(1, odd, api="openai-chat").request.api == "openai-chat"


def test_trace_numbers_model_calls_and_notes_the_rest() -> None:
    first = exchange("openai-chat", {"messages": []})
    other = replace(first, url="https://api.openai.com/v1/models")
    trace = parse_trace([first, other, exchange("gemini", {"contents": []})])
    assert [(c.number, c.request.api) for c in trace.calls] == [(1, "openai-chat"), (2, "gemini")]
    assert [(p.side, p.path) for p in trace.problems] == [
        ("exchange", "https://api.openai.com/v1/models")
    ]


def recorded(content_type: str, text: str, status: int = 200) -> RecordedExchange:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    return RecordedExchange(
        index=4,
        method="POST",
        uri="https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent",
        request_headers={"X-Goog-Api-Client": ("google-genai-sdk/1.0+afc",)},
        request_json=body,
        request_text=json.dumps(body),
        status=status,
        response_headers={"Content-Type": (content_type,)},
        response_text=text,
        response_json=None if "event-stream" in content_type else _maybe_json(text),
    )


def _maybe_json(text: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


CHUNK = {"candidates": [{"content": {"role": "model", "parts": [{"text": "hello"}]}}]}


def test_recorded_sse_is_split_into_events() -> None:
    got = exchange_from_recorded(
        recorded("text/event-stream", f"data: {json.dumps(CHUNK)}\r\n\r\n")
    )
    assert (got.seq, got.response_body, got.events) == (
        5,
        None,
        (SseEvent(event=None, data=CHUNK),),
    )
    assert got.request_headers == {"x-goog-api-client": "google-genai-sdk/1.0+afc"}
    call = parse_exchange(1, got)
    assert (call.request.automatic_function_calling, call.response.text) == (True, "hello")


def test_recorded_json_array_stream_and_text_bodies() -> None:
    got = exchange_from_recorded(recorded("application/json", json.dumps([CHUNK, CHUNK])))
    assert (got.events, got.response_body) == (None, [CHUNK, CHUNK])
    assert parse_exchange(1, got).response.text == "hellohello"
    broken = exchange_from_recorded(recorded("application/json", "[{oops", status=500))
    assert broken.response_body == "[{oops"
    failed = parse_exchange(1, broken)
    assert (failed.response.error, [p.message for p in failed.problems]) == (
        "[{oops",
        ["HTTP 500 body is not the provider's error envelope"],
    )


def test_an_exchange_is_parsed_once_per_call_number_and_forgotten_with_it() -> None:
    import dataclasses
    import gc

    from harness.capture import Exchange
    from harness.trace import parse

    exchange = Exchange(
        seq=1,
        method="POST",
        url="https://api.anthropic.com/v1/messages",
        request_headers={},
        request_body={"model": "m", "max_tokens": 1, "messages": []},
        status=200,
        response_headers={},
        response_body={"content": [], "stop_reason": "end_turn"},
        events=None,
        error=None,
        started=0.0,
        elapsed=0.0,
    )
    first = parse.parse_exchange(1, exchange)
    assert parse.parse_exchange(1, exchange) is first
    assert parse.parse_exchange(2, exchange) is not first and first.number == 1
    other = dataclasses.replace(
        exchange, request_body={"model": "other", "max_tokens": 1, "messages": []}
    )
    assert parse.parse_exchange(1, other).request.model == "other"
    keys = {(id(exchange), 1, None), (id(exchange), 2, None), (id(other), 1, None)}
    assert keys <= set(parse._PARSED)
    del exchange, other
    gc.collect()
    assert not keys & set(parse._PARSED)
