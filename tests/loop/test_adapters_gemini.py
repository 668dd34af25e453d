"""The Gemini adapter spells the loop's decisions: request shape (ordinary and closing call),
results paired by id or by position, streamed chunks merged without losing signatures, and
old exchanges trimmed under a size limit without touching the active turn (L9)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from google.genai import types

from harness.chat import AssistantMessage, ToolCall, ToolMessage, UserMessage
from harness.chat import Message as Saved
from harness.loop.adapters import LOCAL_ID_PREFIX, ProviderCallError, Request, Step, Turn
from harness.loop.adapters.gemini import (
    GeminiAdapter,
    fit_request,
    merge_chunks,
    request_size,
    request_to_gemini,
    results_to_gemini,
    turn_from_gemini,
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
SIG = b"signature-bytes"


def call_part(exercise: str, id: str | None = None, sig: bytes | None = None) -> types.Part:
    return types.Part(
        function_call=types.FunctionCall(
            id=id, name="get_workout_history", args={"exercise": exercise}
        ),
        thought_signature=sig,
    )


def model(*parts: types.Part) -> types.Content:
    return types.Content(role="model", parts=list(parts))


def result(call_id: str, content: str, error: bool = False) -> ToolMessage:
    return ToolMessage(call_id=call_id, name="get_workout_history", content=content, is_error=error)


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


def step_of(content: types.Content, results: tuple[ToolMessage, ...]) -> Step[Any]:
    return Step(turn=turn_from_gemini(content), results=results)


def test_turn_reads_calls_with_and_without_ids_and_leaves_thoughts_out() -> None:
    content = model(
        types.Part(text="planning", thought=True),
        types.Part(text="Checking."),
        call_part("bench", id="fc-1", sig=SIG),
        call_part("squat"),
        types.Part(text="", thought_signature=SIG),
    )
    turn = turn_from_gemini(content)
    assert turn.native is content
    assert turn.message == AssistantMessage(
        text="Checking.",
        tool_calls=(
            ToolCall(id="fc-1", name="get_workout_history", arguments={"exercise": "bench"}),
            ToolCall(id="", name="get_workout_history", arguments={"exercise": "squat"}),
        ),
    )


def test_turn_with_an_unknown_part_is_a_provider_error() -> None:
    part = types.Part(
        executable_code=types.ExecutableCode(code="print(1)", language=types.Language.PYTHON)
    )
    with pytest.raises(ProviderCallError, match="executable_code"):
        turn_from_gemini(model(part))


class _Models:
    def __init__(self, replies: list[types.GenerateContentResponse]) -> None:
        self.replies = replies

    def generate_content(self, **_: Any) -> types.GenerateContentResponse:
        return self.replies[-1]

    def generate_content_stream(self, **_: Any) -> Iterator[types.GenerateContentResponse]:
        yield from self.replies


class _Client:
    def __init__(self, replies: list[types.GenerateContentResponse]) -> None:
        self.models = _Models(replies)


def reply(text: str, finish: str | None) -> types.GenerateContentResponse:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}}
    if finish is not None:
        candidate["finishReason"] = finish
    return types.GenerateContentResponse.model_validate({"candidates": [candidate]})


def send(replies: list[types.GenerateContentResponse], stream: bool) -> Turn[types.Content]:
    adapter = GeminiAdapter(client=_Client(replies), model="gemini-test", stream=stream)  # type: ignore[arg-type]
    return adapter.send(request([]))


CUT_SHORT = ["MAX_TOKENS", "SAFETY", "RECITATION", "MALFORMED_FUNCTION_CALL"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("finish", CUT_SHORT)
def test_a_reply_not_finished_with_stop_is_a_provider_error(finish: str, stream: bool) -> None:
    with pytest.raises(ProviderCallError, match=f"finishReason {finish}"):
        send([reply("You added", None), reply(" 2.5", finish)], stream)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_reply_finished_with_stop_is_a_turn(stream: bool) -> None:
    assert send([reply("You added", None), reply(" 2.5", "STOP")], stream).message.text


def test_results_pair_by_id_when_given_and_by_position_otherwise() -> None:
    content = model(call_part("bench", id="fc-1", sig=SIG), call_part("squat"))
    responses = results_to_gemini(
        content, (result("fc-1", "3x5"), result(f"{LOCAL_ID_PREFIX}x", "none", error=True))
    )
    assert responses.model_dump(mode="json", exclude_none=True) == {
        "role": "user",
        "parts": [
            {
                "function_response": {
                    "id": "fc-1",
                    "name": "get_workout_history",
                    "response": {"output": "3x5"},
                }
            },
            {"function_response": {"name": "get_workout_history", "response": {"error": "none"}}},
        ],
    }


def test_results_must_answer_every_call() -> None:
    with pytest.raises(ValueError):
        results_to_gemini(model(call_part("bench"), call_part("squat")), (result("a", "x"),))


def test_first_call_declares_tools_with_afc_off_and_no_tool_config() -> None:
    wire = request_to_gemini(request([]))
    assert [c.role for c in wire.contents] == ["user"]
    config = wire.config
    assert config.system_instruction == "Be brief."
    assert config.tool_config is None
    assert config.automatic_function_calling == types.AutomaticFunctionCallingConfig(disable=True)
    assert config.tools is not None
    tool = config.tools[0]
    assert isinstance(tool, types.Tool) and tool.function_declarations
    declaration = tool.function_declarations[0]
    assert declaration.name == "get_workout_history"
    assert declaration.parameters_json_schema == dict(TOOL.parameters)


def test_the_model_content_goes_back_unchanged_signatures_included() -> None:
    content = model(
        types.Part(text="Checking."),
        call_part("bench", sig=SIG),
        types.Part(text="", thought_signature=SIG),
    )
    wire = request_to_gemini(request([step_of(content, (result("x", "3x5"),))]))
    assert wire.contents[1] is content
    assert wire.contents[2].parts[0].function_response.id is None  # type: ignore[index,union-attr]


def test_closing_call_keeps_tools_forbids_them_and_adds_the_order_to_system() -> None:
    content = model(call_part("bench", id="fc-1", sig=SIG))
    pending = (result("fc-1", NOT_EXECUTED_RESULT, error=True),)
    wire = request_to_gemini(request([step_of(content, pending)], closing=True))
    config = wire.config
    assert config.tool_config is not None and config.tool_config.function_calling_config
    assert config.tool_config.function_calling_config.mode == types.FunctionCallingConfigMode.NONE
    assert config.tools and isinstance(config.tools[0], types.Tool)
    assert config.tools[0].function_declarations
    assert config.system_instruction == f"Be brief.\n\n{STEP_LIMIT_INSTRUCTION}"
    last = wire.contents[-1].model_dump(mode="json", exclude_none=True)
    assert last["parts"] == [
        {
            "function_response": {
                "id": "fc-1",
                "name": "get_workout_history",
                "response": {"error": NOT_EXECUTED_RESULT},
            }
        }
    ]
    assert STEP_LIMIT_INSTRUCTION not in str([c.model_dump() for c in wire.contents])


def test_saved_context_converts_and_drops_ids_the_loop_made_up() -> None:
    local = f"{LOCAL_ID_PREFIX}abc"
    context: tuple[Saved, ...] = (
        UserMessage(text="Rows?"),
        AssistantMessage(
            tool_calls=(
                ToolCall(id=local, name="get_workout_history"),
                ToolCall(id="fc-9", name="get_workout_history"),
            )
        ),
        result(local, "a"),
        result("fc-9", "b", error=True),
        AssistantMessage(text="Rows are fine."),
    )
    wire = request_to_gemini(request([], context=context))
    dumped = [c.model_dump(mode="json", exclude_none=True) for c in wire.contents]
    assert dumped == [
        {"role": "user", "parts": [{"text": "Rows?"}]},
        {
            "role": "model",
            "parts": [
                {"function_call": {"name": "get_workout_history", "args": {}}},
                {"function_call": {"id": "fc-9", "name": "get_workout_history", "args": {}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"function_response": {"name": "get_workout_history", "response": {"output": "a"}}},
                {
                    "function_response": {
                        "id": "fc-9",
                        "name": "get_workout_history",
                        "response": {"error": "b"},
                    }
                },
            ],
        },
        {"role": "model", "parts": [{"text": "Rows are fine."}]},
        {"role": "user", "parts": [{"text": "How is my bench press going?"}]},
    ]


def chunk(*parts: types.Part) -> types.GenerateContentResponse:
    return types.GenerateContentResponse(
        candidates=[types.Candidate(content=model(*parts), index=0)]
    )


def test_merge_chunks_joins_text_and_keeps_signature_only_parts() -> None:
    merged = merge_chunks(
        [
            chunk(types.Part(text="Let me ")),
            chunk(types.Part(text="check.")),
            types.GenerateContentResponse(candidates=[]),
            chunk(call_part("bench", sig=SIG)),
            chunk(call_part("squat")),
            chunk(types.Part(text="", thought_signature=SIG)),
        ]
    )
    assert merged == model(
        types.Part(text="Let me check."),
        call_part("bench", sig=SIG),
        call_part("squat"),
        types.Part(text="", thought_signature=SIG),
    )


def test_merge_chunks_never_joins_into_a_signed_or_thought_part() -> None:
    signed = types.Part(text="a", thought_signature=SIG)
    merged = merge_chunks(
        [chunk(signed), chunk(types.Part(text="b")), chunk(types.Part(text="c", thought=True))]
    )
    assert merged.parts == [signed, types.Part(text="b"), types.Part(text="c", thought=True)]


def exchange(n: int) -> tuple[Saved, ...]:
    return (UserMessage(text=f"question {n} " + "x" * 200), AssistantMessage(text=f"answer {n}"))


def test_over_the_size_limit_old_whole_exchanges_go_first() -> None:
    context = (*exchange(1), *exchange(2), *exchange(3))
    content = model(call_part("bench", id="fc-1", sig=SIG))
    full = request([step_of(content, (result("fc-1", "3x5"),))], context=context)
    sizes = [request_size(request_to_gemini(full, context=context[k:])) for k in (0, 2, 4, 6)]
    assert sizes == sorted(sizes, reverse=True)

    assert fit_request(full, None).contents == request_to_gemini(full).contents
    assert fit_request(full, sizes[0]).contents == request_to_gemini(full).contents
    kept_two = fit_request(full, sizes[1])
    assert kept_two.contents == request_to_gemini(full, context=context[2:]).contents
    kept_one = fit_request(full, sizes[2])
    assert kept_one.contents[0] == request_to_gemini(full, context=context[4:]).contents[0]
    # never a step of the active turn: below even the bare active sequence, it goes whole
    bare = fit_request(full, 10)
    assert bare.contents == request_to_gemini(full, context=()).contents
    assert bare.contents[1] is content and len(bare.contents) == 3


def test_request_size_counts_what_the_sdk_would_send() -> None:
    wire = request_to_gemini(request([]))
    size = request_size(wire)
    assert size > len("How is my bench press going?") + len("Be brief.")
    bigger = request_to_gemini(request([], context=exchange(1)))
    assert request_size(bigger) > size


def test_consecutive_saved_assistant_messages_become_one_model_content() -> None:
    """G2: a function-call turn must follow a user or function-response turn, so a saved text
    reply followed by a saved tool request is sent as one model content."""
    from harness.loop.adapters.gemini import saved_to_gemini

    saved: list[Saved] = [
        UserMessage(text="Hi"),
        AssistantMessage(text="Hello!"),
        AssistantMessage(tool_calls=(ToolCall(id="h1", name="get_record", arguments={}),)),
        ToolMessage(call_id="h1", name="get_record", content="120 kg"),
        AssistantMessage(text="Your record is 120 kg."),
    ]
    contents = saved_to_gemini(saved)
    assert [c.role for c in contents] == ["user", "model", "user", "model"]
    merged = contents[1].parts or []
    assert merged[0].text == "Hello!" and merged[1].function_call is not None
