"""Loops that handle the round budget their own way: a canned limit sentence, a framework
that raises at its request limit, a CLI agent that hands back its whole printed transcript,
and a budget hard-coded at 10."""

from __future__ import annotations

from dataclasses import replace

from harness.chat import ToolCall
from harness.loop.adapters import adapter_for
from harness.loop.contract import LoopCall, LoopResult
from harness.loop.reference import run_loop
from tests.corpus.kit import Query, not_executed, run_tools

CANNED = "Maximum rounds reached, try something simpler."


def canned_limit_sentence(call: LoopCall) -> LoopResult:
    """The hand-written loop of many tutorials: `for step in range(MAX + 1)`, run the tools,
    and when the last allowed call still asks for tools, give up with a fixed sentence —
    no pending request answered, no closing call, the model never asked to explain."""
    query = Query(call)
    for number in range(1, call.max_rounds + 2):
        turn = query.ask(number)
        if not turn.message.tool_calls:
            return query.answered(turn.message.text)
        if number > call.max_rounds:
            return query.answered(CANNED)
        query.add(turn, run_tools(turn, call.tools))
    raise AssertionError("unreachable")


class UsageLimitExceeded(RuntimeError):
    """What a framework raises when its request limit is reached."""


def raise_at_the_limit(call: LoopCall) -> LoopResult:
    """pydantic-ai's `UsageLimits(request_limit=...)` shape: the tools a reply asks for always
    run (the pending write included); the limit is checked before the *next* request, which
    raises `UsageLimitExceeded` ("The next request would exceed the request_limit of 2"), and
    the app lets it propagate."""
    limit = call.max_rounds + 1
    query = Query(call)
    number = 0
    while True:
        if number >= limit:
            raise UsageLimitExceeded(f"The next request would exceed the request_limit of {limit}")
        number += 1
        turn = query.ask(number)
        if not turn.message.tool_calls:
            return query.answered(turn.message.text)
        query.add(turn, run_tools(turn, call.tools))


def _debug(request: ToolCall, content: str) -> str:
    return f"[tool] {request.name}({dict(request.arguments)}) -> {content}"


def transcript_at_the_limit(call: LoopCall) -> LoopResult:
    """A CLI agent that prints as it goes — each turn's text and a debug line per tool
    (`[tool] name(args) -> result`) — and returns everything it printed as the answer. At
    the limit it stops where the article's first version did: the last turn still asks for
    tools, nothing answers them, no closing call; the person gets the interim half sentences
    and the debug lines."""
    query = Query(call)
    lines: list[str] = []
    for number in range(1, call.max_rounds + 2):
        turn = query.ask(number)
        if turn.message.text:
            lines.append(turn.message.text)
        if not turn.message.tool_calls or number > call.max_rounds:
            return query.answered("\n".join(lines))
        results = run_tools(turn, call.tools)
        lines.extend(
            _debug(r, m.content) for r, m in zip(turn.message.tool_calls, results, strict=True)
        )
        query.add(turn, results)
    raise AssertionError("unreachable")


def transcript_with_closing_call(call: LoopCall) -> LoopResult:
    """The same printing agent with the step limit handled as the rules say (pending requests
    answered "Not executed", one closing call); the answer is still everything it printed —
    interim half sentences, debug lines, then the closing reply."""
    query = Query(call)
    lines: list[str] = []
    for number in range(1, call.max_rounds + 3):
        closing = number == call.max_rounds + 2
        turn = query.ask(number, closing=closing)
        if turn.message.text:
            lines.append(turn.message.text)
        if closing or not turn.message.tool_calls:
            return query.answered("\n".join(lines))
        pending = number > call.max_rounds
        results = not_executed(turn.message.tool_calls) if pending else run_tools(turn, call.tools)
        lines.extend(
            _debug(r, m.content) for r, m in zip(turn.message.tool_calls, results, strict=True)
        )
        query.add(turn, results)
    raise AssertionError("unreachable")


MAX_TOOL_ROUNDS = 10


def budget_fixed_at_ten(call: LoopCall) -> LoopResult:
    """The reference loop with the article's default budget hard-coded (`MAX_TOOL_ROUNDS =
    10`), whatever budget the app was configured with — as most agents ship."""
    return run_loop(adapter_for(call), replace(call, max_rounds=MAX_TOOL_ROUNDS))
