"""An async agent loop written against harness's loop contract, for all three providers.

`async def run(call)` is the whole contract: the harness awaits it (a fresh event loop per user
message). It talks to the model only through the async official clients the harness hands it
(`call.async_client`: `AsyncAnthropic`, `AsyncOpenAI`, and google-genai's `client.aio`),
streams when `call.stream` says so, runs the tools one at a time, and at the round budget
answers the pending requests without running them and makes one text-only closing call.
Saved history goes back as text (the last 20 messages); Gemini requests over
`call.request_size_limit` drop their oldest exchanges (L9). Check it with:

    harness run --loop examples.async_loop:run                   # the committed cassettes
    harness run --source scripted --loop examples.async_loop:run # the emulator
"""

from __future__ import annotations

import json
from typing import Any

from harness.chat import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from harness.loop import LoopCall, LoopResult, ToolError

NOT_EXECUTED = "Not executed: the step limit for this answer was reached."
LIMIT = (
    "You reached the step limit for this answer. Answer with what you know, explain the "
    "limit, say what was left undone, and ask whether to continue."
)


async def run(call: LoopCall) -> LoopResult:
    """The contract: one user message in, the answer and the saved chat out."""
    loop = {"anthropic": _anthropic, "openai": _openai, "gemini": _gemini}[call.provider]
    try:
        return await loop(call)
    except Exception as exc:  # a provider error is reported, never shown as the answer (L15)
        chat = (*call.history, UserMessage(text=call.message))
        return LoopResult(answer="", chat=chat, error=f"{type(exc).__name__}: {exc}")


def _run_tool(call: LoopCall, name: str, args: dict[str, Any]) -> tuple[str, bool]:
    tool = next((t for t in call.tools if t.name == name), None)
    if tool is None:
        return f"Unknown tool: {name}", True
    try:
        return tool(args), False
    except ToolError as exc:
        return str(exc), True


def _history_text(call: LoopCall) -> list[tuple[str, str]]:
    """The text of the last 20 saved messages, starting at a user message."""
    picked = [m for m in call.history[-20:] if not isinstance(m, ToolMessage)]
    out = [("user" if isinstance(m, UserMessage) else "assistant", m.text) for m in picked]
    out = [(role, text) for role, text in out if text]
    while out and out[0][0] != "user":
        out.pop(0)
    return out


def _finish(call: LoopCall, answer: str, steps: list[Message]) -> LoopResult:
    chat = (*call.history, UserMessage(text=call.message), *steps, AssistantMessage(text=answer))
    return LoopResult(answer=answer, chat=chat)


def _results(
    call: LoopCall, number: int, requests: list[tuple[str, str, dict[str, Any]]]
) -> list[tuple[str, bool]]:
    """Each request's result, in order, one at a time; past the budget, none runs (L11)."""
    if number == call.max_rounds:
        return [(NOT_EXECUTED, True) for _ in requests]
    return [_run_tool(call, name, args) for _, name, args in requests]


async def _anthropic(call: LoopCall) -> LoopResult:
    tools = [
        {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
        for t in call.tools
    ]
    messages: list[Any] = [{"role": r, "content": t} for r, t in _history_text(call)]
    messages.append({"role": "user", "content": call.message})
    steps: list[Message] = []
    for number in range(call.max_rounds + 2):
        closing = number == call.max_rounds + 1
        request = {
            "model": call.model,
            "max_tokens": 1024,
            "tools": tools,
            "messages": messages,
            "system": f"{call.system}\n\n{LIMIT}" if closing else call.system,
            "tool_choice": {"type": "none"} if closing else {"type": "auto"},
        }
        if call.stream:
            async with call.async_client.messages.stream(**request) as stream:
                reply = await stream.get_final_message()
        else:
            reply = await call.async_client.messages.create(**request)
        text = "".join(b.text for b in reply.content if b.type == "text")
        uses = [(b.id, b.name, b.input) for b in reply.content if b.type == "tool_use"]
        if closing or not uses:
            return _finish(call, text, steps)
        calls = tuple(ToolCall(id=i, name=n, arguments=a) for i, n, a in uses)
        steps.append(AssistantMessage(text=text, tool_calls=calls))
        results = []
        for (use_id, name, _), (out, failed) in zip(
            uses, _results(call, number, uses), strict=True
        ):
            results.append(
                {"type": "tool_result", "tool_use_id": use_id, "content": out, "is_error": failed}
            )
            steps.append(ToolMessage(call_id=use_id, name=name, content=out, is_error=failed))
        content = [b.model_dump(exclude_none=True) for b in reply.content]
        messages += [
            {"role": "assistant", "content": content},
            {"role": "user", "content": results},
        ]
    raise AssertionError("unreachable")


async def _openai(call: LoopCall) -> LoopResult:
    tools = [
        {
            "type": "function",
            "name": t.name,
            "description": t.description,
            "parameters": dict(t.parameters),
            "strict": False,
        }
        for t in call.tools
    ]
    items: list[Any] = [{"role": r, "content": t} for r, t in _history_text(call)]
    items.append({"role": "user", "content": call.message})
    steps: list[Message] = []
    for number in range(call.max_rounds + 2):
        closing = number == call.max_rounds + 1
        request = {
            "model": call.model,
            "input": items,
            "tools": tools,
            "store": False,  # L10: no state at OpenAI; reasoning comes back encrypted
            "include": ["reasoning.encrypted_content"],
            "instructions": f"{call.system}\n\n{LIMIT}" if closing else call.system,
            "tool_choice": "none" if closing else "auto",
        }
        if call.stream:
            async with call.async_client.responses.stream(**request) as stream:
                reply = await stream.get_final_response()
        else:
            reply = await call.async_client.responses.create(**request)
        found = [o for o in reply.output if o.type == "function_call"]
        if closing or not found:
            return _finish(call, reply.output_text, steps)
        items += [o.model_dump(exclude_none=True) for o in reply.output]
        requests = [(c.call_id, c.name, json.loads(c.arguments)) for c in found]
        calls = tuple(ToolCall(id=i, name=n, arguments=a) for i, n, a in requests)
        steps.append(AssistantMessage(text=reply.output_text, tool_calls=calls))
        for (call_id, name, _), (out, failed) in zip(
            requests, _results(call, number, requests), strict=True
        ):
            items.append({"type": "function_call_output", "call_id": call_id, "output": out})
            steps.append(ToolMessage(call_id=call_id, name=name, content=out, is_error=failed))
    raise AssertionError("unreachable")


async def _gemini(call: LoopCall) -> LoopResult:
    from google.genai import types

    declarations = [
        types.FunctionDeclaration(
            name=t.name, description=t.description, parameters_json_schema=dict(t.parameters)
        )
        for t in call.tools
    ]
    history = [
        types.Content(role="model" if r == "assistant" else "user", parts=[types.Part(text=t)])
        for r, t in _history_text(call)
    ]
    active = [types.Content(role="user", parts=[types.Part(text=call.message)])]
    steps: list[Message] = []
    for number in range(call.max_rounds + 2):
        closing = number == call.max_rounds + 1
        config = types.GenerateContentConfig(
            system_instruction=f"{call.system}\n\n{LIMIT}" if closing else call.system,
            tools=[types.Tool(function_declarations=declarations)],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            tool_config=types.ToolConfig(
                function_calling_config=types.FunctionCallingConfig(
                    mode=types.FunctionCallingConfigMode.NONE
                    if closing
                    else types.FunctionCallingConfigMode.AUTO
                )
            ),
        )
        contents = _fit(history, active, config, call.request_size_limit)
        content = await _generate(call, contents, config)
        parts = content.parts or []
        fcalls = [p.function_call for p in parts if p.function_call]
        text = "".join(p.text or "" for p in parts if not p.thought)
        if closing or not fcalls:
            return _finish(call, text, steps)
        active.append(content)  # unchanged: thought signatures travel back as they came
        ids = [fc.id or f"local-{number}-{i}" for i, fc in enumerate(fcalls)]
        requests = [
            (i, fc.name or "", dict(fc.args or {})) for i, fc in zip(ids, fcalls, strict=True)
        ]
        calls = tuple(ToolCall(id=i, name=n, arguments=a) for i, n, a in requests)
        steps.append(AssistantMessage(text=text, tool_calls=calls))
        responses = []
        for fc, (call_id, name, _), (out, failed) in zip(
            fcalls, requests, _results(call, number, requests), strict=True
        ):
            responses.append(
                types.Part(
                    function_response=types.FunctionResponse(
                        id=fc.id, name=name, response={"error" if failed else "output": out}
                    )
                )
            )
            steps.append(ToolMessage(call_id=call_id, name=name, content=out, is_error=failed))
        active.append(types.Content(role="user", parts=responses))
    raise AssertionError("unreachable")


async def _generate(call: LoopCall, contents: list[Any], config: Any) -> Any:
    """One model content: the whole reply, or every part of a stream in order."""
    from google.genai import types

    models = call.async_client.aio.models
    if not call.stream:
        reply = await models.generate_content(model=call.model, contents=contents, config=config)
        return reply.candidates[0].content
    parts: list[Any] = []
    async for chunk in await models.generate_content_stream(
        model=call.model, contents=contents, config=config
    ):
        if chunk.candidates and chunk.candidates[0].content:
            parts.extend(chunk.candidates[0].content.parts or [])
    return types.Content(role="model", parts=parts)


def _fit(history: list[Any], active: list[Any], config: Any, limit: int | None) -> list[Any]:
    """L9: drop the oldest saved exchanges while the request is over `limit` bytes; the
    active turn always goes whole."""
    kept = list(history)
    while limit is not None and kept and _size(kept + active, config) > limit:
        kept.pop(0)
        while kept and kept[0].role != "user":  # an exchange starts at a user message
            kept.pop(0)
    return kept + active


def _size(contents: list[Any], config: Any) -> int:
    """About the request's size on the wire (a little over it, which is the safe side)."""
    dumped = [c.model_dump(mode="json", exclude_none=True) for c in contents]
    tools = [t.model_dump(mode="json", exclude_none=True) for t in config.tools or []]
    return len(
        json.dumps({"contents": dumped, "tools": tools, "system": config.system_instruction})
    )
