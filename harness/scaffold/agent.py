"""A small agent loop on harness's loop contract, for Anthropic, OpenAI and Gemini.

`harness init` put it here as a starting point: replace its body with a call into your own
agent (keep the signature), or point `loop` in `[tool.harness]` at your function. The rules
it follows (and the harness checks) are the README's "The rules and the checks":

- every tool request gets exactly one result, in order, with its id;
- at most `call.max_rounds` rounds of tools run per user message;
- when the budget is spent, pending requests are answered "not executed" (never run), and
  one closing call with tools disabled asks for the answer;
- a provider error is reported as `error`, never shown as the answer.

It does not stream (`stream = "off"` in `[tool.harness]`), resends saved history as text only,
and does not trim Gemini requests above `call.request_size_limit` (L9, a rule only scenarios
that set that limit test).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

from harness.chat import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from harness.loop import LoopCall, LoopResult, ToolError

CONTEXT_WINDOW = 20  # saved messages resent per query: `context_window` in [tool.harness]
MAX_TOKENS = 1024
NOT_RUN = "Not executed: the step limit for this answer was reached."
CLOSING = (
    "You reached the step limit for this answer. Answer with what you know, explain the "
    "limit, say what was left undone, and ask whether to continue."
)

Result = tuple[ToolCall, str, bool]  # the request, its output, whether it failed


class Conversation(Protocol):
    """One provider's spelling of the conversation; the rounds are decided in `run`."""

    def ask(self, closing: bool) -> tuple[str, list[ToolCall]]: ...

    def answer(self, results: list[Result]) -> None: ...


def run(call: LoopCall) -> LoopResult:
    """The contract: one user message in, the answer and the saved chat out."""
    chat: tuple[Message, ...] = (*call.history, UserMessage(text=call.message))
    try:
        answer, steps = rounds(call, CONVERSATIONS[call.provider](call))
    except Exception as exc:  # a provider error is reported, never shown as the answer
        return LoopResult(answer="", chat=chat, error=f"{type(exc).__name__}: {exc}")
    return LoopResult(answer=answer, chat=(*chat, *steps, AssistantMessage(text=answer)))


def rounds(call: LoopCall, talk: Conversation) -> tuple[str, list[Message]]:
    steps: list[Message] = []
    for number in range(call.max_rounds + 1):
        text, calls = talk.ask(closing=False)
        if not calls:
            return text, steps
        steps.append(AssistantMessage(text=text, tool_calls=tuple(calls)))
        spent = number == call.max_rounds  # the budget is spent: answer, do not run
        results = [(c, NOT_RUN, True) if spent else run_tool(call, c) for c in calls]
        steps += [ToolMessage(call_id=c.id, name=c.name, content=out) for c, out, _ in results]
        talk.answer(results)
    text, _ = talk.ask(closing=True)
    return text, steps


def run_tool(call: LoopCall, request: ToolCall) -> Result:
    tool = next((t for t in call.tools if t.name == request.name), None)
    if tool is None:
        return request, f"Unknown tool {request.name!r}.", True
    try:
        return request, tool(request.arguments), False
    except ToolError as exc:
        return request, str(exc), True


def history_text(call: LoopCall) -> list[tuple[str, str]]:
    """The last saved messages' text, starting at a user message (no tool chain is cut)."""
    picked = [m for m in call.history[-CONTEXT_WINDOW:] if not isinstance(m, ToolMessage)]
    pairs = [("user" if isinstance(m, UserMessage) else "assistant", m.text) for m in picked]
    pairs = [(role, text) for role, text in pairs if text]
    while pairs and pairs[0][0] != "user":
        pairs.pop(0)
    return [*pairs, ("user", call.message)]


def system(call: LoopCall, closing: bool) -> str:
    return f"{call.system}\n\n{CLOSING}" if closing else call.system


class Anthropic:
    def __init__(self, call: LoopCall) -> None:
        self.call = call
        self.tools = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
            for t in call.tools
        ]
        self.messages: list[Any] = [{"role": r, "content": t} for r, t in history_text(call)]

    def ask(self, closing: bool) -> tuple[str, list[ToolCall]]:
        reply = self.call.client.messages.create(
            model=self.call.model,
            max_tokens=MAX_TOKENS,
            system=system(self.call, closing),
            tools=self.tools,
            tool_choice={"type": "none" if closing else "auto"},
            messages=self.messages,
        )
        blocks = [b.model_dump(exclude_none=True) for b in reply.content]
        self.messages.append({"role": "assistant", "content": blocks})
        text = "".join(b["text"] for b in blocks if b["type"] == "text")
        uses = [b for b in blocks if b["type"] == "tool_use"]
        return text, [ToolCall(id=u["id"], name=u["name"], arguments=u["input"]) for u in uses]

    def answer(self, results: list[Result]) -> None:
        content = [
            {"type": "tool_result", "tool_use_id": c.id, "content": out, "is_error": failed}
            for c, out, failed in results
        ]
        self.messages.append({"role": "user", "content": content})


class OpenAI:
    def __init__(self, call: LoopCall) -> None:
        self.call = call
        self.tools = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": dict(t.parameters),
                "strict": False,
            }
            for t in call.tools
        ]
        self.items: list[Any] = [{"role": r, "content": t} for r, t in history_text(call)]

    def ask(self, closing: bool) -> tuple[str, list[ToolCall]]:
        reply = self.call.client.responses.create(
            model=self.call.model,
            instructions=system(self.call, closing),
            input=self.items,
            tools=self.tools,
            tool_choice="none" if closing else "auto",
            store=False,  # so reasoning travels back encrypted, with the items
            include=["reasoning.encrypted_content"],
        )
        self.items += [o.model_dump(exclude_none=True) for o in reply.output]
        calls = [o for o in reply.output if o.type == "function_call"]
        requests = [
            ToolCall(id=c.call_id, name=c.name, arguments=json.loads(c.arguments or "{}"))
            for c in calls
        ]
        return str(reply.output_text), requests

    def answer(self, results: list[Result]) -> None:
        self.items += [
            {"type": "function_call_output", "call_id": c.id, "output": out}
            for c, out, _ in results
        ]


class Gemini:
    def __init__(self, call: LoopCall) -> None:
        from google.genai import types

        self.call = call
        self.types = types
        self.tools = [
            types.Tool(
                function_declarations=[
                    types.FunctionDeclaration(
                        name=t.name,
                        description=t.description,
                        parameters_json_schema=dict(t.parameters),
                    )
                    for t in call.tools
                ]
            )
        ]
        self.contents: list[Any] = [
            types.Content(role="model" if r == "assistant" else "user", parts=[types.Part(text=t)])
            for r, t in history_text(call)
        ]
        self.ids: dict[str, str | None] = {}  # our id -> Gemini's (which may send none)

    def ask(self, closing: bool) -> tuple[str, list[ToolCall]]:
        types = self.types
        mode = (
            types.FunctionCallingConfigMode.NONE
            if closing
            else types.FunctionCallingConfigMode.AUTO
        )
        config = types.GenerateContentConfig(
            system_instruction=system(self.call, closing),
            tools=self.tools,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            tool_config=types.ToolConfig(
                function_calling_config=types.FunctionCallingConfig(mode=mode)
            ),
        )
        reply = self.call.client.models.generate_content(
            model=self.call.model, contents=self.contents, config=config
        )
        content = reply.candidates[0].content
        self.contents.append(content)  # unchanged: thought signatures go back as they came
        parts = content.parts or []
        text = "".join(p.text or "" for p in parts if not p.thought)
        requests = []
        for i, part in enumerate(p for p in parts if p.function_call):
            fc = part.function_call
            ours = fc.id or f"gemini-{len(self.contents)}-{i}"
            self.ids[ours] = fc.id
            requests.append(ToolCall(id=ours, name=fc.name or "", arguments=fc.args or {}))
        return text, requests

    def answer(self, results: list[Result]) -> None:
        types = self.types
        parts = [
            types.Part(
                function_response=types.FunctionResponse(
                    id=self.ids[c.id], name=c.name, response={"error" if failed else "output": out}
                )
            )
            for c, out, failed in results
        ]
        self.contents.append(types.Content(role="user", parts=parts))


CONVERSATIONS: dict[str, Callable[[LoopCall], Conversation]] = {
    "anthropic": Anthropic,
    "openai": OpenAI,
    "gemini": Gemini,
}
