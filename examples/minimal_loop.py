"""A deliberately minimal agent loop written against harness's loop contract.

It is not the reference loop: about a hundred lines of plain SDK code, non-streaming, one
function per provider. It resends saved history as text only and ignores
`call.request_size_limit` (Gemini trimming, L9) — the checks report the latter. Check it with:

    harness run --source scripted --loop examples.minimal_loop:run
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


def run(call: LoopCall) -> LoopResult:
    """The contract: one user message in, the answer and the saved chat out."""
    loop = {"anthropic": _anthropic, "openai": _openai, "gemini": _gemini}[call.provider]
    try:
        return loop(call)
    except Exception as exc:  # a provider error is reported, never shown as the answer (L15)
        chat = (*call.history, UserMessage(text=call.message))
        return LoopResult(answer="", chat=chat, error=f"{type(exc).__name__}: {exc}")


def _run_tool(call: LoopCall, name: str, args: dict[str, Any]) -> tuple[str, bool]:
    tool = next(t for t in call.tools if t.name == name)
    try:
        return tool(args), False
    except ToolError as exc:
        return str(exc), True


def _history_text(call: LoopCall) -> list[tuple[str, str]]:
    """This minimal loop resends only the text of the last 20 saved messages."""
    picked = [m for m in call.history[-20:] if not isinstance(m, ToolMessage)]
    out = [("user" if isinstance(m, UserMessage) else "assistant", m.text) for m in picked]
    out = [(role, text) for role, text in out if text]
    while out and out[0][0] != "user":
        out.pop(0)
    return out


def _finish(call: LoopCall, answer: str, steps: list[Message]) -> LoopResult:
    chat = (*call.history, UserMessage(text=call.message), *steps, AssistantMessage(text=answer))
    return LoopResult(answer=answer, chat=chat)


def _anthropic(call: LoopCall) -> LoopResult:
    tools = [
        {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
        for t in call.tools
    ]
    messages: list[Any] = [{"role": r, "content": t} for r, t in _history_text(call)]
    messages.append({"role": "user", "content": call.message})
    steps: list[Message] = []
    for number in range(call.max_rounds + 2):
        closing = number == call.max_rounds + 1
        reply = call.client.messages.create(
            model=call.model,
            max_tokens=1024,
            tools=tools,
            messages=messages,
            system=f"{call.system}\n\n{LIMIT}" if closing else call.system,
            tool_choice={"type": "none"} if closing else {"type": "auto"},
        )
        text = "".join(b.text for b in reply.content if b.type == "text")
        uses = [b for b in reply.content if b.type == "tool_use"]
        if closing or not uses:
            return _finish(call, text, steps)
        steps.append(
            AssistantMessage(
                text=text,
                tool_calls=tuple(ToolCall(id=u.id, name=u.name, arguments=u.input) for u in uses),
            )
        )
        results = []
        for use in uses:
            out, failed = (
                (NOT_EXECUTED, True)
                if number == call.max_rounds
                else _run_tool(call, use.name, use.input)
            )
            results.append(
                {"type": "tool_result", "tool_use_id": use.id, "content": out, "is_error": failed}
            )
            steps.append(ToolMessage(call_id=use.id, name=use.name, content=out))
        messages += [
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in reply.content],
            },
            {"role": "user", "content": results},
        ]
    raise AssertionError("unreachable")


def _openai(call: LoopCall) -> LoopResult:
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
        reply = call.client.responses.create(
            model=call.model,
            input=items,
            tools=tools,
            store=False,
            include=["reasoning.encrypted_content"],
            instructions=f"{call.system}\n\n{LIMIT}" if closing else call.system,
            tool_choice="none" if closing else "auto",
        )
        calls = [o for o in reply.output if o.type == "function_call"]
        if closing or not calls:
            return _finish(call, reply.output_text, steps)
        items += [o.model_dump(exclude_none=True) for o in reply.output]
        steps.append(
            AssistantMessage(
                text=reply.output_text,
                tool_calls=tuple(
                    ToolCall(id=c.call_id, name=c.name, arguments=json.loads(c.arguments))
                    for c in calls
                ),
            )
        )
        for c in calls:
            out = (
                NOT_EXECUTED
                if number == call.max_rounds
                else _run_tool(call, c.name, json.loads(c.arguments))[0]
            )
            items.append({"type": "function_call_output", "call_id": c.call_id, "output": out})
            steps.append(ToolMessage(call_id=c.call_id, name=c.name, content=out))
    raise AssertionError("unreachable")


def _gemini(call: LoopCall) -> LoopResult:
    from google.genai import types

    declarations = [
        types.FunctionDeclaration(
            name=t.name, description=t.description, parameters_json_schema=dict(t.parameters)
        )
        for t in call.tools
    ]
    contents: list[Any] = [
        types.Content(role="model" if r == "assistant" else "user", parts=[types.Part(text=t)])
        for r, t in _history_text(call)
    ]
    contents.append(types.Content(role="user", parts=[types.Part(text=call.message)]))
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
        reply = call.client.models.generate_content(
            model=call.model, contents=contents, config=config
        )
        content = reply.candidates[0].content
        fcalls = [p.function_call for p in content.parts or [] if p.function_call]
        text = "".join(p.text or "" for p in content.parts or [] if not p.thought)
        if closing or not fcalls:
            return _finish(call, text, steps)
        contents.append(content)  # unchanged: thought signatures travel back as they came
        responses = []
        ids = [fc.id or f"local-{number}-{i}" for i, fc in enumerate(fcalls)]
        steps.append(
            AssistantMessage(
                text=text,
                tool_calls=tuple(
                    ToolCall(id=i, name=fc.name or "", arguments=fc.args or {})
                    for i, fc in zip(ids, fcalls, strict=True)
                ),
            )
        )
        for call_id, fc in zip(ids, fcalls, strict=True):
            out, failed = (
                (NOT_EXECUTED, True)
                if number == call.max_rounds
                else _run_tool(call, fc.name or "", dict(fc.args or {}))
            )
            responses.append(
                types.Part(
                    function_response=types.FunctionResponse(
                        id=fc.id, name=fc.name, response={"error" if failed else "output": out}
                    )
                )
            )
            steps.append(ToolMessage(call_id=call_id, name=fc.name or "", content=out))
        contents.append(types.Content(role="user", parts=responses))
    raise AssertionError("unreachable")
