"""The checks' view of recorded traffic judged against its scenario, with no tool log: what an
app outside the harness sent (`harness emulate --record`), read back by `harness audit
--scenario`.

The wire gives the calls; the scenario gives the budget, the system prompt, the saved history
and the user messages. Each inferred query is matched to the scenario's user message it holds
(exactly, or as the only message its text contains or is contained in — the emulator's own
rule), so a cassette of another scenario is refused. What the app did between calls (the tools
it ran) and what it showed the person are not on the wire; a query's answer is read from the
served text only when the query ended on a text reply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from harness.checks.input import CheckInput, QueryInput, infer_queries
from harness.checks.view import asks_tools, failed, logical_calls
from harness.scenario.model import Provider, Scenario
from harness.trace.chain import resolve_chains
from harness.trace.model import ApiName, Trace, WireCall

# How a query ended, as far as the wire shows: a reply with no tool request (`answered`; its
# text is what a correct app shows), a call that failed after any retries (`failed`), or a
# reply still asking for tools with no call after it (`pending`: what the app showed is unknown).
Ending = Literal["answered", "failed", "pending"]

PROVIDER_OF_API: dict[ApiName, Provider] = {
    "anthropic": "anthropic",
    "openai-responses": "openai",
    "openai-chat": "openai",
    "gemini": "gemini",
}


class ScenarioMismatch(Exception):
    """The traffic does not belong to the scenario (the message says which user message)."""


@dataclass(frozen=True, kw_only=True)
class QueryReading:
    """One inferred query: its position on the wire, the scenario message it answers, how it
    ended, and the served answer when it ended on a text reply."""

    position: int
    message: int  # index into scenario.messages
    ending: Ending
    closing: bool  # a call of the query had tool choice none (the step limit was reached)
    answer: str | None
    error: str | None
    first_call: int


@dataclass(frozen=True, kw_only=True)
class ScenarioReading:
    """`wire`: every query, answers unknown (what the wire and scenario rules read);
    `answered`: only the queries that ended on a text reply, each with that text as its answer
    (what the answer rules, L14 and L15, read)."""

    scenario: Scenario
    wire: CheckInput
    answered: CheckInput
    queries: tuple[QueryReading, ...]


def reading_from_trace(trace: Trace, scenario: Scenario) -> ScenarioReading:
    """The trace's queries matched to the scenario; `ScenarioMismatch` when a query's user
    message is none of the scenario's."""
    trace = replace(trace, calls=resolve_chains(trace.calls))
    inferred = infer_queries(trace.calls)
    readings = tuple(_reading(scenario, q) for q in inferred)
    queries = tuple(_query(scenario, q, r) for q, r in zip(inferred, readings, strict=True))
    wire = CheckInput(
        trace=trace,
        queries=queries,
        provider=_provider(trace.calls),
        stream=any(c.request.stream for c in trace.calls) if trace.calls else None,
        scenario=scenario,
    )
    readable = tuple(
        replace(q, answer=r.answer)
        for q, r in zip(queries, readings, strict=True)
        if r.ending == "answered"
    )
    return ScenarioReading(
        scenario=scenario,
        wire=wire,
        answered=replace(wire, queries=readable),
        queries=readings,
    )


def _provider(calls: Sequence[WireCall]) -> Provider | None:
    providers = {PROVIDER_OF_API[c.request.api] for c in calls}
    return providers.pop() if len(providers) == 1 else None


def _query(scenario: Scenario, inferred: QueryInput, reading: QueryReading) -> QueryInput:
    """The query as a run would give it: the scenario's text, its message index, and the saved
    history when it is the scenario's (the first message; later ones get the chat the app
    saved, which is not on the wire)."""
    return replace(
        inferred,
        index=reading.message,
        message=scenario.messages[reading.message].text,
        history=scenario.history if reading.message == 0 else None,
        error=reading.error,
    )


def _reading(scenario: Scenario, query: QueryInput) -> QueryReading:
    calls = logical_calls(query.calls)
    last = calls[-1]
    ending: Ending = "answered"
    answer: str | None = last.response.text
    error = None
    if failed(last):
        ending, answer = "failed", None
        error = f"call {last.number} failed ({_failure(last)}), the query's last call"
    elif asks_tools(last):
        ending, answer = "pending", None
    return QueryReading(
        position=query.index,
        message=message_index(scenario, query),
        ending=ending,
        closing=any(c.request.tool_choice == "none" for c in query.calls),
        answer=answer,
        error=error,
        first_call=query.calls[0].number,
    )


def _failure(call: WireCall) -> str:
    status = call.response.status
    said = call.response.error or "no usable reply"
    return f"{status}: {said}" if status is not None else said


def message_index(scenario: Scenario, query: QueryInput) -> int:
    """The scenario message this query answers, matched as the emulator matches it."""
    texts = [m.text for m in scenario.messages]
    text = query.message
    if text in texts:
        return texts.index(text)
    partial = [i for i, t in enumerate(texts) if text and (t in text or text in t)]
    if len(partial) == 1:
        return partial[0]
    shown = repr(text[:80]) if text else "no user text"
    raise ScenarioMismatch(
        f"user message {query.index + 1} on the wire (from interaction "
        f"{query.calls[0].number}) is {shown}, which is none of scenario {scenario.id!r}'s "
        f"messages ({', '.join(repr(t[:40]) for t in texts)})"
    )
