"""OpenAI Responses: input items grouped into messages, JSON and streamed responses."""

from __future__ import annotations

from typing import Any

import pytest

from tests.trace.exchanges import call, problems

TOOLS = [{"type": "function", "name": "get_weather", "parameters": {}}, {"type": "web_search"}]
REASONING = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA-1"}
CALL_A = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "get_weather",
    "arguments": '{"city":"Paris"}',
}
CALL_B = {**CALL_A, "id": "fc_2", "call_id": "call_2", "arguments": '{"city":"Oslo"}'}
OUTPUT_A = {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}
OUTPUT_B = {
    "type": "function_call_output",
    "call_id": "call_2",
    "output": [{"type": "input_text", "text": "rain"}],
}


def output_text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text}


def input_text(text: str) -> dict[str, Any]:
    return {"type": "input_text", "text": text}


def request(**fields: Any) -> dict[str, Any]:
    return {"model": "gpt-x", "input": "Weather?", "tools": TOOLS, **fields}


@pytest.mark.parametrize(
    ("tool_choice", "expected"),
    [
        (None, ("unset", None)),
        ("auto", ("auto", None)),
        ("none", ("none", None)),
        ("required", ("required", None)),
        ({"type": "function", "name": "get_weather"}, ("named", "get_weather")),
        ({"type": "allowed_tools", "mode": "required", "tools": []}, ("required", None)),
        ({"type": "web_search_preview"}, ("named", "web_search_preview")),
    ],
)
def test_tool_choice_spellings(tool_choice: Any, expected: tuple[Any, ...]) -> None:
    body = request() if tool_choice is None else request(tool_choice=tool_choice)
    got = call("openai-responses", body)
    assert (got.request.tool_choice, got.request.tool_choice_name) == expected
    assert got.problems == ()


@pytest.mark.parametrize("tool_choice", ["sometimes", {"mode": "auto"}, {"type": "function"}, 3])
def test_unknown_tool_choice_is_a_problem(tool_choice: Any) -> None:
    got = call("openai-responses", request(tool_choice=tool_choice))
    assert got.request.tool_choice == "unset"
    assert [p.path for p in got.problems] == ["tool_choice"]


def test_settings_and_system_text() -> None:
    body = request(
        instructions="Be brief.",
        input=[
            {"role": "developer", "content": "Use tools."},
            {"role": "system", "content": [{"type": "input_text", "text": "No chat."}]},
            {"role": "user", "content": "Weather?"},
        ],
        store=False,
        include=["reasoning.encrypted_content"],
        previous_response_id="resp_0",
        parallel_tool_calls=False,
        stream=True,
    )
    got = call("openai-responses", body).request
    assert got.system == "Be brief.\nUse tools.\nNo chat."
    assert (got.store, got.include, got.previous_response_id, got.parallel_tool_calls) == (
        False,
        ("reasoning.encrypted_content",),
        "resp_0",
        False,
    )
    assert (got.stream, got.declared_tools) == (True, ("get_weather", "web_search"))
    assert [(m.role, m.text, m.path) for m in got.messages] == [("user", "Weather?", "input[2]")]


def test_runs_of_items_become_model_and_tool_messages() -> None:
    items = [
        {"role": "user", "content": "Weather in Paris and Oslo?"},
        REASONING,
        {"type": "message", "role": "assistant", "content": [output_text("Checking.")]},
        CALL_A,
        CALL_B,
        OUTPUT_A,
        OUTPUT_B,
        {"role": "assistant", "content": "Sunny and rain."},
        {"role": "user", "content": [input_text("Thanks"), {"type": "input_image"}]},
    ]
    got = call("openai-responses", request(input=items))
    assert got.problems == ()
    user, model, tool, answer, thanks = got.request.messages
    assert (user.role, model.role, tool.role, answer.role, thanks.role) == (
        "user",
        "model",
        "tool",
        "model",
        "user",
    )
    assert (model.path, model.text, model.raw) == ("input[1]", "Checking.", items[1:5])
    assert [(c.id, c.item_id, c.arguments, c.path) for c in model.calls] == [
        ("call_1", "fc_1", {"city": "Paris"}, "input[3]"),
        ("call_2", "fc_2", {"city": "Oslo"}, "input[4]"),
    ]
    [reasoning] = model.opaque
    assert (reasoning.kind, reasoning.id, reasoning.token, reasoning.text) == (
        "reasoning",
        "rs_1",
        "gAAAA-1",
        None,
    )
    assert [(r.call_id, r.content, r.is_error, r.path) for r in tool.results] == [
        ("call_1", "sunny", False, "input[5]"),
        ("call_2", "rain", False, "input[6]"),
    ]
    assert (answer.text, thanks.text) == ("Sunny and rain.", "Thanks")


def test_bad_items_are_problems() -> None:
    items = [
        {"type": "hologram"},
        {**CALL_A, "arguments": "{not json"},
        {"role": "user", "content": [{"type": "input_smell"}]},
        {"type": "web_search_call", "id": "ws_1"},
    ]
    got = call("openai-responses", request(input=items))
    assert problems(got) == [
        "request:input[0]: unknown input item type 'hologram'",
        "request:input[1]: tool arguments are not valid JSON (Expecting property name enclosed "
        "in double quotes): '{not json'",
        "request:input[2].content[0]: unknown content part type 'input_smell'",
    ]
    assert got.request.messages[0].calls[0].arguments == "{not json"


# ---- responses -------------------------------------------------------------------------

MESSAGE = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "Checking.", "annotations": []}],
}
REASONING_OUT = {**REASONING, "summary": [{"type": "summary_text", "text": "Plan."}]}
RESPONSE = {
    "id": "resp_1",
    "object": "response",
    "status": "completed",
    "output": [REASONING_OUT, MESSAGE, CALL_A],
    "usage": {
        "input_tokens": 20,
        "output_tokens": 9,
        "output_tokens_details": {"reasoning_tokens": 4},
    },
}


def test_json_response() -> None:
    got = call("openai-responses", request(), RESPONSE).response
    assert (got.id, got.text, got.stop_reason, got.streamed) == (
        "resp_1",
        "Checking.",
        "completed",
        False,
    )
    assert [(c.id, c.item_id, c.arguments, c.path) for c in got.calls] == [
        ("call_1", "fc_1", {"city": "Paris"}, "output[2]")
    ]
    assert [(o.kind, o.id, o.token, o.text) for o in got.opaque] == [
        ("reasoning", "rs_1", "gAAAA-1", "Plan.")
    ]
    assert dict(got.usage) == {
        "input_tokens": 20,
        "output_tokens": 9,
        "output_tokens_details.reasoning_tokens": 4,
    }


def test_incomplete_response_gives_its_reason() -> None:
    body = {
        **RESPONSE,
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
    }
    assert call("openai-responses", request(), body).response.stop_reason == "max_output_tokens"


FAILED = {"code": "x", "message": "Failed."}


def ev(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return kind, {"type": kind, **fields}


STREAM = [
    ev("response.created", response={**RESPONSE, "status": "in_progress", "output": []}),
    ev("response.output_item.added", output_index=0, item={**CALL_A, "arguments": ""}),
    ev("response.function_call_arguments.delta", item_id="fc_1", delta='{"city":'),
    ev("response.function_call_arguments.delta", item_id="fc_1", delta='"Paris"}'),
    ev("response.output_item.done", output_index=0, item=CALL_A),
    ev("response.output_item.done", output_index=1, item=CALL_B),
    ev("response.completed", response={**RESPONSE, "output": [CALL_A, CALL_B]}),
]


def test_stream_uses_the_completed_response() -> None:
    got = call("openai-responses", request(stream=True), events=STREAM)
    assert got.problems == ()
    assert (got.response.streamed, got.response.id, got.response.stop_reason) == (
        True,
        "resp_1",
        "completed",
    )
    assert [c.id for c in got.response.calls] == ["call_1", "call_2"]
    assert got.response.usage["input_tokens"] == 20


def test_stream_without_completed_uses_the_done_items() -> None:
    got = call("openai-responses", request(), events=STREAM[:-1])
    assert [c.id for c in got.response.calls] == ["call_1", "call_2"]
    assert (got.response.id, got.response.stop_reason) == ("resp_1", None)
    assert problems(got) == ["response:events: stream ended without response.completed"]


@pytest.mark.parametrize(
    ("last", "expected"),
    [
        (
            ev("error", code="server_error", message="The server had an error"),
            ("The server had an error", "server_error"),
        ),
        (
            ev(
                "response.failed",
                response={**RESPONSE, "status": "failed", "output": [], "error": FAILED},
            ),
            ("Failed.", "x"),
        ),
    ],
)
def test_stream_failures(last: tuple[str, Any], expected: tuple[str, str]) -> None:
    got = call("openai-responses", request(), events=[*STREAM[:2], last])
    assert (got.response.error, got.response.error_type) == expected


def test_error_envelope() -> None:
    body = {
        "error": {
            "message": "No tool output found for function call call_1.",
            "type": "invalid_request_error",
            "param": "input",
            "code": None,
        }
    }
    got = call("openai-responses", request(), body, status=400).response
    assert (got.status, got.error, got.error_type) == (
        400,
        "No tool output found for function call call_1.",
        "invalid_request_error",
    )


def _call(item_id: str | None, call_id: str) -> dict[str, object]:
    item: dict[str, object] = {
        "type": "function_call",
        "call_id": call_id,
        "name": "f",
        "arguments": "{}",
    }
    if item_id is not None:
        item["id"] = item_id
    return item


def _output(call_id: str) -> dict[str, object]:
    return {"type": "function_call_output", "call_id": call_id, "output": "ok"}


R1 = "fc_0f4809b27460351d0169fab217db348196b9aaaa"
R1_OTHER = "fc_0f4809b27460351d0169fab21897dc8196960eee"
R2 = "fc_1111111111111111016a18a50aaf06819061ac4ec9"


@pytest.mark.parametrize(
    ("items", "order"),
    [
        # one response's two calls, each followed by its output (OpenAI's guide): one turn
        ([_call(R1, "a"), _output("a"), _call(R1_OTHER, "b"), _output("b")], [0, 2, 1, 3]),
        # two responses' calls: two turns, left as sent
        ([_call(R1, "a"), _output("a"), _call(R2, "b"), _output("b")], [0, 1, 2, 3]),
        # no item ids: nothing says they came from one response
        ([_call(None, "a"), _output("a"), _call(None, "b"), _output("b")], [0, 1, 2, 3]),
    ],
    ids=["same response", "two responses", "no ids"],
)
def test_interleaved_calls_of_one_response_fold_into_one_turn(
    items: list[dict[str, object]], order: list[int]
) -> None:
    from harness.trace.openai_responses import fold_interleaved

    assert [i for i, _ in fold_interleaved([{"role": "user", "content": "q"}, *items])][1:] == [
        n + 1 for n in order
    ]
