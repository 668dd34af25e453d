"""The OpenAI Responses adapter spells the loop's decisions (stateless, L10): request shape
(ordinary and closing call) and the turn read from the SDK's own `Response` type."""

from __future__ import annotations

from typing import Any

import pytest
from openai.types.responses import Response

from harness.chat import AssistantMessage, ToolCall, ToolMessage, UserMessage
from harness.chat import Message as Saved
from harness.loop.adapters import ProviderCallError, Request, Step, Turn
from harness.loop.adapters.openai import parse_arguments, request_to_openai, turn_from_openai
from harness.loop.closing import NOT_EXECUTED_RESULT, STEP_LIMIT_INSTRUCTION, closing_system
from harness.loop.contract import ToolSpec

TOOL = ToolSpec(
    name="get_workout_history",
    description="Logged workouts for one exercise.",
    parameters={"type": "object", "properties": {"exercise": {"type": "string"}}},
    effect="read",
    run=lambda _: "",
)
REASONING = {"type": "reasoning", "id": "rs_01", "summary": [], "encrypted_content": "gAAAA-blob"}
MESSAGE = {
    "type": "message",
    "id": "msg_01",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Checking.", "annotations": []}],
}
CALL = {
    "type": "function_call",
    "id": "fc_01",
    "call_id": "call_01",
    "name": "get_workout_history",
    "arguments": '{"exercise":"bench press"}',
    "status": "completed",
}


def api_response(
    output: list[dict[str, Any]], status: str = "completed", error: dict[str, str] | None = None
) -> Response:
    return Response.model_validate(
        {
            "id": "resp_01",
            "object": "response",
            "created_at": 1,
            "model": "gpt-test",
            "status": status,
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "error": error,
            "incomplete_details": None,
            "instructions": None,
            "metadata": {},
            "temperature": 1.0,
            "top_p": 1.0,
        }
    )


def turn_of(*items: dict[str, Any]) -> Turn[tuple[dict[str, Any], ...]]:
    return turn_from_openai(api_response([*items]))


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


def test_turn_keeps_items_verbatim_and_reads_calls_by_call_id() -> None:
    turn = turn_of(REASONING, MESSAGE, CALL)
    assert turn.native[0] == REASONING
    assert turn.native[2] == CALL
    assert turn.native[1]["content"][0]["text"] == "Checking."
    assert turn.message == AssistantMessage(
        text="Checking.",
        tool_calls=(
            ToolCall(
                id="call_01", name="get_workout_history", arguments={"exercise": "bench press"}
            ),
        ),
    )
    assert turn.invalid_arguments == {}


@pytest.mark.parametrize(
    ("raw", "problem"), [("{not json", "not valid JSON"), ("[1, 2]", "not a JSON object")]
)
def test_unreadable_arguments_are_flagged_for_an_error_result(raw: str, problem: str) -> None:
    turn = turn_of({**CALL, "arguments": raw})
    assert turn.message.tool_calls[0].arguments == {}
    assert problem in turn.invalid_arguments[0]
    assert parse_arguments("") == ({}, None)


def test_a_failed_response_is_a_provider_error() -> None:
    response = api_response([], status="failed", error={"code": "server_error", "message": "boom"})
    with pytest.raises(ProviderCallError, match="server_error: boom"):
        turn_from_openai(response)


@pytest.mark.parametrize("reason", ["max_output_tokens", "content_filter"])
def test_an_incomplete_response_is_a_provider_error_not_an_answer(reason: str) -> None:
    fields = api_response([MESSAGE], status="incomplete").model_dump()
    response = Response.model_validate({**fields, "incomplete_details": {"reason": reason}})
    with pytest.raises(ProviderCallError, match=f"response incomplete \\({reason}\\)"):
        turn_from_openai(response)


def test_first_call_is_stateless_with_instructions_and_tools() -> None:
    params = request_to_openai(request([]), model="gpt-test")
    assert params == {
        "model": "gpt-test",
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "instructions": "Be brief.",
        "input": [{"role": "user", "content": "How is my bench press going?"}],
        "tools": [
            {
                "type": "function",
                "name": "get_workout_history",
                "description": "Logged workouts for one exercise.",
                "parameters": dict(TOOL.parameters),
                "strict": False,
            }
        ],
    }
    assert "previous_response_id" not in params and "tool_choice" not in params


def test_items_are_resent_in_place_then_outputs_by_call_id() -> None:
    turn = turn_of(REASONING, CALL)
    results = (ToolMessage(call_id="call_01", name="get_workout_history", content="3x5"),)
    params = request_to_openai(request([Step(turn=turn, results=results)]), model="m")
    assert params["input"][1:] == [
        REASONING,
        CALL,
        {"type": "function_call_output", "call_id": "call_01", "output": "3x5"},
    ]
    assert params["store"] is False


def test_closing_call_keeps_tools_forbids_them_and_adds_the_order_to_instructions() -> None:
    turn = turn_of(REASONING, CALL)
    pending = (
        ToolMessage(
            call_id="call_01",
            name="get_workout_history",
            content=NOT_EXECUTED_RESULT,
            is_error=True,
        ),
    )
    params = request_to_openai(request([Step(turn=turn, results=pending)], closing=True), model="m")
    assert params["tool_choice"] == "none"
    assert [t["name"] for t in params["tools"]] == ["get_workout_history"]
    assert params["instructions"] == f"Be brief.\n\n{STEP_LIMIT_INSTRUCTION}"
    assert params["input"][-1] == {
        "type": "function_call_output",
        "call_id": "call_01",
        "output": NOT_EXECUTED_RESULT,
    }
    assert STEP_LIMIT_INSTRUCTION not in str(params["input"])
    assert params["store"] is False and "previous_response_id" not in params


def test_saved_context_has_no_reasoning_and_calls_without_item_ids() -> None:
    calls = (ToolCall(id="call_X", name="get_workout_history", arguments={"exercise": "row"}),)
    context: tuple[Saved, ...] = (
        UserMessage(text="Rows?"),
        AssistantMessage(text="Looking.", tool_calls=calls),
        ToolMessage(call_id="call_X", name="get_workout_history", content="a", is_error=True),
        AssistantMessage(text="Rows are fine."),
    )
    params = request_to_openai(request([], context=context), model="m")
    assert params["input"] == [
        {"role": "user", "content": "Rows?"},
        {"role": "assistant", "content": "Looking."},
        {
            "type": "function_call",
            "call_id": "call_X",
            "name": "get_workout_history",
            "arguments": '{"exercise": "row"}',
        },
        {"type": "function_call_output", "call_id": "call_X", "output": "a"},
        {"role": "assistant", "content": "Rows are fine."},
        {"role": "user", "content": "How is my bench press going?"},
    ]
