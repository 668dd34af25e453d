"""Faults in resending a model turn (L5): the turn rebuilt instead of sent back as it came."""

from __future__ import annotations

from dataclasses import replace

from google.genai import types

from harness.loop.adapters import Request, Turn
from harness.loop.adapters.anthropic import AnthropicAdapter, Blocks
from harness.loop.adapters.gemini import GeminiAdapter
from harness.loop.adapters.openai import Items, OpenAIAdapter
from harness.loop.contract import LoopCall
from tests.faulty_loops.variants import with_adapters

# ---- the interim text of a turn dropped (L5) -------------------------------------------------


class _AnthropicCallsOnly(AnthropicAdapter):
    def send(self, request: Request[Blocks]) -> Turn[Blocks]:
        turn = super().send(request)
        kept = turn.native if not turn.message.tool_calls else _without(turn.native, "text")
        return replace(turn, native=kept)


class _OpenAICallsOnly(OpenAIAdapter):
    def send(self, request: Request[Items]) -> Turn[Items]:
        turn = super().send(request)
        kept = turn.native if not turn.message.tool_calls else _without(turn.native, "message")
        return replace(turn, native=kept)


class _GeminiCallsOnly(GeminiAdapter):
    def send(self, request: Request[types.Content]) -> Turn[types.Content]:
        turn = super().send(request)
        parts = [p for p in turn.native.parts or [] if p.text is None or p.thought]
        if not turn.message.tool_calls:
            return turn
        return replace(turn, native=turn.native.model_copy(update={"parts": parts}))


def _without(native: tuple[dict[str, object], ...], kind: str) -> tuple[dict[str, object], ...]:
    return tuple(item for item in native if item.get("type") != kind)


def _gemini(call: LoopCall) -> GeminiAdapter:
    return _GeminiCallsOnly(
        client=call.client,
        model=call.model,
        stream=call.stream,
        request_size_limit=call.request_size_limit,
    )


turn_text_dropped = with_adapters(
    {
        # A turn that asks for tools goes back with its requests only: the text the model
        # wrote before them ("Let me look at your history.") is lost.
        "anthropic": lambda call: _AnthropicCallsOnly(
            client=call.client, model=call.model, stream=call.stream
        ),
        "openai": lambda call: _OpenAICallsOnly(
            client=call.client, model=call.model, stream=call.stream
        ),
        "gemini": _gemini,
    }
)
