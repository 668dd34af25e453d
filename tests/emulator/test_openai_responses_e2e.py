"""The emulated Responses API end to end, through the real `openai` SDK over HTTP: tool calls
parse (streamed and not), results sent back are accepted, reasoning items resent verbatim are
accepted and dropped or modified ones rejected, tool_choice none gets the closing text, and
injected faults reach the SDK as the real ones would."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest

from harness.emulator.server import Emulator
from tests.emulator.openai_fixtures import INCLUDE, RESPONSES_TOOL, scenario

ASK = "Weather in Paris?"
CLOSING = "I reached the step limit for this answer. Shall I continue?"
ONE_TOOL = f"""
title: One tool then an answer (OpenAI Responses end to end)
rules: [L1]
script_options:
  openai: {{reasoning: true}}
tools:
  - name: get_weather
    description: Weather for a city
    effect: read
    parameters: {{type: object, properties: {{city: {{type: string}}}}, required: [city]}}
    result: sunny
messages:
  - text: {ASK}
    script:
      turns:
        - text: Let me check.
          calls: [{{name: get_weather, arguments: {{city: Paris}}}}]
        - answer: It is sunny in Paris.
      closing: {CLOSING}
    expect: {{ending: answer, rounds: 1, tools: [get_weather]}}
"""
PARALLEL = f"""
title: Two calls in one turn (OpenAI Responses end to end)
rules: [L1]
tools:
  - name: get_weather
    description: Weather for a city
    effect: read
    parameters: {{type: object, properties: {{city: {{type: string}}}}, required: [city]}}
    result: sunny
messages:
  - text: {ASK}
    script:
      turns:
        - calls:
            - {{name: get_weather, arguments: {{city: Paris}}}}
            - {{name: get_weather, arguments: {{city: Oslo}}}}
        - answer: Sunny in both.
      closing: {CLOSING}
    expect: {{ending: answer, rounds: 1, tools: [get_weather, get_weather]}}
"""

Create = Callable[..., Any]


@pytest.fixture
def run_id(run_id: str) -> str:
    """Test names repeat across the emulator test modules; the run id must not."""
    return "openai-responses-" + run_id


def client(emulator: Emulator, scenario_id: str, run_id: str) -> openai.OpenAI:
    url = emulator.base_urls(scenario_id, run_id)["openai"]
    return openai.OpenAI(base_url=url, api_key="test", max_retries=0)


def create_plain(c: openai.OpenAI, **kwargs: Any) -> Any:
    return c.responses.create(**kwargs)


def create_streamed(c: openai.OpenAI, **kwargs: Any) -> Any:
    completed = [
        e.response
        for e in c.responses.create(stream=True, **kwargs)
        if e.type == "response.completed"
    ]
    assert len(completed) == 1
    return completed[0]


def stream_helper(c: openai.OpenAI, **kwargs: Any) -> Any:
    with c.responses.stream(**kwargs) as stream:
        deltas = [e.delta for e in stream if e.type == "response.function_call_arguments.delta"]
        final = stream.get_final_response()
    calls = [i.arguments for i in final.output if i.type == "function_call"]
    assert "".join(deltas) == "".join(calls)
    return final


MODES = {"create": create_plain, "create_stream": create_streamed, "stream_helper": stream_helper}


def ask(**extra: Any) -> dict[str, Any]:
    return {
        "model": "gpt-5.5",
        "input": [{"role": "user", "content": ASK}],
        "tools": [RESPONSES_TOOL],
        "store": False,
        "include": INCLUDE,
        **extra,
    }


def resent(response: Any) -> list[dict[str, Any]]:
    """The output items as a loop sends them back (providers.md §3: exclude_none)."""
    return [item.model_dump(exclude_none=True) for item in response.output]


def answered(response: Any, result: str = "sunny") -> list[dict[str, Any]]:
    return [
        {"type": "function_call_output", "call_id": i.call_id, "output": result}
        for i in response.output
        if i.type == "function_call"
    ]


def statuses(emulator: Emulator, run_id: str) -> list[int]:
    return [entry.status for entry in emulator.log(run_id)]


@pytest.fixture
def one_tool(emulator: Emulator, tmp_path: Path) -> str:
    emulator.add(scenario(tmp_path, "openai_responses_e2e_one_tool", ONE_TOOL))
    return "openai_responses_e2e_one_tool"


@pytest.mark.parametrize("mode", MODES)
def test_tool_call_then_answer(emulator: Emulator, one_tool: str, run_id: str, mode: str) -> None:
    c, create = client(emulator, one_tool, run_id), MODES[mode]
    first = create(c, **ask())
    reasoning, message, call = first.output
    assert reasoning.type == "reasoning" and reasoning.encrypted_content.startswith("gAAAAAB")
    assert message.type == "message" and first.output_text == "Let me check."
    assert (call.type, call.name, json.loads(call.arguments)) == (
        "function_call",
        "get_weather",
        {"city": "Paris"},
    )
    assert call.id.startswith("fc_") and call.call_id.startswith("call_")
    assert call.status == "completed"

    body = ask()
    body["input"] += resent(first) + answered(first)
    second = create(c, **body)
    assert second.output_text == "It is sunny in Paris."
    assert [i.type for i in second.output] == ["reasoning", "message"]
    assert second.usage.total_tokens == second.usage.input_tokens + second.usage.output_tokens
    assert statuses(emulator, run_id) == [200, 200]


@pytest.mark.parametrize("mode", ["create", "stream_helper"])
def test_parallel_calls(emulator: Emulator, tmp_path: Path, run_id: str, mode: str) -> None:
    emulator.add(scenario(tmp_path, "openai_responses_e2e_parallel", PARALLEL))
    c, create = client(emulator, "openai_responses_e2e_parallel", run_id), MODES[mode]
    first = create(c, **ask())
    calls = [i for i in first.output if i.type == "function_call"]
    assert [json.loads(i.arguments)["city"] for i in calls] == ["Paris", "Oslo"]
    assert len({i.call_id for i in calls}) == 2 and len({i.id for i in calls}) == 2
    body = ask()
    body["input"] += resent(first) + answered(first)
    assert create(c, **body).output_text == "Sunny in both."
    assert statuses(emulator, run_id) == [200, 200]


@pytest.mark.parametrize("mode", ["create", "stream_helper"])
def test_tool_choice_none_gets_the_closing_text(
    emulator: Emulator, one_tool: str, run_id: str, mode: str
) -> None:
    c, create = client(emulator, one_tool, run_id), MODES[mode]
    first = create(c, **ask())
    body = ask(tool_choice="none")
    body["input"] += resent(first) + answered(first, "Not executed: the step limit was reached.")
    closing = create(c, **body)
    assert closing.output_text == CLOSING
    assert not [i for i in closing.output if i.type == "function_call"]
    assert statuses(emulator, run_id) == [200, 200]


def _without(items: list[dict[str, Any]], item_type: str) -> list[dict[str, Any]]:
    return [i for i in items if i["type"] != item_type]


def _modified(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    blob = items[0]["encrypted_content"]
    middle = len(blob) // 2
    swapped = "A" if blob[middle] != "A" else "B"
    return [
        {**items[0], "encrypted_content": blob[:middle] + swapped + blob[middle + 1 :]},
        *items[1:],
    ]


def _blob_removed(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in items[0].items() if k != "encrypted_content"}, *items[1:]]


# (rule, how the output items are changed, expected SDK error, status, message start)
BROKEN_REASONING = [
    ("O5", lambda items: _without(items, "reasoning"), openai.BadRequestError, 400, "Item 'msg_"),
    ("O6", lambda items: _without(items, "message"), openai.BadRequestError, 400, "Item 'rs_"),
    (
        "invalid_encrypted_content",
        _modified,
        openai.BadRequestError,
        400,
        "The encrypted content for item rs_",
    ),
    ("O3", _blob_removed, openai.NotFoundError, 404, "Item with id 'rs_"),
]


@pytest.mark.parametrize(
    ("rule", "change", "error", "status", "start"),
    BROKEN_REASONING,
    ids=[b[0] for b in BROKEN_REASONING],
)
def test_reasoning_items_must_come_back_verbatim(
    emulator: Emulator,
    one_tool: str,
    run_id: str,
    rule: str,
    change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
    error: type[Exception],
    status: int,
    start: str,
) -> None:
    c = client(emulator, one_tool, run_id)
    first = c.responses.create(**ask())
    body = ask()
    body["input"] += change(resent(first)) + answered(first)
    with pytest.raises(error) as caught:
        c.responses.create(**body)
    assert isinstance(caught.value, openai.APIStatusError)
    assert caught.value.status_code == status
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["message"].startswith(start)
    log = emulator.log(run_id)
    assert [e.status for e in log] == [200, status]
    assert log[-1].error is not None and log[-1].error.rule == rule
    body = ask()
    body["input"] += resent(first) + answered(first)  # verbatim is accepted
    assert c.responses.create(**body).output_text == "It is sunny in Paris."


def test_previous_response_id_is_unknown(emulator: Emulator, one_tool: str, run_id: str) -> None:
    c = client(emulator, one_tool, run_id)
    first = c.responses.create(**ask())
    with pytest.raises(openai.BadRequestError) as caught:
        c.responses.create(**ask(previous_response_id=first.id))
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["code"] == "previous_response_not_found"
    assert caught.value.body["message"] == f"Previous response with id '{first.id}' not found."


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("store", [True, None])
def test_a_stored_response_is_continued_by_its_id(
    emulator: Emulator, one_tool: str, run_id: str, mode: str, store: bool | None
) -> None:
    """Under `store` true or unset the run keeps each response: the next request sends only
    the call's output after `previous_response_id`, as on the real API (realwire2)."""
    c, create = client(emulator, one_tool, run_id), MODES[mode]
    settings = {} if store is None else {"store": store}
    asked = {k: v for k, v in ask().items() if k != "store"}
    first = create(c, **asked, **settings)
    assert first.store is True
    second = create(
        c,
        model="gpt-5.5",
        previous_response_id=first.id,
        input=answered(first),
        tools=[RESPONSES_TOOL],
        **settings,
    )
    assert second.output_text == "It is sunny in Paris."
    assert second.previous_response_id == first.id
    assert statuses(emulator, run_id) == [200, 200]


def test_a_stored_chain_still_needs_every_call_answered(
    emulator: Emulator, one_tool: str, run_id: str
) -> None:
    """The stored call counts as sent: continuing without its output is O1."""
    c = client(emulator, one_tool, run_id)
    first = c.responses.create(**ask(store=True))
    with pytest.raises(openai.BadRequestError) as caught:
        c.responses.create(
            model="gpt-5.5",
            previous_response_id=first.id,
            input=[{"role": "user", "content": "And in Oslo?"}],
            tools=[RESPONSES_TOOL],
        )
    [call_id] = [i.call_id for i in first.output if i.type == "function_call"]
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["message"] == f"No tool output found for function call {call_id}."


def test_a_stored_response_is_unknown_to_another_run(
    emulator: Emulator, one_tool: str, run_id: str
) -> None:
    first = client(emulator, one_tool, run_id).responses.create(**ask(store=True))
    other = client(emulator, one_tool, run_id + "-other")
    with pytest.raises(openai.BadRequestError) as caught:
        other.responses.create(
            model="gpt-5.5", previous_response_id=first.id, input=answered(first)
        )
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["message"] == f"Previous response with id '{first.id}' not found."
    assert caught.value.body["param"] == "previous_response_id"


def test_malformed_json_body(emulator: Emulator, one_tool: str, run_id: str) -> None:
    c = client(emulator, one_tool, run_id)
    with pytest.raises(openai.BadRequestError) as caught:
        c.post(
            "/responses",
            cast_to=object,
            content=b'{"model": "gpt-5.5", "input": ',
            options={"headers": {"content-type": "application/json"}},
        )
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["message"].startswith("We could not parse the JSON body")


# faults ----------------------------------------------------------------------------------


def fault_scenario(kind: str, extra: str = "") -> str:
    return ONE_TOOL.replace(
        "        - text: Let me check.\n",
        f"        - text: Let me check.\n          fault: {{kind: {kind}{extra}}}\n",
    ).replace("(OpenAI Responses end to end)", f"({kind} fault)")


FAULTS: list[tuple[str, str, type[Exception], int]] = [
    ("rate_limit", ", retry_after: 2", openai.RateLimitError, 429),
    ("server_error", "", openai.InternalServerError, 500),
    ("overloaded", "", openai.InternalServerError, 503),
]


@pytest.mark.parametrize(("kind", "extra", "error", "status"), FAULTS, ids=[f[0] for f in FAULTS])
def test_status_faults_then_success(
    emulator: Emulator,
    tmp_path: Path,
    run_id: str,
    kind: str,
    extra: str,
    error: type[Exception],
    status: int,
) -> None:
    sid = f"openai_responses_e2e_fault_{kind}"
    emulator.add(scenario(tmp_path, sid, fault_scenario(kind, extra)))
    c = client(emulator, sid, run_id)
    with pytest.raises(error) as caught:
        c.responses.create(**ask())
    assert isinstance(caught.value, openai.APIStatusError)
    assert caught.value.status_code == status
    if kind == "rate_limit":
        assert caught.value.response.headers["retry-after"] == "2"
        assert isinstance(caught.value.body, dict)
        assert caught.value.body["code"] == "rate_limit_exceeded"
    assert c.responses.create(**ask()).output_text == "Let me check."  # served once only
    assert statuses(emulator, run_id) == [status, 200]


def test_stream_cut_mid_event(emulator: Emulator, tmp_path: Path, run_id: str) -> None:
    sid = "openai_responses_e2e_fault_stream_cut"
    emulator.add(scenario(tmp_path, sid, fault_scenario("stream_cut")))
    c = client(emulator, sid, run_id)
    # The SDK reports the broken body as a connection error (httpx's, wrapped).
    with pytest.raises(openai.APIConnectionError), c.responses.stream(**ask()) as stream:
        for _ in stream:
            pass
    assert stream_helper(c, **ask()).output_text == "Let me check."


def test_slow_reply_still_arrives(emulator: Emulator, tmp_path: Path, run_id: str) -> None:
    sid = "openai_responses_e2e_fault_slow"
    emulator.add(scenario(tmp_path, sid, fault_scenario("slow", ", delay: 0.2")))
    c = client(emulator, sid, run_id)
    assert c.responses.create(**ask()).output_text == "Let me check."
    assert [e.fault for e in emulator.log(run_id)] == ["slow"]
