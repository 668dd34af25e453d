"""What the reference loop hands an adapter and gets back, and how it picks one.

The loop decides everything shared (selection, rounds, pairing, the closing call); an adapter
only spells a `Request` in its provider's wire format, sends it through the official SDK
(streamed or not), and returns the model's `Turn`: the neutral view plus the provider's own
content, which the loop keeps and the adapter resends unchanged on later calls of the query.

Provider modules are imported on first use so a run on one provider imports only its SDK.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from harness.chat import AssistantMessage, Message, ToolMessage
from harness.errors import ProviderError
from harness.loop.contract import LoopCall, ProviderName, ToolSpec

N = TypeVar("N")
N_co = TypeVar("N_co", covariant=True)

LOCAL_ID_PREFIX = "call_local_"
"""Prefix of the ids the loop makes up for tool requests that came without one (Gemini may
omit `functionCall.id`). Matches Anthropic's `tool_use.id` pattern `^[a-zA-Z0-9_-]+$`."""


class ProviderCallError(ProviderError):
    """A model call failed: the SDK raised, or the reply cannot be used. The loop reports it in
    `LoopResult.error` (L15); it never reaches the caller as an exception."""


@dataclass(frozen=True, kw_only=True)
class Turn(Generic[N]):
    """One model turn. `message` is the neutral view (text and tool requests; a request the
    provider gave no id has `id == ""` until the loop names it); `native` is the provider's
    own content, resent unchanged within the query; `invalid_arguments` maps the position of a
    request whose arguments could not be read (not a JSON object) to the problem."""

    message: AssistantMessage
    native: N
    invalid_arguments: Mapping[int, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Step(Generic[N]):
    """One round of the active sequence: the turn as it came, then one result per request, in
    the order of the turn's requests (L5, L6)."""

    turn: Turn[N]
    results: tuple[ToolMessage, ...]


@dataclass(frozen=True, kw_only=True)
class Request(Generic[N]):
    """One model call, as decided by the loop.

    `context` is the selection of saved messages (L7); `message` and `steps` are the active
    sequence (L8); `system` already holds the step-limit order on the closing call (L13);
    `tools_allowed` is False on the closing call: tools stay declared, tool choice is "none"
    (L12)."""

    system: str
    context: tuple[Message, ...]
    message: str
    steps: tuple[Step[N], ...]
    tools: tuple[ToolSpec, ...]
    tools_allowed: bool = True


class Adapter(Protocol[N]):
    """Spells requests for one provider and sends them through its SDK client."""

    def send(self, request: Request[N]) -> Turn[N]:
        """The model's turn, or `ProviderCallError` when the call failed or came back empty
        of anything usable (an unknown content type)."""
        ...


class AdapterFactory(Protocol[N_co]):
    def __call__(self, call: LoopCall) -> Adapter[Any]: ...


_MODULES: Mapping[ProviderName, str] = {
    "anthropic": "harness.loop.adapters.anthropic",
    "openai": "harness.loop.adapters.openai",
    "gemini": "harness.loop.adapters.gemini",
}


def adapter_for(call: LoopCall) -> Adapter[Any]:
    """The adapter for `call.provider`; each provider module exposes `make_adapter(call)`."""
    module = importlib.import_module(_MODULES[call.provider])
    factory: AdapterFactory[Any] = module.make_adapter
    return factory(call)


def describe_error(exc: BaseException) -> str:
    """One line naming the SDK's exception and its message (status and body included)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
