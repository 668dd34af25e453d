"""Faults in what the providers need carried between calls (L5, L10 and the provider rules
that spell them out): OpenAI's statelessness and reasoning items, Anthropic's thinking blocks,
Gemini's thought signatures. Each is a small subclass of the provider's adapter."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from google.genai import types
from openai.types.responses import Response

from harness.loop.adapters import ProviderCallError, Request, Turn, describe_error
from harness.loop.adapters.anthropic import AnthropicAdapter, Blocks
from harness.loop.adapters.gemini import GeminiAdapter
from harness.loop.adapters.openai import (
    SDK_ERRORS,
    Items,
    OpenAIAdapter,
    request_to_openai,
    saved_to_openai,
    turn_from_openai,
)
from harness.loop.contract import LoopCall, LoopResult
from harness.loop.reference import run_loop
from tests.faulty_loops.variants import with_adapters

# ---- OpenAI: store true (openai.store_false) -------------------------------------------------


class _Stored(OpenAIAdapter):
    def _whole(self, params: dict[str, Any]) -> Response:
        return super()._whole({**params, "store": True})

    def _streamed(self, params: dict[str, Any]) -> Response:
        return super()._streamed({**params, "store": True})


store_true = with_adapters(
    {"openai": lambda call: _Stored(client=call.client, model=call.model, stream=call.stream)}
)


# ---- OpenAI: encrypted reasoning not requested (openai.reasoning_requested) ------------------


class _NoInclude(OpenAIAdapter):
    def _whole(self, params: dict[str, Any]) -> Response:
        return super()._whole({k: v for k, v in params.items() if k != "include"})

    def _streamed(self, params: dict[str, Any]) -> Response:
        return super()._streamed({k: v for k, v in params.items() if k != "include"})


reasoning_not_requested = with_adapters(
    {"openai": lambda call: _NoInclude(client=call.client, model=call.model, stream=call.stream)}
)


# ---- OpenAI: previous_response_id (openai.no_previous_response_id) ---------------------------


@dataclass(frozen=True, kw_only=True)
class _Chained(OpenAIAdapter):
    """After the first call, sends only the new items and points at the previous response
    (the stateful pattern, under store: false, where nothing was stored)."""

    state: dict[str, Any] = field(default_factory=dict)

    def _whole(self, params: dict[str, Any]) -> Response:
        return self._remember(params, super()._whole(self._chained(params)))

    def _streamed(self, params: dict[str, Any]) -> Response:
        return self._remember(params, super()._streamed(self._chained(params)))

    def _chained(self, params: dict[str, Any]) -> dict[str, Any]:
        if "id" not in self.state:
            return params
        new = params["input"][self.state["known"] :]
        return {**params, "input": new, "previous_response_id": self.state["id"]}

    def _remember(self, params: dict[str, Any], response: Response) -> Response:
        self.state.update(id=response.id, known=len(params["input"]) + len(response.output))
        return response


previous_response_id = with_adapters(
    {"openai": lambda call: _Chained(client=call.client, model=call.model, stream=call.stream)}
)


# ---- reasoning dropped: OpenAI reasoning items, Anthropic thinking, Gemini signatures --------


class _OpenAIWithoutReasoning(OpenAIAdapter):
    """The turn's reasoning items are not kept for the next call (O5)."""

    def send(self, request: Request[Items]) -> Turn[Items]:
        turn = super().send(request)
        return replace(turn, native=tuple(i for i in turn.native if i["type"] != "reasoning"))


class _AnthropicWithoutThinking(AnthropicAdapter):
    """The turn's thinking blocks are not kept for the next call (E5)."""

    def send(self, request: Request[Blocks]) -> Turn[Blocks]:
        turn = super().send(request)
        kept = tuple(b for b in turn.native if b["type"] not in ("thinking", "redacted_thinking"))
        return replace(turn, native=kept)


class _GeminiWithoutSignatures(GeminiAdapter):
    """The model content is rebuilt without its thought signatures (G3)."""

    def send(self, request: Request[types.Content]) -> Turn[types.Content]:
        turn = super().send(request)
        parts = [
            part.model_copy(update={"thought_signature": None})
            for part in turn.native.parts or []
            if not (part.thought_signature and part.text is None and not part.function_call)
        ]
        return replace(turn, native=turn.native.model_copy(update={"parts": parts}))


def _gemini(call: LoopCall) -> GeminiAdapter:
    return _GeminiWithoutSignatures(
        client=call.client,
        model=call.model,
        stream=call.stream,
        request_size_limit=call.request_size_limit,
    )


reasoning_dropped = with_adapters(
    {
        "openai": lambda call: _OpenAIWithoutReasoning(
            client=call.client, model=call.model, stream=call.stream
        ),
        "anthropic": lambda call: _AnthropicWithoutThinking(
            client=call.client, model=call.model, stream=call.stream
        ),
        "gemini": _gemini,
    }
)


# ---- OpenAI: reasoning moved out of place (openai.reasoning_resent) --------------------------


class _OpenAIReasoningLast(OpenAIAdapter):
    """The turn's items regrouped by type, reasoning last: the reasoning item no longer comes
    right before the function call it produced (O6)."""

    def send(self, request: Request[Items]) -> Turn[Items]:
        turn = super().send(request)
        ordered = sorted(turn.native, key=lambda item: item["type"] == "reasoning")
        return replace(turn, native=tuple(ordered))


reasoning_moved = with_adapters(
    {
        "openai": lambda call: _OpenAIReasoningLast(
            client=call.client, model=call.model, stream=call.stream
        )
    }
)


# ---- OpenAI: reasoning carried into the next query (L10) -------------------------------------


@dataclass(frozen=True, kw_only=True)
class _KeepsItems(OpenAIAdapter):
    """Keeps the whole Responses item list of the conversation (reasoning included) and
    resends it as the next query's context, instead of the selection of the saved chat.
    `memory` lives as long as the conversation, `query` as long as this query."""

    memory: dict[str, list[Any]]
    query: dict[str, list[Any] | None] = field(default_factory=dict)

    def send(self, request: Request[Items]) -> Turn[Items]:
        params = request_to_openai(request, model=self.model)
        kept = self.query.setdefault("context", self.memory.get("items"))
        if kept is not None:
            selected = len(list(saved_to_openai(request.context)))
            params["input"] = [*kept, *params["input"][selected:]]
        try:
            response = self._streamed(params) if self.stream else self._whole(params)
        except SDK_ERRORS as exc:
            raise ProviderCallError(describe_error(exc)) from exc
        output = [item.model_dump(mode="json", exclude_none=True) for item in response.output]
        self.memory["items"] = [*params["input"], *output]
        return turn_from_openai(response)


class ReasoningKeptAcrossMessages:
    """Holds the conversation's items, so make one per conversation."""

    def __init__(self) -> None:
        self.memory: dict[str, list[Any]] = {}

    def __call__(self, call: LoopCall) -> LoopResult:
        adapter = _KeepsItems(
            client=call.client, model=call.model, stream=call.stream, memory=self.memory
        )
        return run_loop(adapter, call)


# ---- tampered tokens: OpenAI encrypted reasoning, Anthropic and Gemini signatures ------------


FLIP_AT = 12  # inside the part of the emulator's tokens that binds them to their content


def _flipped(token: str) -> str:
    """The token with one character changed (as a lossy re-encoding would)."""
    return token[:FLIP_AT] + ("A" if token[FLIP_AT] != "A" else "B") + token[FLIP_AT + 1 :]


def _flipped_bytes(token: bytes) -> bytes:
    return token[:FLIP_AT] + bytes([token[FLIP_AT] ^ 1]) + token[FLIP_AT + 1 :]


class _OpenAITampered(OpenAIAdapter):
    def send(self, request: Request[Items]) -> Turn[Items]:
        turn = super().send(request)
        native = tuple(
            {**i, "encrypted_content": _flipped(i["encrypted_content"])}
            if i.get("encrypted_content")
            else i
            for i in turn.native
        )
        return replace(turn, native=native)


class _AnthropicTampered(AnthropicAdapter):
    def send(self, request: Request[Blocks]) -> Turn[Blocks]:
        turn = super().send(request)
        native = tuple(
            {**b, "signature": _flipped(b["signature"])} if b.get("signature") else b
            for b in turn.native
        )
        return replace(turn, native=native)


class _GeminiTampered(GeminiAdapter):
    def send(self, request: Request[types.Content]) -> Turn[types.Content]:
        turn = super().send(request)
        parts = [
            p.model_copy(update={"thought_signature": _flipped_bytes(p.thought_signature)})
            if p.thought_signature
            else p
            for p in turn.native.parts or []
        ]
        return replace(turn, native=turn.native.model_copy(update={"parts": parts}))


tokens_tampered = with_adapters(
    {
        "openai": lambda call: _OpenAITampered(
            client=call.client, model=call.model, stream=call.stream
        ),
        "anthropic": lambda call: _AnthropicTampered(
            client=call.client, model=call.model, stream=call.stream
        ),
        "gemini": lambda call: _GeminiTampered(
            client=call.client,
            model=call.model,
            stream=call.stream,
            request_size_limit=call.request_size_limit,
        ),
    }
)
