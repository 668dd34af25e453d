"""Loops that spell, select or connect differently from the reference loop. Most are correct
and must get no finding at all; the two that send a parallel turn's results one per message
are rejected by their APIs (Gemini, Anthropic) and must be caught; the Responses one, which
the API accepts, must not."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from harness.chat import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from harness.loop.adapters import Turn
from harness.loop.adapters.anthropic import AnthropicAdapter, saved_to_anthropic
from harness.loop.adapters.anthropic import make_adapter as anthropic_adapter
from harness.loop.adapters.gemini import GeminiAdapter, GeminiRequest
from harness.loop.adapters.gemini import make_adapter as gemini_adapter
from harness.loop.adapters.openai import OpenAIAdapter
from harness.loop.adapters.openai import make_adapter as openai_adapter
from harness.loop.closing import NOT_EXECUTED_RESULT, closing_system
from harness.loop.contract import Loop, LoopCall, LoopResult, ToolError, ToolSpec
from harness.loop.reference import reference_loop
from harness.loop.selection import select_context
from tests.corpus.kit import Query, answer_or_admit

# ---- streaming -------------------------------------------------------------------------------


def never_streams(call: LoopCall) -> LoopResult:
    """A loop written against `client.messages.create` / `responses.create` /
    `models.generate_content` only, like `examples/minimal_loop.py` and most quick-start
    agents: it ignores `call.stream`, so on a stream cell it still asks for whole JSON."""
    return reference_loop(replace(call, stream=False))


# ---- split results ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _GeminiOneResponsePerContent(GeminiAdapter):
    def _whole(self, wire: GeminiRequest) -> Any:
        return super()._whole(_split_responses(wire))

    def _streamed(self, wire: GeminiRequest) -> Any:
        return super()._streamed(_split_responses(wire))


def _split_responses(wire: GeminiRequest) -> GeminiRequest:
    contents: list[Any] = []
    for content in wire.contents:
        parts = content.parts or []
        if content.role == "user" and len(parts) > 1 and all(p.function_response for p in parts):
            contents.extend(content.model_copy(update={"parts": [p]}) for p in parts)
        else:
            contents.append(content)
    return replace(wire, contents=contents)


def gemini_results_one_per_content(call: LoopCall) -> LoopResult:
    """The results of a parallel turn sent as one user Content per `functionResponse` (as
    loops that append each tool's message as soon as it is ready do: maximhq/bifrost #1387,
    "I return the response for both the tools as sequential ChatMessage"). Gemini wants
    them all in the one next content and rejects this with "Please ensure that the number
    of function response parts is equal to the number of function call parts of the
    function call turn." (fixed in bifrost PR #1391 by grouping them)."""
    base = gemini_adapter(call)
    adapter = _GeminiOneResponsePerContent(
        client=base.client,
        model=base.model,
        stream=base.stream,
        request_size_limit=base.request_size_limit,
    )
    return answer_or_admit(Query(call, adapter=adapter))


@dataclass(frozen=True, kw_only=True)
class _OpenAIEachCallThenItsOutput(OpenAIAdapter):
    def _whole(self, params: dict[str, Any]) -> Any:
        return super()._whole(_interleaved(params))

    def _streamed(self, params: dict[str, Any]) -> Any:
        return super()._streamed(_interleaved(params))


def _interleaved(params: dict[str, Any]) -> dict[str, Any]:
    items = list(params["input"])
    outputs = {i["call_id"]: i for i in items if i.get("type") == "function_call_output"}
    placed: list[dict[str, Any]] = []
    for item in items:
        if item.get("type") == "function_call_output":
            continue
        placed.append(item)
        if item.get("type") == "function_call" and item["call_id"] in outputs:
            placed.append(outputs[item["call_id"]])
    return {**params, "input": placed}


def openai_each_call_then_its_output(call: LoopCall) -> LoopResult:
    """A parallel Responses turn resent as call, output, call, output (the items a loop that
    handles one `function_call` at a time appends, as in OpenAI's function-calling guide's
    `for tool_call in response.output: input.append(tool_call); input.append(output)`)."""
    base = openai_adapter(call)
    adapter = _OpenAIEachCallThenItsOutput(client=base.client, model=base.model, stream=base.stream)
    return answer_or_admit(Query(call, adapter=adapter))


@dataclass(frozen=True, kw_only=True)
class _AnthropicOneResultPerMessage(AnthropicAdapter):
    def _whole(self, params: dict[str, Any]) -> Any:
        return super()._whole(_one_result_per_message(params))

    def _streamed(self, params: dict[str, Any]) -> Any:
        return super()._streamed(_one_result_per_message(params))


def _one_result_per_message(params: dict[str, Any]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for message in params["messages"]:
        blocks = message["content"]
        if message["role"] == "user" and isinstance(blocks, list) and len(blocks) > 1:
            messages.extend({"role": "user", "content": [b]} for b in blocks)
        else:
            messages.append(message)
    return {**params, "messages": messages}


def anthropic_results_one_per_message(call: LoopCall) -> LoopResult:
    """The results of a parallel turn as one user message per `tool_result` (each tool's
    message appended as it finishes, as in the VS Code bridge of opencode-go-copilot #87).
    Anthropic wants them all in the one next user message and rejects this (`tool_use ids
    were found without tool_result blocks immediately after`, opencode-go-copilot PR #89)."""
    base = anthropic_adapter(call)
    adapter = _AnthropicOneResultPerMessage(
        client=base.client, model=base.model, stream=base.stream
    )
    return answer_or_admit(Query(call, adapter=adapter))


# ---- context selection -----------------------------------------------------------------------


def last_ten_messages(call: LoopCall) -> LoopResult:
    """A window of 10 saved messages instead of 20 (a smaller product decision), cut where a
    user message starts."""
    return answer_or_admit(Query(call, context=select_context(call.history, limit=10)))


def past_tool_results(history: tuple[Message, ...], limit: int) -> list[Message]:
    """`history[-limit:]`, moved later past any leading tool results only (the usual fix for
    a slice that starts on an orphan result): the window may open on an assistant message,
    never on a result whose request was cut off."""
    start = max(0, len(history) - limit)
    while start < len(history) and isinstance(history[start], ToolMessage):
        start += 1
    return list(history[start:])


def _window_of(limit: int) -> Loop:
    def loop(call: LoopCall) -> LoopResult:
        context = past_tool_results(call.history, limit)
        assert context and not isinstance(context[0], UserMessage)  # the shape under test
        return answer_or_admit(Query(call, context=context))

    return loop


last_twenty_past_tool_results = _window_of(20)
"""The last 20 saved messages with leading tool results dropped: on the library's long
history the window opens on "Both sets are logged.", the reply that followed the results of
a chain that is left out whole (OpenAI Responses accepts a first assistant message)."""

last_fifteen_past_tool_results = _window_of(15)
"""The same with a window of 15: it opens on a plain assistant reply ("Keep protein
consistent…"), far from any chain."""


# ---- other clients ---------------------------------------------------------------------------


def json_results(turn: Turn[Any], tools: tuple[ToolSpec, ...]) -> tuple[ToolMessage, ...]:
    """Tools run one at a time, in order; each result worded as a small JSON object."""
    by_name = {t.name: t for t in tools}
    out: list[ToolMessage] = []
    for request in turn.message.tool_calls:
        try:
            body = {"status": "ok", "data": by_name[request.name](request.arguments)}
        except ToolError as exc:
            body = {"status": "error", "message": str(exc)}
        content = json.dumps(body, ensure_ascii=False)
        error = body["status"] == "error"
        out.append(
            ToolMessage(call_id=request.id, name=request.name, content=content, is_error=error)
        )
    return tuple(out)


def own_openai_client(call: LoopCall) -> LoopResult:
    """Builds its own `openai.OpenAI` from `call.base_url` and `call.api_key` (as a framework
    does) and words every tool result as JSON (`{"status": "ok", "data": ...}`)."""
    import openai

    client = openai.OpenAI(base_url=call.base_url, api_key=call.api_key)
    own = replace(call, client=client)
    return answer_or_admit(Query(own, adapter=openai_adapter(own)), results=json_results)


async def async_anthropic_streaming(call: LoopCall) -> LoopResult:
    """An async loop on `call.async_client` written straight against the Anthropic SDK, as in
    Anthropic's tool-use guide: `async with client.messages.stream(...)` when streaming, the
    reply's content blocks appended as they came, one user message with every `tool_result`
    (`is_error` on failures), the step limit handled as the rules say."""
    client = call.async_client
    tools = [
        {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
        for t in call.tools
    ]
    by_name = {t.name: t for t in call.tools}
    messages: list[dict[str, Any]] = [
        *saved_to_anthropic(select_context(call.history)),
        {"role": "user", "content": call.message},
    ]
    saved: list[Message] = [*call.history, UserMessage(text=call.message)]
    for number in range(1, call.max_rounds + 3):
        closing = number == call.max_rounds + 2
        params: dict[str, Any] = {
            "model": call.model,
            "max_tokens": 1024,
            "system": closing_system(call.system) if closing else call.system,
            "messages": messages,
            "tools": tools,
            "tool_choice": {"type": "none"} if closing else {"type": "auto"},
        }
        if call.stream:
            async with client.messages.stream(**params) as stream:
                reply = await stream.get_final_message()
        else:
            reply = await client.messages.create(**params)
        text = "".join(b.text for b in reply.content if b.type == "text")
        uses = [b for b in reply.content if b.type == "tool_use"]
        if closing or not uses:
            saved.append(AssistantMessage(text=text))
            return LoopResult(answer=text, chat=tuple(saved))
        saved.append(
            AssistantMessage(
                text=text,
                tool_calls=tuple(ToolCall(id=u.id, name=u.name, arguments=u.input) for u in uses),
            )
        )
        results = []
        for use in uses:
            if number > call.max_rounds:
                content, failed = NOT_EXECUTED_RESULT, True
            else:
                try:
                    content, failed = by_name[use.name](use.input), False
                except ToolError as exc:
                    content, failed = str(exc), True
            saved.append(ToolMessage(call_id=use.id, name=use.name, content=content))
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": use.id,
                    "content": content,
                    "is_error": failed,
                }
            )
        messages.append(
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in reply.content],
            }
        )
        messages.append({"role": "user", "content": results})
    raise AssertionError("unreachable")
