"""The Anthropic adapter spells the loop's decisions: request shape (ordinary and closing
call) and the turn read from the SDK's own `Message` type."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic.types import Message

from harness.chat import AssistantMessage, ToolCall, ToolMessage, UserMessage
from harness.chat import Message as Saved
from harness.loop.adapters import ProviderCallError, Request, Step, Turn
from harness.loop.adapters.anthropic import (
    MAX_TOKENS,
    request_to_anthropic,
    turn_from_anthropic,
)
from harness.loop.closing import NOT_EXECUTED_RESULT, STEP_LIMIT_INSTRUCTION, closing_system
from harness.loop.contract import ToolSpec

TOOL = ToolSpec(
    name="get_workout_history",
    description="Logged workouts for one exercise.",
    parameters={"type": "object", "properties": {"exercise": {"type": "string"}}},
    effect="read",
    run=lambda _: "",
)
THINKING = {"type": "thinking", "thinking": "Look it up.", "signature": "c2lnbmF0dXJl"}
USE = {
    "type": "tool_use",
    "id": "toolu_01A",
    "name": "get_workout_history",
    "input": {"exercise": "bench press"},
}
USE_2 = {**USE, "id": "toolu_01B", "input": {"exercise": "squat"}}


def api_message(content: list[dict[str, Any]], stop: str = "tool_use") -> Message:
    return Message.model_validate(
        {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
    )


def turn_of(*blocks: dict[str, Any]) -> Turn[tuple[dict[str, Any], ...]]:
    return turn_from_anthropic(api_message([*blocks]))


def request(
    steps: list[Step[Any]], *, closing: bool = False, context: tuple[Saved, ...] = ()
) -> Request[Any]:
    return Request(
        system=closing_system("Be brief.") if closing else "Be brief.",
        context=context,
        message="How is my bench press going?",
        steps=tuple(steps),
        tools=(TOOL,),
        tools_allowed=not closing,
    )


def test_turn_keeps_thinking_and_signature_and_reads_calls() -> None:
    turn = turn_of(THINKING, {"type": "text", "text": "Checking."}, USE, USE_2)
    assert turn.native == (THINKING, {"type": "text", "text": "Checking."}, USE, USE_2)
    assert turn.message == AssistantMessage(
        text="Checking.",
        tool_calls=(
            ToolCall(
                id="toolu_01A", name="get_workout_history", arguments={"exercise": "bench press"}
            ),
            ToolCall(id="toolu_01B", name="get_workout_history", arguments={"exercise": "squat"}),
        ),
    )


def test_turn_with_an_unknown_block_is_a_provider_error() -> None:
    block = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    with pytest.raises(ProviderCallError, match="server_tool_use"):
        turn_of(block)


@pytest.mark.parametrize("stop", ["max_tokens", "model_context_window_exceeded"])
def test_a_reply_cut_short_is_a_provider_error_not_an_answer(stop: str) -> None:
    message = api_message([{"type": "text", "text": "You added 2.5"}], stop=stop)
    with pytest.raises(ProviderCallError, match=f"cut short \\(stop_reason {stop}\\)"):
        turn_from_anthropic(message)


@pytest.mark.parametrize("stop", ["end_turn", "tool_use", "stop_sequence"])
def test_a_whole_reply_is_a_turn(stop: str) -> None:
    message = api_message([{"type": "text", "text": "Done."}], stop=stop)
    assert turn_from_anthropic(message).message.text == "Done."


def test_first_call_declares_tools_without_tool_choice() -> None:
    params = request_to_anthropic(request([]), model="claude-test")
    assert params == {
        "model": "claude-test",
        "max_tokens": MAX_TOKENS,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "How is my bench press going?"}],
        "tools": [
            {
                "name": "get_workout_history",
                "description": "Logged workouts for one exercise.",
                "input_schema": dict(TOOL.parameters),
            }
        ],
    }


def test_results_follow_the_unchanged_turn_in_one_user_message() -> None:
    turn = turn_of(THINKING, USE, USE_2)
    results = (
        ToolMessage(call_id="toolu_01A", name="get_workout_history", content="3x5 @ 80 kg"),
        ToolMessage(
            call_id="toolu_01B",
            name="get_workout_history",
            content="no such exercise",
            is_error=True,
        ),
    )
    params = request_to_anthropic(request([Step(turn=turn, results=results)]), model="m")
    assert params["messages"][1:] == [
        {"role": "assistant", "content": [THINKING, USE, USE_2]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "3x5 @ 80 kg"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01B",
                    "content": "no such exercise",
                    "is_error": True,
                },
            ],
        },
    ]


def test_closing_call_keeps_tools_forbids_them_and_adds_the_order_to_system() -> None:
    turn = turn_of({"type": "text", "text": "Now saving."}, USE)
    pending = (
        ToolMessage(
            call_id="toolu_01A",
            name="get_workout_history",
            content=NOT_EXECUTED_RESULT,
            is_error=True,
        ),
    )
    params = request_to_anthropic(
        request([Step(turn=turn, results=pending)], closing=True), model="m"
    )
    assert params["tool_choice"] == {"type": "none"}
    assert [t["name"] for t in params["tools"]] == ["get_workout_history"]
    assert params["system"] == f"Be brief.\n\n{STEP_LIMIT_INSTRUCTION}"
    assert params["messages"][-1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01A",
                "content": NOT_EXECUTED_RESULT,
                "is_error": True,
            },
        ],
    }
    assert STEP_LIMIT_INSTRUCTION not in str(params["messages"])


def test_saved_context_becomes_messages_with_results_grouped() -> None:
    calls = (
        ToolCall(id="toolu_0X", name="get_workout_history", arguments={"exercise": "row"}),
        ToolCall(id="toolu_0Y", name="get_workout_history", arguments={}),
    )
    context: tuple[Saved, ...] = (
        UserMessage(text="Rows?"),
        AssistantMessage(text="", tool_calls=calls),
        ToolMessage(call_id="toolu_0X", name="get_workout_history", content="a"),
        ToolMessage(call_id="toolu_0Y", name="get_workout_history", content="b", is_error=True),
        AssistantMessage(text="Rows are fine."),
    )
    params = request_to_anthropic(request([], context=context), model="m")
    assert params["messages"] == [
        {"role": "user", "content": "Rows?"},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_0X",
                    "name": "get_workout_history",
                    "input": {"exercise": "row"},
                },
                {"type": "tool_use", "id": "toolu_0Y", "name": "get_workout_history", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_0X", "content": "a"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_0Y",
                    "content": "b",
                    "is_error": True,
                },
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Rows are fine."}]},
        {"role": "user", "content": "How is my bench press going?"},
    ]


def test_no_tools_means_no_tools_field_and_no_empty_system() -> None:
    bare: Request[Any] = Request(system="", context=(), message="hi", steps=(), tools=())
    params = request_to_anthropic(bare, model="m")
    assert "tools" not in params and "tool_choice" not in params and "system" not in params
