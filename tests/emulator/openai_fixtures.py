"""Builders shared by the OpenAI emulator tests: requests, items and messages, contexts, and
items minted by the emulator itself (for the checks that only judge our own ids)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from harness.emulator.openai_responses_render import Answer, build_answer
from harness.emulator.tokens import Minter
from harness.emulator.wire import Context, Step
from harness.scenario import Scenario, load_scenario
from harness.scenario.model import ScriptedCall, ScriptedTurn, ScriptOptions

MINTER = Minter("openai_tests/openai")
ASK = "Weather in Paris?"
PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
RESPONSES_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather for a city",
    "parameters": PARAMETERS,
}
CHAT_TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": PARAMETERS}}
INCLUDE = ["reasoning.encrypted_content"]


def ctx(*, stream: bool = False, reasoning: bool = False, model: str = "gpt-5.5") -> Context:
    return Context(
        model=model, stream=stream, options=ScriptOptions(openai_reasoning=reasoning), minter=MINTER
    )


def without(body: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k != key}


# Responses API ---------------------------------------------------------------------------


def user(text: str = ASK) -> dict[str, Any]:
    return {"role": "user", "content": text}


def call(
    call_id: str = "call_1", item_id: str | None = None, city: str = "Paris"
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "function_call",
        "call_id": call_id,
        "name": "get_weather",
        "arguments": f'{{"city":"{city}"}}',
    }
    if item_id is not None:
        item["id"] = item_id
    return item


def output(call_id: str = "call_1", text: str = "sunny") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def responses_request(*items: dict[str, Any], **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "gpt-5.5",
        "input": list(items) or [user()],
        "tools": [RESPONSES_TOOL],
        "store": False,
        "include": INCLUDE,
    }
    body.update(extra)
    return body


def minted(text: str = "", *, calls: int = 1, turn_index: int = 0) -> Answer:
    """A response the emulator minted (reasoning on): its output items as a loop gets them."""
    turn = ScriptedTurn(
        text=text,
        calls=tuple(
            ScriptedCall(name="get_weather", arguments={"city": c})
            for c in ("Paris", "Oslo")[:calls]
        ),
    )
    step = Step(turn=turn, user_index=0, turn_index=turn_index)
    return build_answer(step, responses_request(), ctx(reasoning=True))


def outputs_for(answer: Answer) -> list[dict[str, Any]]:
    return [output(i["call_id"]) for i in answer.output if i["type"] == "function_call"]


# Chat Completions ------------------------------------------------------------------------


def chat_user(text: str = ASK) -> dict[str, Any]:
    return {"role": "user", "content": text}


def chat_assistant(*call_ids: str, text: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if call_ids:
        message["tool_calls"] = [
            {
                "id": i,
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
            }
            for i in call_ids
        ]
    return message


def chat_tool(call_id: str = "call_1", text: str = "sunny") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def chat_request(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "gpt-4o",
        "messages": list(messages) or [chat_user()],
        "tools": [CHAT_TOOL],
    }
    body.update(extra)
    return body


# Scenarios for end-to-end tests ----------------------------------------------------------


def scenario(tmp_path: Path, name: str, text: str) -> Scenario:
    path = tmp_path / f"{name}.yaml"
    path.write_text(textwrap.dedent(text), "utf-8")
    return load_scenario(path)
