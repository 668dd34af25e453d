"""The few pieces the corpus loops share: one query's state on a reference adapter (the
selected context, the active sequence and the chat as the app saves it), so each loop module
shows only the decisions that make it the pattern it names."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.chat import AssistantMessage, Message, ToolMessage, UserMessage
from harness.loop.adapters import Adapter, ProviderCallError, Request, Step, Turn, adapter_for
from harness.loop.closing import NOT_EXECUTED_RESULT, closing_system
from harness.loop.contract import LoopCall, LoopResult, ToolSpec
from harness.loop.reference import name_calls, not_executed, run_tools
from harness.loop.selection import select_context

__all__ = ["NOT_EXECUTED_RESULT", "Query", "answer", "answer_or_admit", "not_executed", "run_tools"]


@dataclass
class Query:
    """One user message on one adapter. `context` defaults to the reference selection; a loop
    with its own selection passes its own."""

    call: LoopCall
    adapter: Adapter[Any] | None = None
    context: Sequence[Message] | None = None
    steps: list[Step[Any]] = field(default_factory=list)
    saved: list[Message] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.adapter is None:
            self.adapter = adapter_for(self.call)
        if self.context is None:
            self.context = select_context(self.call.history)
        self.saved = [*self.call.history, UserMessage(text=self.call.message)]

    def request(self, closing: bool = False) -> Request[Any]:
        assert self.context is not None
        return Request(
            system=closing_system(self.call.system) if closing else self.call.system,
            context=tuple(self.context),
            message=self.call.message,
            steps=tuple(self.steps),
            tools=self.call.tools,
            tools_allowed=not closing,
        )

    def ask(self, number: int, closing: bool = False) -> Turn[Any]:
        """One model call; a provider error raises `ProviderCallError`."""
        assert self.adapter is not None
        turn = self.adapter.send(self.request(closing))
        return name_calls(turn, f"{len(self.call.history)}\x00{self.call.message}\x00{number}")

    def add(self, turn: Turn[Any], results: tuple[ToolMessage, ...]) -> None:
        self.steps.append(Step(turn=turn, results=results))
        self.saved.extend([turn.message, *results])

    def answered(self, text: str) -> LoopResult:
        return LoopResult(answer=text, chat=(*self.saved, AssistantMessage(text=text)))

    def failed(self, error: str) -> LoopResult:
        return LoopResult(answer="", chat=tuple(self.saved), error=error)


Results = Callable[[Turn[Any], tuple[ToolSpec, ...]], tuple[ToolMessage, ...]]


def answer(query: Query, results: Results = run_tools) -> LoopResult:
    """The reference loop's rounds on `query`: call 1, then at most `max_rounds` times "run
    the tools, call again"; at the budget the pending requests answered "Not executed" and
    one closing call. A provider error raises `ProviderCallError` (callers decide what the
    person sees)."""
    call = query.call
    for number in range(1, call.max_rounds + 2):
        turn = query.ask(number)
        if not turn.message.tool_calls:
            return query.answered(turn.message.text)
        if number <= call.max_rounds:
            query.add(turn, results(turn, call.tools))
        else:
            query.add(turn, not_executed(turn.message.tool_calls))
    return query.answered(query.ask(call.max_rounds + 2, closing=True).message.text)


def answer_or_admit(query: Query, results: Results = run_tools) -> LoopResult:
    """`answer`, with a provider error reported as the loop's error (never as the answer)."""
    try:
        return answer(query, results)
    except ProviderCallError as exc:
        return query.failed(str(exc))
