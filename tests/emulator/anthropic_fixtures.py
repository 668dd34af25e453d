"""Request builders shared by the Anthropic emulator tests (no tests of its own)."""

from __future__ import annotations

import copy
from typing import Any

from harness.emulator.anthropic_render import thinking_block
from harness.emulator.tokens import Minter
from harness.emulator.wire import Context
from harness.scenario.model import ScriptOptions

MODEL = "claude-sonnet-4-5"
WEATHER = {
    "name": "get_weather",
    "description": "Weather for a city.",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
TIME = {"name": "get_time", "description": "The time.", "input_schema": {"type": "object"}}
ASK = {"role": "user", "content": "Weather in Paris?"}
MINTER = Minter("tests/anthropic")
THOUGHT = "The user needs data I do not have yet. I will call get_weather."


def ctx(stream: bool = False, thinking: bool = False, model: str = MODEL) -> Context:
    return Context(
        model=model,
        stream=stream,
        options=ScriptOptions(anthropic_thinking=thinking),
        minter=MINTER,
    )


def use(call_id: str, city: str = "Paris") -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "get_weather", "input": {"city": city}}


def result(call_id: str, content: str = "sunny") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": content}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def request(*messages: dict[str, Any], **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": MODEL,
        "max_tokens": 2048,
        "tools": [WEATHER, TIME],
        "messages": list(messages) or [ASK],
    }
    body.update(fields)
    return copy.deepcopy(body)


def without(body: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: val for k, val in body.items() if k != key}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def round_two(*, with_thinking: bool = False, **fields: Any) -> dict[str, Any]:
    """A correct second request: the call turn sent back, then its result."""
    turn = [use("toolu_01A")]
    if with_thinking:
        turn.insert(0, thinking_block(THOUGHT, MINTER))
    return request(ASK, assistant(*turn), user(result("toolu_01A")), **fields)


THINKING = {"type": "enabled", "budget_tokens": 1024}
