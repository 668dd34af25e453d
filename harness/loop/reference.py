"""The harness's reference loop: the article's loop on the three official SDKs.

Every shared decision lives here, once (style: decide shared things once, adapters spell them):

- the context: `select_context` picks at most the last 20 saved messages (L7); every call
  resends that selection plus the whole active sequence (L8);
- the rounds: call 1, then at most `max_rounds` times "run the tools, call again" (L1, L3); a
  turn without tool requests ends the loop and its text is the answer, with no further call
  (L2);
- the tools: one at a time, in the order the model listed them (L4); the turn as it came, then
  one result per request carrying its id (L5, L6);
- the limit: when the last ordinary call still asks for tools, each pending request gets
  `NOT_EXECUTED_RESULT` without running, then exactly one closing call with tools declared,
  tool choice "none" and the step-limit order in the system instructions (L11–L13);
- the ending: a provider error or an empty reply is reported in `LoopResult.error`, never
  passed off as the answer, and never raised (L15).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Generic, TypeVar

from harness.chat import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from harness.loop.adapters import (
    LOCAL_ID_PREFIX,
    Adapter,
    ProviderCallError,
    Request,
    Step,
    Turn,
    adapter_for,
)
from harness.loop.closing import NOT_EXECUTED_RESULT, closing_system
from harness.loop.contract import LoopCall, LoopResult, ToolError, ToolSpec
from harness.loop.selection import select_context

N = TypeVar("N")


def reference_loop(call: LoopCall) -> LoopResult:
    """Answer `call.message`: the contract's `Loop`, on the SDK client in `call.client`."""
    return run_loop(adapter_for(call), call)


async def async_reference_loop(call: LoopCall) -> LoopResult:
    """The same loop on the async clients (`call.async_client`, Gemini's `.aio`): every
    decision is `run_loop`'s, run in a worker thread; each model call is awaited in the
    caller's event loop."""
    bridge: _AwaitedCalls[Any] = _AwaitedCalls(adapter_for(call), asyncio.get_running_loop())
    return await asyncio.to_thread(run_loop, bridge, call)


class _AwaitedCalls(Generic[N]):
    """An adapter whose `send` awaits the wrapped adapter's `send_async` in `loop`."""

    def __init__(self, adapter: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.adapter, self.loop = adapter, loop

    def send(self, request: Request[N]) -> Turn[N]:
        future = asyncio.run_coroutine_threadsafe(self.adapter.send_async(request), self.loop)
        result: Turn[N] = future.result()
        return result


def run_loop(adapter: Adapter[N], call: LoopCall) -> LoopResult:
    """The loop itself, on any adapter (the provider is only in how requests are spelled)."""
    if call.max_rounds < 0:
        raise ValueError(f"max_rounds must be 0 or more, got {call.max_rounds}")
    query = _Query(adapter, call)
    for number in range(1, call.max_rounds + 2):  # ordinary calls: at most max_rounds + 1
        turn = query.ask(number, closing=False)
        if turn is None:
            return query.failed()
        if not turn.message.tool_calls:  # L2: no tool requested, this text is the answer
            return query.answered(turn.message.text)
        if number <= call.max_rounds:
            query.append(turn, run_tools(turn, call.tools))
        else:  # L11: the budget is spent; answer the pending requests without running them
            query.append(turn, not_executed(turn.message.tool_calls))
    return query.close(call.max_rounds + 2)


class _Query(Generic[N]):
    """The state of one query: the active sequence sent to the model, and the chat saved."""

    def __init__(self, adapter: Adapter[N], call: LoopCall) -> None:
        self.adapter = adapter
        self.call = call
        self.context = select_context(call.history)
        self.steps: list[Step[N]] = []
        self.saved: list[Message] = [*call.history, UserMessage(text=call.message)]
        self.error: str | None = None

    def ask(self, number: int, closing: bool) -> Turn[N] | None:
        """Call the model; None (with `self.error` set) on a provider error or empty reply."""
        try:
            turn = self.adapter.send(self.request(closing))
        except ProviderCallError as exc:
            self.error = f"{self.call.provider} call {number} failed: {exc}"
            return None
        if is_empty(turn.message):
            self.error = (
                f"{self.call.provider} call {number} returned an empty reply "
                "(no text and no tool request)"
            )
            return None
        turn = name_calls(turn, self.id_seed(number))
        ids = [c.id for c in turn.message.tool_calls]
        if len(set(ids)) != len(ids):
            self.error = f"{self.call.provider} call {number} repeats a tool request id: {ids}"
            return None
        return turn

    def request(self, closing: bool) -> Request[N]:
        return Request(
            system=closing_system(self.call.system) if closing else self.call.system,
            context=self.context,
            message=self.call.message,
            steps=tuple(self.steps),
            tools=self.call.tools,
            tools_allowed=not closing,
        )

    def append(self, turn: Turn[N], results: tuple[ToolMessage, ...]) -> None:
        """L5: the turn as it came, then its results in request order (L6 checked here)."""
        paired = pair_results(turn.message.tool_calls, results)
        self.steps.append(Step(turn=turn, results=paired))
        self.saved.extend([turn.message, *paired])

    def close(self, number: int) -> LoopResult:
        """L12: exactly one closing call, text only; its text is the answer (L14)."""
        turn = self.ask(number, closing=True)
        if turn is None:
            return self.failed()
        if not turn.message.text.strip():
            self.error = (
                f"{self.call.provider} closing call {number} returned no text "
                "(only tool requests, although tool choice was none)"
            )
            return self.failed()
        # Any tool request in the closing reply is ignored: it could never be answered.
        return self.answered(turn.message.text)

    def answered(self, text: str) -> LoopResult:
        self.saved.append(AssistantMessage(text=text))
        return LoopResult(answer=text, chat=tuple(self.saved))

    def failed(self) -> LoopResult:
        """L15: no answer is invented; the chat keeps what happened (tools that ran)."""
        return LoopResult(answer="", chat=tuple(self.saved), error=self.error)

    def id_seed(self, number: int) -> str:
        return f"{len(self.call.history)}\x00{self.call.message}\x00{number}"


def is_empty(message: AssistantMessage) -> bool:
    return not message.text.strip() and not message.tool_calls


def name_calls(turn: Turn[N], seed: str) -> Turn[N]:
    """Give every request the provider left without an id a stable one of the loop's own
    (`call_local_…`, derived from the query and position, so recordings stay stable)."""
    calls = turn.message.tool_calls
    if all(c.id for c in calls):
        return turn
    named = tuple(
        c if c.id else replace(c, id=local_call_id(seed, index)) for index, c in enumerate(calls)
    )
    return replace(turn, message=replace(turn.message, tool_calls=named))


def local_call_id(seed: str, index: int) -> str:
    digest = hashlib.sha256(f"{seed}\x00{index}".encode()).hexdigest()[:24]
    return f"{LOCAL_ID_PREFIX}{digest}"


def run_tools(turn: Turn[N], tools: Sequence[ToolSpec]) -> tuple[ToolMessage, ...]:
    """L4: run the requested tools one at a time, in request order; never concurrently."""
    by_name = {tool.name: tool for tool in tools}
    results: list[ToolMessage] = []
    for index, request in enumerate(turn.message.tool_calls):
        problem = turn.invalid_arguments.get(index)
        results.append(run_tool(request, by_name, problem))
    return tuple(results)


def run_tool(
    request: ToolCall, tools: Mapping[str, ToolSpec], invalid_arguments: str | None = None
) -> ToolMessage:
    """One request's result; a failure is an error result the model can read, not a crash."""
    spec = tools.get(request.name)
    if spec is None:
        return _error_result(request, f"Unknown tool: {request.name}")
    if invalid_arguments is not None:
        return _error_result(request, f"Invalid arguments: {invalid_arguments}")
    try:
        output = spec(request.arguments)
    except ToolError as exc:
        return _error_result(request, str(exc) or type(exc).__name__)
    return ToolMessage(call_id=request.id, name=request.name, content=output)


def _error_result(request: ToolCall, text: str) -> ToolMessage:
    return ToolMessage(call_id=request.id, name=request.name, content=text, is_error=True)


def not_executed(requests: Sequence[ToolCall]) -> tuple[ToolMessage, ...]:
    """L11: each pending request gets exactly the not-executed result; no tool runs. Marked
    as an error so Anthropic sends `is_error: true` and Gemini `response.error` (providers.md
    §9)."""
    return tuple(_error_result(request, NOT_EXECUTED_RESULT) for request in requests)


def pair_results(
    requests: Sequence[ToolCall], results: Sequence[ToolMessage]
) -> tuple[ToolMessage, ...]:
    """The results in request order, each request answered exactly once and no result without
    its request (L6). Raises `ValueError` naming the ids when that does not hold."""
    by_id: dict[str, ToolMessage] = {}
    for result in results:
        if result.call_id in by_id:
            raise ValueError(f"two results for tool request {result.call_id!r}")
        by_id[result.call_id] = result
    ids = [request.id for request in requests]
    if len(set(ids)) != len(ids):
        raise ValueError(f"a turn repeats a tool request id: {ids}")
    missing = [i for i in ids if i not in by_id]
    orphans = [r.call_id for r in results if r.call_id not in set(ids)]
    if missing or orphans:
        raise ValueError(f"results do not pair: unanswered {missing}, without request {orphans}")
    return tuple(by_id[i] for i in ids)
