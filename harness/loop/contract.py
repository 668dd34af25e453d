"""The loop contract: what the harness hands a loop under test, and what the loop returns.

A loop is any callable `loop(call: LoopCall) -> LoopResult`, or a coroutine function
`async def loop(call: LoopCall) -> LoopResult` (the harness awaits it, in a fresh event loop
per user message). It runs tools only through `call.tools` and returns the final answer and
the chat as the app would save it. The checks judge what reached the wire, not this value.

How it reaches the model is its own business: every source (scripted, cassette, live) is a
local HTTP endpoint on 127.0.0.1 that records each exchange as it arrives, so any client is
captured the same way. Use whichever fits the code under test:
- `call.client` / `call.async_client`: official SDK clients, ready (`Anthropic` /
  `AsyncAnthropic`, `OpenAI` / `AsyncOpenAI`, a google-genai `Client` whose `.aio` works in any
  event loop);
- `call.base_url` and `call.api_key`: to build your own client (an SDK, a framework, httpx);
- `call.env`: the SDKs' own variables (`ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`,
  `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `GOOGLE_GEMINI_BASE_URL`, `GEMINI_API_KEY`) for code
  that reads its configuration from the environment, or for a subprocess.

The key is a dummy: on the live source the endpoint forwards to the real API with the real key,
which the loop never sees.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.chat import Message

ProviderName = Literal["anthropic", "openai", "gemini"]


class ToolError(Exception):
    """Raised by a tool that fails; a loop sends its message back as an error result."""


@dataclass(frozen=True, kw_only=True)
class ToolSpec:
    """A declared tool. Calling it (`spec(arguments)`) runs it: the harness records the call
    and returns the scenario's result as text, or raises `ToolError` for a failing tool."""

    name: str
    description: str
    parameters: Mapping[str, Any]  # JSON Schema of the arguments object
    effect: Literal["read", "write"]
    run: Callable[[Mapping[str, Any]], str] = field(repr=False, compare=False)

    def __call__(self, arguments: Mapping[str, Any]) -> str:
        return self.run(arguments)


@dataclass(frozen=True, kw_only=True)
class LoopCall:
    """Everything one query gives the loop (one new user message, a fresh budget: L3)."""

    provider: ProviderName
    client: Any  # anthropic.Anthropic | openai.OpenAI | google.genai.Client
    model: str
    system: str
    history: tuple[Message, ...]  # the saved chat, oldest first
    message: str  # the new user message
    tools: tuple[ToolSpec, ...]
    max_rounds: int
    stream: bool = False  # use the SDK's streaming calls
    # Gemini only: a request-size limit in bytes above which old exchanges are trimmed (L9).
    request_size_limit: int | None = None
    # anthropic.AsyncAnthropic | openai.AsyncOpenAI | google.genai.Client (use its `.aio`)
    async_client: Any = None
    base_url: str = ""  # this provider's base URL at the harness endpoint, as its SDK takes it
    api_key: str = ""  # a dummy key the endpoint accepts
    env: Mapping[str, str] = field(default_factory=dict)  # the SDKs' variables, all providers


@dataclass(frozen=True, kw_only=True)
class LoopResult:
    """The final answer and the chat as the app saves it (history plus this query).

    `error` is set when the loop could not produce an answer (a provider error, an empty
    reply); then `answer` must not pretend to be one (L15)."""

    answer: str
    chat: tuple[Message, ...]
    error: str | None = None


Loop = Callable[[LoopCall], LoopResult | Awaitable[LoopResult]]
