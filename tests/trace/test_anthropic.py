"""Anthropic Messages: requests, JSON responses and reassembled SSE streams."""

from __future__ import annotations

from typing import Any

import pytest

from tests.trace.exchanges import call, problems

TOOLS = [{"name": "get_weather", "input_schema": {"type": "object"}}]
USER = {"role": "user", "content": "Weather in Paris?"}
ASSISTANT = {
    "role": "assistant",
    "content": [
        {"type": "thinking", "thinking": "Let me check.", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "opaque-blob"},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}},
    ],
}


def request(**fields: Any) -> dict[str, Any]:
    return {"model": "claude-x", "max_tokens": 100, "messages": [USER], "tools": TOOLS, **fields}


@pytest.mark.parametrize(
    ("tool_choice", "expected"),
    [
        (None, ("unset", None, None)),
        ({"type": "auto"}, ("auto", None, None)),
        ({"type": "any"}, ("required", None, None)),
        ({"type": "none"}, ("none", None, None)),
        ({"type": "tool", "name": "get_weather"}, ("named", "get_weather", None)),
        ({"type": "auto", "disable_parallel_tool_use": True}, ("auto", None, False)),
        ({"type": "any", "disable_parallel_tool_use": False}, ("required", None, True)),
    ],
)
def test_tool_choice_spellings(tool_choice: Any, expected: tuple[Any, ...]) -> None:
    body = request() if tool_choice is None else request(tool_choice=tool_choice)
    got = call("anthropic", body).request
    assert (got.tool_choice, got.tool_choice_name, got.parallel_tool_calls) == expected


def test_unknown_tool_choice_is_a_problem() -> None:
    got = call("anthropic", request(tool_choice={"type": "sometimes"}))
    assert got.request.tool_choice == "unset"
    assert problems(got) == ['request:tool_choice: unknown tool_choice {"type":"sometimes"}']


@pytest.mark.parametrize(
    ("system", "expected"),
    [
        ("Be brief.", "Be brief."),
        (
            [{"type": "text", "text": "A"}, {"type": "text", "text": "B", "cache_control": {}}],
            "A\nB",
        ),
        (None, ""),
    ],
)
def test_system_string_or_text_blocks(system: Any, expected: str) -> None:
    body = request() if system is None else request(system=system)
    assert call("anthropic", body).request.system == expected


def test_request_settings() -> None:
    got = call("anthropic", request(stream=True, thinking={"type": "enabled"})).request
    assert (got.api, got.model, got.stream, got.declared_tools) == (
        "anthropic",
        "claude-x",
        True,
        ("get_weather",),
    )
    assert got.extra["thinking"] == {"type": "enabled"}
    assert got.size_bytes == len(
        '{"model":"claude-x","max_tokens":100,"messages":[{"role":"user","content":"Weather in '
        'Paris?"}],"tools":[{"name":"get_weather","input_schema":{"type":"object"}}],'
        '"stream":true,"thinking":{"type":"enabled"}}'
    )


def test_model_turn_with_calls_and_opaque_blocks() -> None:
    results = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": "sunny"},
            {"type": "text", "text": "thanks"},
        ],
    }
    got = call("anthropic", request(messages=[USER, ASSISTANT, results]))
    user, model, tool = got.request.messages
    assert (user.role, user.text, user.path) == ("user", "Weather in Paris?", "messages[0]")
    assert (model.role, model.text, model.raw) == ("model", "Checking.", ASSISTANT)
    [tool_call] = model.calls
    assert (tool_call.id, tool_call.name, tool_call.arguments, tool_call.path) == (
        "toolu_01",
        "get_weather",
        {"city": "Paris"},
        "messages[1].content[3]",
    )
    assert [(o.kind, o.token, o.text, o.path) for o in model.opaque] == [
        ("thinking", "sig-1", "Let me check.", "messages[1].content[0]"),
        ("redacted_thinking", "opaque-blob", None, "messages[1].content[1]"),
    ]
    assert (tool.role, tool.text, tool.results_first) == ("tool", "thanks", True)
    assert [(r.call_id, r.content, r.is_error, r.path) for r in tool.results] == [
        ("toolu_01", "sunny", False, "messages[2].content[0]")
    ]
    assert got.problems == ()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("plain", ("plain", False)),
        ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], ("ab", False)),
        ([{"type": "image", "source": {}}], ('[{"type":"image","source":{}}]', False)),
        (None, ("", False)),
    ],
)
def test_tool_result_content(content: Any, expected: tuple[str, bool]) -> None:
    block = {"type": "tool_result", "tool_use_id": "toolu_01", "is_error": True}
    if content is not None:
        block["content"] = content
    body = request(messages=[USER, ASSISTANT, {"role": "user", "content": [block]}])
    [result] = call("anthropic", body).request.messages[2].results
    assert (result.content, result.is_error) == (expected[0], True)


def test_text_before_results_is_not_results_first() -> None:
    content = [
        {"type": "text", "text": "here"},
        {"type": "tool_result", "tool_use_id": "toolu_01", "content": "sunny"},
    ]
    body = request(messages=[USER, ASSISTANT, {"role": "user", "content": content}])
    assert call("anthropic", body).request.messages[2].results_first is False


def test_unknown_blocks_and_roles_are_problems() -> None:
    messages = [
        {"role": "user", "content": [{"type": "hologram"}, {"type": "image", "source": {}}]},
        {"role": "assistant", "content": [{"type": "server_tool_use", "id": "srv"}, {"x": 1}]},
        {"role": "system", "content": "no"},
    ]
    got = call("anthropic", request(messages=messages))
    assert problems(got) == [
        "request:messages[0].content[0]: unknown user content block type 'hologram'",
        "request:messages[1].content[1]: unknown assistant content block type None",
        "request:messages[2]: message role 'system' is neither user nor assistant",
    ]
    assert got.request.messages[1].calls == ()  # a server tool is not the loop's call


@pytest.mark.parametrize("body", ["not json", None, [1, 2]])
def test_request_body_that_is_not_an_object(body: Any) -> None:
    got = call("anthropic", body)
    assert got.request.messages == ()
    assert problems(got)[0].startswith("request:: request body is not a JSON object")


# ---- responses -------------------------------------------------------------------------

MESSAGE = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "content": ASSISTANT["content"],
    "stop_reason": "tool_use",
    "usage": {"input_tokens": 10, "output_tokens": 5, "cache_creation": {"ephemeral_5m": 0}},
}


def test_json_response() -> None:
    got = call("anthropic", request(), MESSAGE).response
    assert (got.status, got.id, got.text, got.stop_reason, got.streamed) == (
        200,
        "msg_01",
        "Checking.",
        "tool_use",
        False,
    )
    assert [(c.id, c.arguments, c.path) for c in got.calls] == [
        ("toolu_01", {"city": "Paris"}, "content[3]")
    ]
    assert [o.kind for o in got.opaque] == ["thinking", "redacted_thinking"]
    assert dict(got.usage) == {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_creation.ephemeral_5m": 0,
    }
    assert got.raw == ASSISTANT["content"]


def ev(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return kind, {"type": kind, **fields}


def start(index: int, **block: Any) -> tuple[str, dict[str, Any]]:
    return ev("content_block_start", index=index, content_block=block)


def delta(index: int, kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return ev("content_block_delta", index=index, delta={"type": kind, **fields})


def stop(index: int) -> tuple[str, dict[str, Any]]:
    return ev("content_block_stop", index=index)


START = ev(
    "message_start",
    message={"id": "msg_02", "content": [], "usage": {"input_tokens": 7, "output_tokens": 1}},
)
THINKING_AND_TOOL = [
    START,
    start(0, type="thinking", thinking="", signature=""),
    ev("ping"),
    delta(0, "thinking_delta", thinking="Hm"),
    delta(0, "thinking_delta", thinking="m."),
    delta(0, "signature_delta", signature="SIG"),
    stop(0),
    start(1, type="text", text=""),
    delta(1, "text_delta", text="On "),
    delta(1, "text_delta", text="it."),
    stop(1),
    start(2, type="tool_use", id="toolu_9", name="get_weather", input={}),
    delta(2, "input_json_delta", partial_json=""),
    delta(2, "input_json_delta", partial_json='{"ci'),
    delta(2, "input_json_delta", partial_json='ty": "Oslo"}'),
    stop(2),
    start(3, type="tool_use", id="toolu_10", name="now", input={}),
    delta(3, "input_json_delta", partial_json=""),
    stop(3),
    ev("message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 42}),
    ev("message_stop"),
]


def test_stream_is_reassembled_like_the_sdk() -> None:
    got = call("anthropic", request(stream=True), events=THINKING_AND_TOOL)
    response = got.response
    assert got.problems == ()
    assert (response.streamed, response.id, response.text, response.stop_reason) == (
        True,
        "msg_02",
        "On it.",
        "tool_use",
    )
    assert [(c.id, c.name, c.arguments, c.path) for c in response.calls] == [
        ("toolu_9", "get_weather", {"city": "Oslo"}, "content[2]"),
        ("toolu_10", "now", {}, "content[3]"),  # one empty fragment: no arguments
    ]
    [thinking] = response.opaque
    assert (thinking.kind, thinking.text, thinking.token) == ("thinking", "Hmm.", "SIG")
    assert dict(response.usage) == {"input_tokens": 7, "output_tokens": 42}
    assert response.raw[2] == {
        "type": "tool_use",
        "id": "toolu_9",
        "name": "get_weather",
        "input": {"city": "Oslo"},
    }


def test_stream_error_event_mid_stream() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    got = call("anthropic", request(), events=[*THINKING_AND_TOOL[:3], ("error", error)])
    assert (got.response.status, got.response.error, got.response.error_type) == (
        200,
        "Overloaded",
        "overloaded_error",
    )
    assert got.problems == ()


@pytest.mark.parametrize(
    ("transport_error", "expected_problems"),
    [
        ("RemoteProtocolError: peer closed", []),
        (None, ["response:events: stream ended without message_stop"]),
    ],
)
def test_cut_stream_keeps_what_arrived(
    transport_error: str | None, expected_problems: list[str]
) -> None:
    got = call("anthropic", request(), events=THINKING_AND_TOOL[:9], error=transport_error)
    assert got.response.text == "On "
    assert got.response.error == transport_error
    assert problems(got) == expected_problems


def test_stream_oddities_are_problems() -> None:
    events: list[tuple[str | None, Any]] = [
        START,
        (None, {"type": "ping"}),
        start(0, type="tool_use", id="t", name="n", input={}),
        delta(0, "input_json_delta", partial_json="{oops"),
        delta(0, "teleport_delta"),
        stop(0),
        ev("mystery"),
        ("message_stop", "not json"),
        ev("message_stop"),
    ]
    got = call("anthropic", request(), events=events)
    assert problems(got) == [
        "response:events[1]: stream frame without an `event:` line (the SDK ignores it)",
        "response:events[4]: unknown content_block_delta type 'teleport_delta'",
        "response:events[5]: streamed tool input is not valid JSON (Expecting property name "
        "enclosed in double quotes)",
        "response:events[6]: unknown stream event type 'mystery'",
        "response:events[7]: stream event 'message_stop' data is not a JSON object",
    ]
    assert got.response.calls[0].arguments == "{oops"


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            400,
            {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}},
            ("bad", "invalid_request_error", []),
        ),
        (
            529,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            ("Overloaded", "overloaded_error", []),
        ),
        (
            502,
            "<html>Bad Gateway</html>",
            (
                "<html>Bad Gateway</html>",
                None,
                ["response:: HTTP 502 body is not the provider's error envelope"],
            ),
        ),
    ],
)
def test_error_envelopes(status: int, body: Any, expected: tuple[Any, ...]) -> None:
    got = call("anthropic", request(), body, status=status)
    assert (got.response.status, got.response.error, got.response.error_type, problems(got)) == (
        status,
        *expected,
    )
