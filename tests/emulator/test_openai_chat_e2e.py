"""The emulated Chat Completions API end to end, through the real `openai` SDK over HTTP:
tool calls parse (streamed with the SDK's helper and raw chunks, and not), results sent back
are accepted, tool_choice none gets the closing text, and faults reach the SDK."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest

from harness.emulator.server import Emulator
from tests.emulator.openai_fixtures import CHAT_TOOL, scenario

ASK = "Weather in Paris and Oslo?"
CLOSING = "I reached the step limit for this answer. Shall I continue?"
SCENARIO = f"""
title: Two calls then an answer (OpenAI Chat end to end)
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
        - text: Checking both.
          calls:
            - {{name: get_weather, arguments: {{city: Paris}}}}
            - {{name: get_weather, arguments: {{city: Oslo}}}}
        - calls: [{{name: get_weather, arguments: {{city: Rome}}}}]
        - answer: Sunny everywhere.
      closing: {CLOSING}
    expect: {{ending: answer, rounds: 2, tools: [get_weather, get_weather, get_weather]}}
"""
SCENARIO_ID = "openai_chat_e2e_two_rounds"


@pytest.fixture
def run_id(run_id: str) -> str:
    """Test names repeat across the emulator test modules; the run id must not."""
    return "openai-chat-" + run_id


def client(emulator: Emulator, scenario_id: str, run_id: str) -> openai.OpenAI:
    url = emulator.base_urls(scenario_id, run_id)["openai"]
    return openai.OpenAI(base_url=url, api_key="test", max_retries=0)


def complete_plain(c: openai.OpenAI, **kwargs: Any) -> Any:
    return c.chat.completions.create(**kwargs).choices[0].message


def complete_helper(c: openai.OpenAI, **kwargs: Any) -> Any:
    with c.chat.completions.stream(stream_options={"include_usage": True}, **kwargs) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    assert final.usage is not None and final.usage.total_tokens > 0
    return final.choices[0].message


def complete_chunks(c: openai.OpenAI, **kwargs: Any) -> Any:
    """Accumulate raw chunks as a hand-written loop does: tool calls keyed by index."""
    text, finish = "", None
    calls: dict[int, dict[str, Any]] = {}
    for chunk in c.chat.completions.create(stream=True, **kwargs):
        for choice in chunk.choices:
            delta = choice.delta
            text += delta.content or ""
            for tc in delta.tool_calls or []:
                entry = calls.setdefault(tc.index, {"id": None, "name": None, "arguments": ""})
                if tc.id:
                    assert entry["id"] is None, "id sent twice"
                    entry["id"], entry["name"] = tc.id, tc.function.name
                entry["arguments"] += tc.function.arguments or ""
            finish = choice.finish_reason or finish
    assert finish == ("tool_calls" if calls else "stop")
    tool_calls = [
        {
            "id": c_["id"],
            "type": "function",
            "function": {"name": c_["name"], "arguments": c_["arguments"]},
        }
        for _, c_ in sorted(calls.items())
    ]
    return openai.types.chat.ChatCompletionMessage.model_validate(
        {"role": "assistant", "content": text or None, "tool_calls": tool_calls or None}
    )


MODES: dict[str, Callable[..., Any]] = {
    "create": complete_plain,
    "stream_helper": complete_helper,
    "raw_chunks": complete_chunks,
}


def ask(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": messages, "tools": [CHAT_TOOL], **extra}


def assistant_turn(message: Any) -> dict[str, Any]:
    turn: dict[str, Any] = {"role": "assistant", "content": message.content}
    turn["tool_calls"] = [
        {
            "id": t.id,
            "type": "function",
            "function": {"name": t.function.name, "arguments": t.function.arguments},
        }
        for t in message.tool_calls or []
    ]
    return turn


def results(message: Any, text: str = "sunny") -> list[dict[str, Any]]:
    return [{"role": "tool", "tool_call_id": t.id, "content": text} for t in message.tool_calls]


@pytest.fixture
def two_rounds(emulator: Emulator, tmp_path: Path) -> str:
    emulator.add(scenario(tmp_path, SCENARIO_ID, SCENARIO))
    return SCENARIO_ID


@pytest.mark.parametrize("mode", MODES)
def test_calls_results_and_answer(
    emulator: Emulator, two_rounds: str, run_id: str, mode: str
) -> None:
    c, complete = client(emulator, two_rounds, run_id), MODES[mode]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": ASK},
    ]
    first = complete(c, **ask(messages))
    assert first.content == "Checking both."
    assert [(t.function.name, json.loads(t.function.arguments)) for t in first.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Oslo"}),
    ]
    assert all(t.id.startswith("call_") for t in first.tool_calls)
    messages += [assistant_turn(first), *results(first)]

    second = complete(c, **ask(messages))
    assert second.content is None
    assert [json.loads(t.function.arguments) for t in second.tool_calls] == [{"city": "Rome"}]
    messages += [assistant_turn(second), *results(second)]

    third = complete(c, **ask(messages))
    assert third.content == "Sunny everywhere." and not third.tool_calls
    assert [e.status for e in emulator.log(run_id)] == [200, 200, 200]


@pytest.mark.parametrize("mode", ["create", "stream_helper"])
def test_tool_choice_none_gets_the_closing_text(
    emulator: Emulator, two_rounds: str, run_id: str, mode: str
) -> None:
    c, complete = client(emulator, two_rounds, run_id), MODES[mode]
    messages: list[dict[str, Any]] = [{"role": "user", "content": ASK}]
    first = complete(c, **ask(messages))
    messages += [assistant_turn(first), *results(first, "Not executed: step limit reached.")]
    closing = complete(c, **ask(messages, tool_choice="none"))
    assert closing.content == CLOSING and not closing.tool_calls
    assert [e.status for e in emulator.log(run_id)] == [200, 200]


def test_unanswered_calls_are_rejected(emulator: Emulator, two_rounds: str, run_id: str) -> None:
    c = client(emulator, two_rounds, run_id)
    messages: list[dict[str, Any]] = [{"role": "user", "content": ASK}]
    first = complete_plain(c, **ask(messages))
    messages += [assistant_turn(first), results(first)[0]]  # the second call left unanswered
    with pytest.raises(openai.BadRequestError) as caught:
        c.chat.completions.create(**ask(messages))
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["message"].endswith(
        f"did not have response messages: {first.tool_calls[1].id}"
    )
    assert caught.value.body["param"] == "messages.[2].role"  # the last message
    entry = emulator.log(run_id)[-1]
    assert entry.status == 400 and entry.error is not None and entry.error.rule == "C1"


def test_rate_limit_fault(emulator: Emulator, tmp_path: Path, run_id: str) -> None:
    sid = "openai_chat_e2e_rate_limit"
    faulty = SCENARIO.replace(
        "        - text: Checking both.\n",
        "        - text: Checking both.\n          fault: {kind: rate_limit, times: 2}\n",
    )
    emulator.add(scenario(tmp_path, sid, faulty))
    c = client(emulator, sid, run_id)
    body = ask([{"role": "user", "content": ASK}])
    for _ in range(2):
        with pytest.raises(openai.RateLimitError) as caught:
            c.chat.completions.create(**body)
        assert caught.value.response.headers["retry-after"] == "1"
    assert complete_plain(c, **body).content == "Checking both."
    assert [e.status for e in emulator.log(run_id)] == [429, 429, 200]


def test_stream_cut_mid_event(emulator: Emulator, tmp_path: Path, run_id: str) -> None:
    sid = "openai_chat_e2e_stream_cut"
    faulty = SCENARIO.replace(
        "        - text: Checking both.\n",
        "        - text: Checking both.\n          fault: {kind: stream_cut}\n",
    )
    emulator.add(scenario(tmp_path, sid, faulty))
    c = client(emulator, sid, run_id)
    body = ask([{"role": "user", "content": ASK}])
    with pytest.raises(openai.APIConnectionError):
        complete_helper(c, **body)
    assert complete_helper(c, **body).content == "Checking both."
