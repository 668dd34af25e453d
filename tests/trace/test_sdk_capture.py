"""What the official SDKs really send and receive (captured over HTTP to the emulator) parses
without a problem, and the trace sees the same calls, ids and text the SDK handed back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from harness.emulator.server import Emulator
from harness.loop.clients import make_clients
from harness.scenario.model import Provider
from harness.trace.parse import parse_trace

SCENARIO = "one_tool_then_answer"
QUESTION = "How is my bench press going?"
SCHEMA = {"type": "object", "properties": {"exercise": {"type": "string"}}}
NAME = "get_workout_history"

# One round trip per API: ask, send each call's result back, read the answer.
# Returns the call ids the SDK parsed and the answer text.
Round = Callable[[Any, bool], tuple[list[str | None], str]]


def dump(block: Any) -> Any:
    """A response block as it goes back (providers.md §2: `model_dump(exclude_none=True)`)."""
    return block.model_dump(exclude_none=True)


def anthropic_round(client: Any, stream: bool) -> tuple[list[str | None], str]:
    tools = [{"name": NAME, "input_schema": SCHEMA}]
    messages: list[Any] = [{"role": "user", "content": QUESTION}]

    def ask() -> Any:
        if not stream:
            return client.messages.create(
                model="claude-x", max_tokens=100, messages=messages, tools=tools
            )
        with client.messages.stream(
            model="claude-x", max_tokens=100, messages=messages, tools=tools
        ) as events:
            return events.get_final_message()

    first = ask()
    ids = [b.id for b in first.content if b.type == "tool_use"]
    messages.append({"role": "assistant", "content": [dump(b) for b in first.content]})
    results = [{"type": "tool_result", "tool_use_id": i, "content": "ok"} for i in ids]
    messages.append({"role": "user", "content": results})
    answer = ask()
    return list(ids), "".join(b.text for b in answer.content if b.type == "text")


def responses_round(client: Any, stream: bool) -> tuple[list[str | None], str]:
    tools = [{"type": "function", "name": NAME, "parameters": SCHEMA}]
    items: list[Any] = [{"role": "user", "content": QUESTION}]
    options = {"model": "gpt-x", "tools": tools, "store": False}

    def ask() -> Any:
        if not stream:
            return client.responses.create(input=items, **options)
        with client.responses.stream(input=items, **options) as events:
            return events.get_final_response()

    first = ask()
    ids = [i.call_id for i in first.output if i.type == "function_call"]
    items.extend(i.model_dump(exclude_none=True) for i in first.output)
    items.extend({"type": "function_call_output", "call_id": i, "output": "ok"} for i in ids)
    return list(ids), ask().output_text


def chat_round(client: Any, stream: bool) -> tuple[list[str | None], str]:
    tools = [{"type": "function", "function": {"name": NAME, "parameters": SCHEMA}}]
    messages: list[Any] = [{"role": "user", "content": QUESTION}]

    def ask() -> Any:
        if not stream:
            return client.chat.completions.create(model="gpt-x", messages=messages, tools=tools)
        with client.chat.completions.stream(
            model="gpt-x", messages=messages, tools=tools
        ) as events:
            return events.get_final_completion()

    message = ask().choices[0].message
    ids = [t.id for t in message.tool_calls or []]
    messages.append(message.model_dump(exclude_none=True))
    messages.extend({"role": "tool", "tool_call_id": i, "content": "ok"} for i in ids)
    return list(ids), ask().choices[0].message.content or ""


def gemini_round(client: Any, stream: bool) -> tuple[list[str | None], str]:
    from google.genai import types

    declaration = types.FunctionDeclaration(name=NAME, parameters_json_schema=SCHEMA)
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[declaration])], system_instruction="Be brief."
    )
    contents = [types.Content(role="user", parts=[types.Part(text=QUESTION)])]

    def ask() -> Any:
        if not stream:
            reply = client.models.generate_content(model="g", contents=contents, config=config)
            return reply.candidates[0].content
        chunks = client.models.generate_content_stream(model="g", contents=contents, config=config)
        parts = [p for c in chunks for p in c.candidates[0].content.parts or []]
        return types.Content(role="model", parts=parts)

    turn = ask()
    calls = [p.function_call for p in turn.parts or [] if p.function_call]
    contents.append(turn)
    responses = [
        types.Part(
            function_response=types.FunctionResponse(
                id=c.id, name=c.name, response={"output": "ok"}
            )
        )
        for c in calls
    ]
    contents.append(types.Content(role="user", parts=responses))
    answer = ask()
    return [c.id for c in calls], "".join(p.text or "" for p in answer.parts or [])


ROUNDS: dict[str, tuple[Provider, Round]] = {
    "anthropic": ("anthropic", anthropic_round),
    "openai-responses": ("openai", responses_round),
    "openai-chat": ("openai", chat_round),
    "gemini": ("gemini", gemini_round),
}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("api", list(ROUNDS))
def test_sdk_traffic_parses_as_the_sdk_read_it(
    emulator: Emulator, run_id: str, api: str, stream: bool
) -> None:
    provider, round_trip = ROUNDS[api]
    base_url = emulator.base_urls(SCENARIO, run_id)[provider]
    client = make_clients(provider, base_url=base_url, api_key="test-key", max_retries=0).sync
    ids, answer = round_trip(client, stream)
    trace = parse_trace(emulator.exchanges(run_id))
    assert [c.problems for c in trace.calls] == [(), ()] and trace.problems == ()
    first, second = trace.calls
    assert {first.request.api, second.request.api} == {api}
    assert (first.response.streamed, first.request.stream) == (stream, stream)
    assert [c.id for c in first.response.calls] == ids and ids
    assert [r.call_id for r in second.request.messages[-1].results] == ids
    assert [m.role for m in second.request.messages] == ["user", "model", "tool"]
    assert second.response.text == answer and answer
