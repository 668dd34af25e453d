"""The emulated Chat Completions API: each rejection beside its corrected request, position,
the `chat.completion` object and its chunk stream."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.emulator import openai_chat as chat
from harness.emulator.apis import wire_api
from harness.emulator.openai_chat import API
from harness.emulator.wire import Reply, Step
from harness.scenario.model import ScriptedCall, ScriptedTurn
from tests.emulator.openai_fixtures import (
    chat_assistant,
    chat_request,
    chat_tool,
    chat_user,
    ctx,
    without,
)

ROUND_TWO = chat_request(chat_user(), chat_assistant("call_1"), chat_tool("call_1"))
PARALLEL = chat_request(
    chat_user(), chat_assistant("call_1", "call_2"), chat_tool("call_1"), chat_tool("call_2")
)
C1 = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
)
C2 = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'."
)

# (rule, rejected request, message, param, code, corrected request)
CASES: list[tuple[str, dict[str, Any], str, str | None, str | None, dict[str, Any]]] = [
    (
        "missing_field",
        without(ROUND_TWO, "model"),
        "you must provide a model parameter",
        None,
        None,
        ROUND_TWO,
    ),
    (
        "missing_field",
        without(ROUND_TWO, "messages"),
        "Missing required parameter: 'messages'.",
        "messages",
        "missing_required_parameter",
        ROUND_TWO,
    ),
    (
        "C1",
        chat_request(chat_user(), chat_assistant("call_1")),
        C1 + "call_1",
        "messages.[1].role",
        None,
        ROUND_TWO,
    ),
    (
        "C1",
        chat_request(
            chat_user(), chat_assistant("call_1", "call_2"), chat_tool("call_1"), chat_user("?")
        ),
        C1 + "call_2",
        "messages.[3].role",
        None,
        PARALLEL,
    ),
    (
        "C1",
        chat_request(chat_user(), chat_assistant("call_1", "call_2"), chat_user("and?")),
        C1 + "call_1, call_2",
        "messages.[2].role",
        None,
        PARALLEL,
    ),
    (
        "C2",
        chat_request(chat_user(), chat_tool("call_1")),
        C2,
        "messages.[1].role",
        None,
        ROUND_TWO,
    ),
    (
        "C2",  # a text-only assistant message in between
        chat_request(
            chat_user(),
            chat_assistant("call_1"),
            chat_tool("call_1"),
            chat_assistant(text="Done."),
            chat_tool("call_1"),
        ),
        C2,
        "messages.[4].role",
        None,
        chat_request(
            chat_user(),
            chat_assistant("call_1"),
            chat_tool("call_1"),
            chat_assistant(text="Done."),
        ),
    ),
    (
        "C3",
        chat_request(chat_user(), chat_assistant("call_1"), chat_tool("call_9")),
        "Invalid parameter: 'tool_call_id' of 'call_9' not found in 'tool_calls' of previous "
        "message.",
        "messages.[2].tool_call_id",
        None,
        ROUND_TWO,
    ),
    (
        "tool_choice_without_tools",
        {**without(ROUND_TWO, "tools"), "messages": [chat_user()], "tool_choice": "auto"},
        "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are "
        "specified.",
        "tool_choice",
        None,
        {**ROUND_TWO, "tool_choice": "auto"},
    ),
    (
        "tool_choice_unknown_tool",
        {**ROUND_TWO, "tool_choice": {"type": "function", "function": {"name": "get_time"}}},
        "Invalid value for 'tool_choice': function 'get_time' not found in 'tools'.",
        "tool_choice",
        None,
        {**ROUND_TWO, "tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
    ),
]


@pytest.mark.parametrize(
    ("rule", "bad", "message", "param", "code", "good"),
    CASES,
    ids=[f"{c[0]}-{n}" for n, c in enumerate(CASES)],
)
def test_rejection_and_its_correction(
    rule: str,
    bad: dict[str, Any],
    message: str,
    param: str | None,
    code: str | None,
    good: dict[str, Any],
) -> None:
    err = API.validate(bad, ctx())
    assert err is not None
    assert (err.rule, err.status, err.message, err.param, err.code) == (
        rule,
        400,
        message,
        param,
        code,
    )
    envelope = json.loads(b"".join(API.error(err).chunks))
    assert envelope == {
        "error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    }
    assert API.validate(good, ctx()) is None


def test_closing_call_with_tool_choice_none_is_accepted() -> None:
    assert API.validate({**ROUND_TWO, "tool_choice": "none"}, ctx()) is None


def test_assistant_text_with_calls_and_system_message_are_accepted() -> None:
    body = chat_request(
        {"role": "system", "content": "Be brief."},
        chat_user(),
        chat_assistant("call_1", text="Checking."),
        chat_tool("call_1"),
    )
    assert API.validate(body, ctx()) is None


# position --------------------------------------------------------------------------------

POSITIONS: list[tuple[dict[str, Any], str | None, int, bool]] = [
    (chat_request(chat_user()), "Weather in Paris?", 0, False),
    (ROUND_TWO, "Weather in Paris?", 1, False),
    (PARALLEL, "Weather in Paris?", 1, False),
    (
        chat_request(
            chat_user(),
            chat_assistant("c1"),
            chat_tool("c1"),
            chat_assistant("c2"),
            chat_tool("c2"),
        ),
        "Weather in Paris?",
        2,
        False,
    ),
    (
        chat_request(
            chat_user("first"),
            chat_assistant(text="Hi."),
            chat_user("second"),
            chat_assistant("c1"),
            chat_tool("c1"),
        ),
        "second",
        1,
        False,
    ),
    (
        chat_request(
            {
                "role": "user",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            }
        ),
        "ab",
        0,
        False,
    ),
    ({**ROUND_TWO, "tool_choice": "none"}, "Weather in Paris?", 1, True),
    (chat_request({"role": "system", "content": "x"}), None, 0, False),
]


@pytest.mark.parametrize(("body", "text", "turns", "forbidden"), POSITIONS)
def test_position(body: dict[str, Any], text: str | None, turns: int, forbidden: bool) -> None:
    pos = API.position(body)
    assert (pos.user_text, pos.model_turns, pos.tools_forbidden) == (text, turns, forbidden)


# render ----------------------------------------------------------------------------------

CALLS = (
    ScriptedCall(name="get_weather", arguments={"city": "Paris"}),
    ScriptedCall(name="get_weather", arguments={"city": "Oslo"}),
)


def step(text: str = "", calls: tuple[ScriptedCall, ...] = CALLS) -> Step:
    return Step(turn=ScriptedTurn(text=text, calls=calls), user_index=0, turn_index=0)


def completion(reply: Reply) -> dict[str, Any]:
    assert reply.status == 200 and not reply.streamed
    result: dict[str, Any] = json.loads(b"".join(reply.chunks))
    return result


def test_completion_with_tool_calls() -> None:
    body = completion(API.render(step("Checking."), chat_request(), ctx(model="gpt-4o")))
    assert body["object"] == "chat.completion" and body["model"] == "gpt-4o"
    assert body["id"].startswith("chatcmpl-") and len(body["id"]) == len("chatcmpl-") + 29
    assert body["system_fingerprint"].startswith("fp_")
    (choice,) = body["choices"]
    assert choice["finish_reason"] == "tool_calls" and choice["logprobs"] is None
    message = choice["message"]
    assert (message["role"], message["content"], message["refusal"]) == (
        "assistant",
        "Checking.",
        None,
    )
    calls = message["tool_calls"]
    assert [
        (c["type"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls
    ] == [
        ("function", "get_weather", {"city": "Paris"}),
        ("function", "get_weather", {"city": "Oslo"}),
    ]
    assert all(c["id"].startswith("call_") and len(c["id"]) == 29 for c in calls)
    assert len({c["id"] for c in calls}) == 2
    usage = body["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage["completion_tokens_details"]["reasoning_tokens"] == 0


def test_completion_with_only_calls_has_null_content() -> None:
    message = completion(API.render(step(), chat_request(), ctx()))["choices"][0]["message"]
    assert message["content"] is None


def test_answer_completion() -> None:
    body = completion(API.render(step("It is sunny.", ()), chat_request(), ctx()))
    choice = body["choices"][0]
    assert choice["finish_reason"] == "stop"
    assert choice["message"]["content"] == "It is sunny."
    assert "tool_calls" not in choice["message"]


def chunks(reply: Reply) -> list[Any]:
    assert reply.streamed
    frames = [c.decode() for c in reply.chunks]
    assert all(f.startswith("data: ") and f.endswith("\n\n") for f in frames)
    assert frames[-1] == "data: [DONE]\n\n"
    return [json.loads(f[len("data: ") :]) for f in frames[:-1]]


@pytest.mark.parametrize("text", ["", "Checking."])
def test_stream_tool_call_deltas(text: str) -> None:
    body = chat_request(stream=True, stream_options={"include_usage": True})
    parts = chunks(API.render(step(text), body, ctx(stream=True)))
    assert all(p["object"] == "chat.completion.chunk" for p in parts)
    assert len({p["id"] for p in parts}) == 1
    *deltas, finish, usage = parts
    assert usage["choices"] == [] and usage["usage"]["total_tokens"] > 0
    assert finish["choices"][0] == {
        "index": 0,
        "delta": {},
        "logprobs": None,
        "finish_reason": "tool_calls",
    }
    assert all(p["usage"] is None for p in [*deltas, finish])
    first = deltas[0]["choices"][0]["delta"]
    assert first["role"] == "assistant"
    assert first["content"] == ("" if text else None)
    streamed_text = "".join(d["choices"][0]["delta"].get("content") or "" for d in deltas)
    assert streamed_text == text
    calls: dict[int, dict[str, Any]] = {}
    for d in deltas:
        for tc in d["choices"][0]["delta"].get("tool_calls", []):
            entry = calls.setdefault(tc["index"], {"heads": 0, "arguments": ""})
            if "id" in tc:
                entry["heads"] += 1
                entry["id"], entry["name"] = tc["id"], tc["function"]["name"]
            else:
                assert set(tc) == {"index", "function"} and set(tc["function"]) == {"arguments"}
            entry["arguments"] += tc["function"]["arguments"]
    assert sorted(calls) == [0, 1]
    assert all(c["heads"] == 1 and c["name"] == "get_weather" for c in calls.values())
    assert [json.loads(c["arguments"]) for c in calls.values()] == [
        {"city": "Paris"},
        {"city": "Oslo"},
    ]


def test_stream_without_usage_option_has_no_usage_chunk() -> None:
    parts = chunks(API.render(step("Hi.", ()), chat_request(stream=True), ctx(stream=True)))
    assert all(p["choices"] for p in parts)
    assert all("usage" not in p for p in parts)
    assert parts[-1]["choices"][0]["finish_reason"] == "stop"
    assert "".join(p["choices"][0]["delta"].get("content") or "" for p in parts) == "Hi."


def test_declared_functions_reads_nested_names() -> None:
    assert chat.declared_functions(chat_request()) == ["get_weather"]


def test_registry_serves_this_module() -> None:
    assert wire_api("openai-chat") is API
    assert API.name == "openai-chat"
