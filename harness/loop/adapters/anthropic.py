"""Anthropic Messages: spells the loop's requests and reads its turns (providers.md §2, §9).

Quirks kept here, each with its evidence:
- `max_tokens` is required by the API; `MAX_TOKENS` stays below the SDK's 21,333 threshold
  above which a non-streamed `create()` refuses to send (providers.md §2, client-side trap).
- The assistant content goes back unchanged, thinking blocks and their signatures included
  (E5: ``Expected `thinking` or `redacted_thinking`, but found `tool_use`…``).
- All results of a turn go in the single next user message, `tool_result` blocks only, so they
  come first (E2/E4: ``tool_use ids were found without tool_result blocks immediately
  after``).
- Tools are declared on every call, the closing one included (E1: ``Requests which include
  tool_use or tool_result blocks must define tools.``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any, TypeAlias

import anthropic
import httpx2
from anthropic.types import (
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
)

from harness.chat import AssistantMessage, ToolCall, ToolMessage, UserMessage
from harness.chat import Message as SavedMessage
from harness.loop.adapters import ProviderCallError, Request, Turn, describe_error
from harness.loop.contract import LoopCall, ToolSpec

Block: TypeAlias = dict[str, Any]
Blocks: TypeAlias = tuple[Block, ...]
WireMessage: TypeAlias = dict[str, Any]

MAX_TOKENS = 4096
TOOL_CHOICE_NONE: dict[str, str] = {"type": "none"}  # L12, Anthropic's spelling
SDK_ERRORS: tuple[type[BaseException], ...] = (anthropic.AnthropicError, httpx2.HTTPError)
# Stop reasons of a reply cut short (providers.md §2 lists them): `max_tokens`, and
# `model_context_window_exceeded` when the context window fills up. Its text is not the whole
# answer and a tool call in it may be cut, so the loop reports an error (L15) instead.
TRUNCATED = frozenset({"max_tokens", "model_context_window_exceeded"})
# What the SDK raises on a stream it cannot read: a data line that is not JSON
# (json.JSONDecodeError), a broken `input_json_delta` ("Unable to parse tool parameter JSON from
# model…"), both ValueError; its accumulator's "Unexpected event order…" (RuntimeError). Caught
# around the stream only.
STREAM_ERRORS: tuple[type[BaseException], ...] = (ValueError, RuntimeError)


@dataclass(frozen=True, kw_only=True)
class AnthropicAdapter:
    client: anthropic.Anthropic
    model: str
    stream: bool = False
    async_client: anthropic.AsyncAnthropic | None = None

    def send(self, request: Request[Blocks]) -> Turn[Blocks]:
        params = request_to_anthropic(request, model=self.model)
        try:
            message = self._streamed(params) if self.stream else self._whole(params)
        except SDK_ERRORS as exc:
            raise ProviderCallError(describe_error(exc)) from exc
        return turn_from_anthropic(message)

    async def send_async(self, request: Request[Blocks]) -> Turn[Blocks]:
        """`send` on the async client (the same request, the same reading of the reply)."""
        params = request_to_anthropic(request, model=self.model)
        try:
            if self.stream:
                message = await self._streamed_async(params)
            else:
                message = await self._aclient().messages.create(**params)
        except SDK_ERRORS as exc:
            raise ProviderCallError(describe_error(exc)) from exc
        return turn_from_anthropic(message)

    def _whole(self, params: dict[str, Any]) -> Message:
        message: Message = self.client.messages.create(**params)
        return message

    def _streamed(self, params: dict[str, Any]) -> Message:
        started = False
        with self.client.messages.stream(**params) as stream:
            try:
                for event in stream:
                    started = started or event.type == "message_start"
            except STREAM_ERRORS as exc:
                raise ProviderCallError(f"unreadable stream: {describe_error(exc)}") from exc
            if not started:  # the SDK would fail an assertion: there is no message to return
                raise ProviderCallError("the stream ended without a message_start event")
            return stream.get_final_message()

    async def _streamed_async(self, params: dict[str, Any]) -> Message:
        started = False
        async with self._aclient().messages.stream(**params) as stream:
            try:
                async for event in stream:
                    started = started or event.type == "message_start"
            except STREAM_ERRORS as exc:
                raise ProviderCallError(f"unreadable stream: {describe_error(exc)}") from exc
            if not started:
                raise ProviderCallError("the stream ended without a message_start event")
            return await stream.get_final_message()

    def _aclient(self) -> anthropic.AsyncAnthropic:
        if self.async_client is None:
            raise ProviderCallError("no async client was given (LoopCall.async_client)")
        return self.async_client


def make_adapter(call: LoopCall) -> AnthropicAdapter:
    return AnthropicAdapter(
        client=call.client, model=call.model, stream=call.stream, async_client=call.async_client
    )


def request_to_anthropic(request: Request[Blocks], *, model: str) -> dict[str, Any]:
    """The keyword arguments of `messages.create` / `messages.stream` for this request."""
    params: dict[str, Any] = {
        "model": model,
        "max_tokens": MAX_TOKENS,
        "messages": messages_to_anthropic(request),
    }
    if request.system:
        params["system"] = request.system
    if request.tools:
        params["tools"] = [tool_to_anthropic(tool) for tool in request.tools]
        if not request.tools_allowed:
            params["tool_choice"] = TOOL_CHOICE_NONE
    return params


def tool_to_anthropic(tool: ToolSpec) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


def messages_to_anthropic(request: Request[Blocks]) -> list[WireMessage]:
    """Selected context, the user message, then each turn unchanged and its results."""
    messages = list(saved_to_anthropic(request.context))
    messages.append({"role": "user", "content": request.message})
    for step in request.steps:
        messages.append({"role": "assistant", "content": list(step.turn.native)})
        messages.append({"role": "user", "content": results_to_anthropic(step.results)})
    return messages


def saved_to_anthropic(saved: Sequence[SavedMessage]) -> Iterator[WireMessage]:
    """Saved chat messages; the results of one turn become one user message."""
    for is_result, group in groupby(saved, key=lambda m: isinstance(m, ToolMessage)):
        if is_result:
            yield {"role": "user", "content": results_to_anthropic(group)}
            continue
        for message in group:
            converted = saved_message_to_anthropic(message)
            if converted is not None:
                yield converted


def saved_message_to_anthropic(message: SavedMessage) -> WireMessage | None:
    if isinstance(message, UserMessage):
        return {"role": "user", "content": message.text}
    if isinstance(message, AssistantMessage):
        blocks: list[Block] = []
        if message.text:  # the API rejects empty text blocks
            blocks.append({"type": "text", "text": message.text})
        blocks.extend(
            {"type": "tool_use", "id": c.id, "name": c.name, "input": dict(c.arguments)}
            for c in message.tool_calls
        )
        return {"role": "assistant", "content": blocks} if blocks else None
    raise TypeError(f"a tool result outside a result group: {message!r}")


def results_to_anthropic(results: Iterable[SavedMessage]) -> list[Block]:
    blocks: list[Block] = []
    for result in results:
        if not isinstance(result, ToolMessage):
            raise TypeError(f"not a tool result: {result!r}")
        block: Block = {"type": "tool_result", "tool_use_id": result.call_id}
        block["content"] = result.content
        if result.is_error:
            block["is_error"] = True
        blocks.append(block)
    return blocks


def turn_from_anthropic(message: Message) -> Turn[Blocks]:
    """The neutral turn, and the content blocks as they came (dumped without None fields)."""
    if message.stop_reason in TRUNCATED:
        raise ProviderCallError(f"the reply was cut short (stop_reason {message.stop_reason})")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ToolUseBlock):
            calls.append(ToolCall(id=block.id, name=block.name, arguments=dict(block.input)))
        elif not isinstance(block, (ThinkingBlock, RedactedThinkingBlock)):
            raise ProviderCallError(
                f"the reply holds a content block of type {block.type!r}, which this loop "
                "does not handle (it declares only client tools)"
            )
    native = tuple(block.model_dump(mode="json", exclude_none=True) for block in message.content)
    return Turn(
        message=AssistantMessage(text="".join(texts), tool_calls=tuple(calls)), native=native
    )
