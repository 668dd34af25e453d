"""The emulated Anthropic Messages API: the Message JSON and stream for a step, the error
envelope and the faults."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.emulator import anthropic_validate as v
from harness.emulator.anthropic_messages import API
from harness.emulator.wire import ApiError, Reply, Step
from harness.scenario.model import ScriptedCall, ScriptedTurn
from tests.emulator.anthropic_fixtures import THINKING, ctx, request, round_two, without


def step(*calls: ScriptedCall, text_: str = "Let me check.", turn_index: int = 0) -> Step:
    return Step(turn=ScriptedTurn(text=text_, calls=calls), user_index=0, turn_index=turn_index)


PARIS = ScriptedCall(name="get_weather", arguments={"city": "Paris"})
OSLO = ScriptedCall(name="get_weather", arguments={"city": "Oslo"})
NOW = ScriptedCall(name="get_time", arguments={})


def body_of(reply: Reply) -> Any:
    return json.loads(b"".join(reply.chunks))


def test_message_json_for_a_call_turn() -> None:
    reply = API.render(step(PARIS, OSLO), request(), ctx())
    msg = body_of(reply)
    assert reply.status == 200 and not reply.streamed
    assert (
        reply.headers["request-id"].startswith("req_011C")
        and len(reply.headers["request-id"]) == 28
    )
    assert list(msg) == [
        "model",
        "id",
        "type",
        "role",
        "content",
        "stop_reason",
        "stop_sequence",
        "stop_details",
        "usage",
    ]
    assert msg["id"].startswith("msg_01") and len(msg["id"]) == 28
    assert (msg["type"], msg["role"], msg["model"]) == ("message", "assistant", "claude-sonnet-4-5")
    assert (msg["stop_reason"], msg["stop_sequence"]) == ("tool_use", None)
    assert msg["content"][0] == {"type": "text", "text": "Let me check."}
    uses = msg["content"][1:]
    assert [u["input"] for u in uses] == [{"city": "Paris"}, {"city": "Oslo"}]
    assert all(u["id"].startswith("toolu_01") and len(u["id"]) == 30 for u in uses)
    assert uses[0]["id"] != uses[1]["id"]
    assert uses[0]["caller"] == {"type": "direct"}
    usage = msg["usage"]
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    assert usage["cache_creation"] == {
        "ephemeral_5m_input_tokens": 0,
        "ephemeral_1h_input_tokens": 0,
    }
    assert usage["service_tier"] == "standard"
    assert body_of(API.render(step(PARIS, OSLO), request(), ctx())) == msg  # deterministic


def test_answer_turn_ends_the_turn() -> None:
    msg = body_of(API.render(step(text_="Sunny in Paris.", turn_index=1), round_two(), ctx()))
    assert msg["stop_reason"] == "end_turn"
    assert msg["content"] == [{"type": "text", "text": "Sunny in Paris."}]


def test_thinking_block_comes_first_and_its_signature_validates() -> None:
    msg = body_of(API.render(step(PARIS, text_=""), request(thinking=THINKING), ctx(thinking=True)))
    first = msg["content"][0]
    assert first["type"] == "thinking" and first["thinking"] and first["signature"]
    assert [b["type"] for b in msg["content"]] == ["thinking", "tool_use"]
    assert v.signature_accepted(first["thinking"], first["signature"])
    assert not v.signature_accepted(first["thinking"] + " ", first["signature"])
    assert msg["usage"]["output_tokens_details"]["thinking_tokens"] > 0


def test_omitted_thinking_is_empty_but_signed() -> None:
    body = request(thinking={**THINKING, "display": "omitted"})
    first = body_of(API.render(step(PARIS), body, ctx(thinking=True)))["content"][0]
    assert first["type"] == "thinking" and first["thinking"] == ""
    assert v.signature_accepted("", first["signature"])


def test_no_thinking_block_when_the_request_disables_thinking() -> None:
    body = request(thinking={"type": "disabled"})
    msg = body_of(API.render(step(PARIS), body, ctx(thinking=True)))
    assert [b["type"] for b in msg["content"]] == ["text", "tool_use"]


def sse_events(reply: Reply) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in reply.chunks:
        event_line, data_line, *_ = chunk.decode().split("\n")
        assert event_line.startswith("event: ") and data_line.startswith("data: ")
        data = json.loads(data_line[len("data: ") :])
        assert data["type"] == event_line[len("event: ") :]
        events.append((data["type"], data))
    return events


def test_stream_events_in_order() -> None:
    reply = API.render(step(PARIS, NOW), request(stream=True), ctx(stream=True))
    assert reply.streamed and reply.headers["content-type"].startswith("text/event-stream")
    events = sse_events(reply)
    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert names[1:3] == ["content_block_start", "ping"]
    start = events[0][1]["message"]
    assert start["content"] == [] and start["stop_reason"] is None
    deltas: dict[int, list[dict[str, Any]]] = {}
    for name, data in events:
        if name == "content_block_delta":
            deltas.setdefault(data["index"], []).append(data["delta"])
    assert "".join(d["text"] for d in deltas[0]) == "Let me check."
    assert len(deltas[0]) > 1
    paris = [d["partial_json"] for d in deltas[1]]
    assert paris[0] == "" and len(paris) > 2 and json.loads("".join(paris)) == {"city": "Paris"}
    assert [d["partial_json"] for d in deltas[2]] == [""]  # a tool without arguments
    final = events[-2][1]
    assert final["delta"] == {
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "stop_details": None,
    }
    json_msg = body_of(API.render(step(PARIS, NOW), request(), ctx()))
    assert final["usage"]["output_tokens"] == json_msg["usage"]["output_tokens"]
    starts = [d["content_block"] for n, d in events if n == "content_block_start"]
    assert starts[1] == {**json_msg["content"][1], "input": {}}


def test_stream_of_a_thinking_block() -> None:
    reply = API.render(step(PARIS), request(thinking=THINKING), ctx(stream=True, thinking=True))
    events = sse_events(reply)
    block = next(d for n, d in events if n == "content_block_start")["content_block"]
    assert block == {"type": "thinking", "thinking": "", "signature": ""}
    kinds = [
        d["delta"]["type"] for n, d in events if n == "content_block_delta" and d["index"] == 0
    ]
    assert kinds[-1] == "signature_delta" and set(kinds[:-1]) == {"thinking_delta"}
    thinking = "".join(
        d["delta"].get("thinking", "")
        for n, d in events
        if n == "content_block_delta" and d["index"] == 0
    )
    signature = next(
        d["delta"]["signature"]
        for n, d in events
        if n == "content_block_delta" and d["delta"]["type"] == "signature_delta"
    )
    assert v.signature_accepted(thinking, signature)


# --- errors and faults ----------------------------------------------------------------------


def test_error_envelope() -> None:
    err = API.validate(without(request(), "max_tokens"), ctx())
    assert err is not None
    reply = API.error(err)
    payload = body_of(reply)
    assert reply.status == 400
    assert list(payload) == ["type", "error", "request_id"]
    assert payload["type"] == "error"
    assert payload["error"] == {
        "type": "invalid_request_error",
        "message": "max_tokens: Field required",
    }
    assert payload["request_id"] == reply.headers["request-id"]
    assert payload["request_id"].startswith("req_011C")
    assert reply.headers["x-should-retry"] == "false"


@pytest.mark.parametrize(
    ("kind", "status", "error_type", "message"),
    [
        (
            "rate_limit",
            429,
            "rate_limit_error",
            "This request would exceed your account's rate limit. Please try again later.",
        ),
        ("server_error", 500, "api_error", "Internal server error"),
        ("overloaded", 529, "overloaded_error", "Overloaded"),
    ],
)
def test_faults(kind: Any, status: int, error_type: str, message: str) -> None:
    err = API.fault(kind, 2.0)
    reply = API.error(err)
    assert (reply.status, body_of(reply)["error"]) == (
        status,
        {"type": error_type, "message": message},
    )
    assert ("retry-after" in reply.headers) == (kind == "rate_limit")
    if kind == "rate_limit":
        assert reply.headers["retry-after"] == "2"
    assert "x-should-retry" not in reply.headers


def test_rate_limit_without_retry_after() -> None:
    assert "retry-after" not in API.error(API.fault("rate_limit", None)).headers


def test_fault_kinds_without_an_error_are_refused() -> None:
    with pytest.raises(ValueError, match="stream_cut"):
        API.fault("stream_cut", None)


def test_script_errors_keep_their_kind() -> None:
    err = ApiError(status=400, message="harness emulator: …", kind="harness_script_error")
    assert body_of(API.error(err))["error"]["type"] == "harness_script_error"
