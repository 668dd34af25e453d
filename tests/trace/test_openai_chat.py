"""OpenAI Chat Completions: messages, JSON responses, streamed chunks folded like the SDK."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from openai.lib.streaming._deltas import accumulate_delta as sdk_accumulate_delta

from harness.trace.common import Problems
from harness.trace.openai_chat import accumulate_delta
from tests.trace.exchanges import call, problems

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


ASSISTANT = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        tool_call("call_1", "get_weather", '{"city":"Paris"}'),
        tool_call("call_2", "get_weather", ""),
    ],
}


def request(**fields: Any) -> dict[str, Any]:
    messages = [{"role": "user", "content": "Weather?"}]
    return {"model": "gpt-x", "messages": messages, "tools": TOOLS, **fields}


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({}, ("unset", None)),
        ({"tool_choice": "auto"}, ("auto", None)),
        ({"tool_choice": "none"}, ("none", None)),
        ({"tool_choice": "required"}, ("required", None)),
        (
            {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
            ("named", "get_weather"),
        ),
        (
            {"tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "auto"}}},
            ("auto", None),
        ),
        ({"function_call": {"name": "get_weather"}}, ("named", "get_weather")),
        ({"function_call": "none"}, ("none", None)),
    ],
)
def test_tool_choice_spellings(fields: dict[str, Any], expected: tuple[Any, ...]) -> None:
    got = call("openai-chat", request(**fields))
    assert (got.request.tool_choice, got.request.tool_choice_name) == expected
    assert got.problems == ()


def test_unknown_tool_choice_is_a_problem() -> None:
    got = call("openai-chat", request(tool_choice={"type": "function"}))
    assert got.request.tool_choice == "unset"
    assert problems(got) == [
        'request:tool_choice: unknown tool_choice {"type":"function"}',
    ]


def test_messages_system_and_tool_runs() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": [{"type": "text", "text": "Use tools."}]},
        {"role": "user", "content": [{"type": "text", "text": "Weather?"}, {"type": "image_url"}]},
        ASSISTANT,
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "rain"}]},
        {"role": "assistant", "content": "Sunny, rain."},
    ]
    body = request(messages=messages, store=True, parallel_tool_calls=False, functions=[])
    got = call("openai-chat", body)
    assert got.problems == ()
    request_ = got.request
    assert (request_.system, request_.store, request_.parallel_tool_calls) == (
        "Be brief.\nUse tools.",
        True,
        False,
    )
    user, model, tool, answer = request_.messages
    assert (user.role, user.text, user.path) == ("user", "Weather?", "messages[2]")
    assert [(c.id, c.name, c.arguments, c.path) for c in model.calls] == [
        ("call_1", "get_weather", {"city": "Paris"}, "messages[3].tool_calls[0]"),
        ("call_2", "get_weather", {}, "messages[3].tool_calls[1]"),
    ]
    assert (tool.role, tool.path, len(tool.raw)) == ("tool", "messages[4]", 2)
    assert [(r.call_id, r.content) for r in tool.results] == [
        ("call_1", "sunny"),
        ("call_2", "rain"),
    ]
    assert (answer.role, answer.text) == ("model", "Sunny, rain.")


def test_legacy_functions() -> None:
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "function_call": {"name": "get_weather", "arguments": "{}"}},
        {"role": "function", "name": "get_weather", "content": "sunny"},
    ]
    body = {"model": "m", "messages": messages, "functions": [{"name": "get_weather"}]}
    got = call("openai-chat", body).request
    assert got.declared_tools == ("get_weather",)
    assert [(c.id, c.name) for c in got.messages[1].calls] == [(None, "get_weather")]
    assert [(r.call_id, r.name, r.content) for r in got.messages[2].results] == [
        (None, "get_weather", "sunny")
    ]


def test_unknown_roles_and_parts_are_problems() -> None:
    messages = [
        {"role": "narrator", "content": "x"},
        {"role": "user", "content": [{"type": "smell"}]},
        {"role": "assistant", "tool_calls": [{"id": "c", "type": "telepathy"}]},
    ]
    assert problems(call("openai-chat", request(messages=messages))) == [
        "request:messages[0]: unknown message role 'narrator'",
        "request:messages[1].content[0]: unknown content part type 'smell'",
        "request:messages[2].tool_calls[0]: unknown tool call type 'telepathy'",
    ]


# ---- responses -------------------------------------------------------------------------

COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "choices": [
        {"index": 0, "message": ASSISTANT, "finish_reason": "tool_calls"},
        {"index": 1, "message": {"role": "assistant", "content": "Hi"}, "finish_reason": "stop"},
    ],
    "usage": {
        "prompt_tokens": 5,
        "completion_tokens": 3,
        "prompt_tokens_details": {"cached_tokens": 0},
    },
}


def test_json_response() -> None:
    got = call("openai-chat", request(), COMPLETION).response
    assert (got.id, got.stop_reason, got.candidates, got.text) == (
        "chatcmpl-1",
        "tool_calls",
        2,
        "",
    )
    assert [(c.id, c.arguments, c.path) for c in got.calls] == [
        ("call_1", {"city": "Paris"}, "choices[0].message.tool_calls[0]"),
        ("call_2", {}, "choices[0].message.tool_calls[1]"),
    ]
    assert dict(got.usage) == {
        "prompt_tokens": 5,
        "completion_tokens": 3,
        "prompt_tokens_details.cached_tokens": 0,
    }


def chunk(delta: dict[str, Any], finish: str | None = None, index: int = 0) -> Any:
    choice = {"index": index, "delta": delta, "finish_reason": finish}
    return None, {"id": "chatcmpl-2", "object": "chat.completion.chunk", "choices": [choice]}


def tool_delta(index: int, **fields: Any) -> dict[str, Any]:
    return {"tool_calls": [{"index": index, **fields}]}


FIRST = {
    "role": "assistant",
    "content": None,
    **tool_delta(0, **tool_call("call_1", "get_weather", "")),
}
USAGE = {"prompt_tokens": 9, "completion_tokens": 4}
STREAM = [
    chunk(FIRST),
    chunk(tool_delta(0, function={"arguments": '{"ci'})),
    chunk(tool_delta(1, **tool_call("call_2", "now", ""))),
    chunk(tool_delta(0, function={"arguments": 'ty": "Oslo"}'})),
    chunk({}, "tool_calls"),
    (None, {"id": "chatcmpl-2", "choices": [], "usage": USAGE}),
    (None, "[DONE]"),
]


def test_stream_is_folded_like_the_sdk() -> None:
    events = copy.deepcopy(STREAM)
    got = call("openai-chat", request(stream=True), events=events)
    assert got.problems == ()
    response = got.response
    assert (response.streamed, response.id, response.stop_reason) == (
        True,
        "chatcmpl-2",
        "tool_calls",
    )
    assert [(c.id, c.name, c.arguments) for c in response.calls] == [
        ("call_1", "get_weather", {"city": "Oslo"}),
        ("call_2", "now", {}),
    ]
    assert dict(response.usage) == {"prompt_tokens": 9, "completion_tokens": 4}
    assert events == STREAM  # folding copies; the captured events stay as sent


def test_fold_matches_the_sdk_accumulate_delta() -> None:
    ours: dict[str, Any] = {}
    theirs: dict[object, object] = {}
    for _, data in STREAM[:5]:
        delta = data["choices"][0]["delta"]
        accumulate_delta(ours, copy.deepcopy(delta), "events", Problems("response"))
        sdk_accumulate_delta(theirs, copy.deepcopy(delta))
    assert ours == theirs


def test_stream_text_and_refusal() -> None:
    events = [chunk({"role": "assistant", "content": ""}), chunk({"content": "Hel"})]
    events += [chunk({"content": "lo"}), chunk({}, "stop"), (None, "[DONE]")]
    got = call("openai-chat", request(), events=events).response
    assert (got.text, got.stop_reason, got.calls) == ("Hello", "stop", ())


@pytest.mark.parametrize(
    ("events", "expected_error", "expected_problems"),
    [
        (STREAM[:3], None, ["response:events: stream ended without data: [DONE]"]),
        (
            [*STREAM[:2], (None, {"error": {"message": "boom", "type": "server_error"}})],
            "boom",
            [],
        ),
        (
            [(None, "garbage"), (None, "[DONE]")],
            None,
            [
                "response:events[0]: stream chunk is not a JSON object",
                "response:choices: response has no choice",
            ],
        ),
    ],
)
def test_stream_failures(
    events: list[Any], expected_error: str | None, expected_problems: list[str]
) -> None:
    got = call("openai-chat", request(), events=events)
    assert got.response.error == expected_error
    assert problems(got) == expected_problems


def test_error_envelope() -> None:
    body = {"error": {"message": "Invalid parameter", "type": None, "code": "invalid_value"}}
    got = call("openai-chat", request(), body, status=400).response
    assert (got.error, got.error_type) == ("Invalid parameter", "invalid_value")
