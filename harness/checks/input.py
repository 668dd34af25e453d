"""What the checks read: the parsed wire trace, cut into queries (one per user message), with
what the harness saw besides the wire (tool runs, answers, the saved chat) and the scenario.

Two ways in:
- `input_from_run(run)`: a cell the harness ran. Queries are the runner's own (the exchanges
  each user message caused), tool runs are tied to the model call they followed, and the
  scenario is known, so every check can run.
- `input_from_exchanges(exchanges)`: wire only (a cassette from anywhere). Queries are
  inferred from the requests (a new last user message, or a conversation that stops growing,
  starts a new one); tool runs, answers and the scenario are unknown, so only the checks that
  read the wire alone apply.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from harness.chat import Message
from harness.scenario.model import Provider, Scenario
from harness.trace.chain import resolve_chains
from harness.trace.model import ApiName, ParseProblem, Trace, WireCall, WireMessage
from harness.trace.parse import ExchangeLike, api_of, parse_exchange

if TYPE_CHECKING:  # the runner pulls in the emulator; wire-only use needs none of it
    from harness.capture import Exchange
    from harness.runner import CellRun
    from harness.tools import ToolRun

API_OF_PROVIDER: dict[Provider, ApiName] = {
    "anthropic": "anthropic",
    "openai": "openai-responses",  # the reference loop and the contract use Responses
    "gemini": "gemini",
}


@dataclass(frozen=True, kw_only=True)
class ToolRunAt:
    """A tool run and the model call it followed: `call` is the number of the last model call
    whose exchange had completed when the tool started (0: before any model call)."""

    call: int
    run: ToolRun


@dataclass(frozen=True, kw_only=True)
class QueryInput:
    """One user message through the loop.

    `message` is the user's text (from the scenario, or the last user message of the query's
    first request). `tool_runs`, `answer` and `history` are None when unknown (wire only).
    `history` is the saved chat the loop was given for this query."""

    index: int
    message: str
    calls: tuple[WireCall, ...]
    tool_runs: tuple[ToolRunAt, ...] | None = None
    answer: str | None = None
    error: str | None = None
    history: tuple[Message, ...] | None = None

    @property
    def run_known(self) -> bool:
        return self.tool_runs is not None and self.answer is not None


@dataclass(frozen=True, kw_only=True)
class CheckInput:
    """Everything a check may read. `provider`, `chat` and `scenario` are None for wire-only
    use; `apis` are the wire formats the trace holds."""

    trace: Trace
    queries: tuple[QueryInput, ...]
    provider: Provider | None = None
    stream: bool | None = None
    chat: tuple[Message, ...] | None = None
    scenario: Scenario | None = None
    # Calls whose exchange ended in a transport error (refused, a stream cut or closed early
    # by the SDK before it retried): what came back is incomplete, not a format problem.
    interrupted: frozenset[int] = frozenset()

    @property
    def apis(self) -> frozenset[ApiName]:
        apis = {call.request.api for call in self.trace.calls}
        if not apis and self.provider is not None:
            apis.add(API_OF_PROVIDER[self.provider])
        return frozenset(apis)

    @property
    def runs_known(self) -> bool:
        return bool(self.queries) and all(q.run_known for q in self.queries)


# ---- from a cell the harness ran ---------------------------------------------------------


def input_from_run(run: CellRun) -> CheckInput:
    """The checks' view of a cell: every model call numbered from 1 in the cell, each query's
    calls and tool runs, answers and errors, the saved chat and the scenario."""
    numbered, positions, problems = _numbered(run.exchanges)
    resolved = resolve_chains([call for _, call in numbered])
    calls = [(seq, call) for (seq, _), call in zip(numbered, resolved, strict=True)]
    by_seq = {seq: call for seq, call in calls}
    scenario = run.cell.scenario
    queries = tuple(
        QueryInput(
            index=query.index,
            message=query.message,
            calls=tuple(by_seq[e.seq] for e in query.exchanges if e.seq in by_seq),
            tool_runs=tuple(
                ToolRunAt(call=_call_before(positions, r.after_call), run=r)
                for r in query.tool_runs
            ),
            answer=query.answer,
            error=query.error,
            history=query.history,
        )
        for query in run.queries
    )
    return CheckInput(
        trace=Trace(calls=tuple(call for _, call in calls), problems=problems),
        queries=queries,
        provider=run.cell.provider,
        stream=run.cell.stream,
        chat=run.chat,
        scenario=scenario,
        interrupted=_interrupted(run.exchanges, calls),
    )


def _interrupted(
    exchanges: Iterable[Exchange], calls: Sequence[tuple[int, WireCall]]
) -> frozenset[int]:
    """The numbers of the calls whose exchange carried a transport error."""
    cut = {e.seq for e in exchanges if e.error is not None}
    return frozenset(call.number for seq, call in calls if seq in cut)


def _numbered(
    exchanges: Sequence[Exchange],
) -> tuple[list[tuple[int, WireCall]], list[int], tuple[ParseProblem, ...]]:
    """(seq, call) for every model call in capture order; the 1-based position of each call's
    exchange among all exchanges (tool runs count exchanges); non-model exchanges as problems."""
    ordered = sorted(exchanges, key=lambda e: e.seq)
    calls: list[tuple[int, WireCall]] = []
    positions: list[int] = []
    problems: list[ParseProblem] = []
    for position, exchange in enumerate(ordered, 1):
        if api_of(exchange.url) is None:
            problems.append(
                ParseProblem(
                    message="not a model call; skipped", path=exchange.url, side="exchange"
                )
            )
            continue
        calls.append((exchange.seq, parse_exchange(len(calls) + 1, exchange)))
        positions.append(position)
    return calls, positions, tuple(problems)


def _call_before(positions: Sequence[int], exchanges_done: int) -> int:
    """The number of model calls among the first `exchanges_done` exchanges."""
    return sum(1 for p in positions if p <= exchanges_done)


# ---- wire only -----------------------------------------------------------------------------


def input_from_exchanges(
    exchanges: Iterable[ExchangeLike], provider: Provider | None = None
) -> CheckInput:
    """The checks' view of bare exchanges (a cassette): queries inferred from the requests."""
    calls: list[WireCall] = []
    problems: list[ParseProblem] = []
    interrupted: set[int] = set()
    for exchange in exchanges:
        if api_of(exchange.url) is None:
            problems.append(
                ParseProblem(
                    message="not a model call; skipped", path=exchange.url, side="exchange"
                )
            )
            continue
        calls.append(parse_exchange(len(calls) + 1, exchange))
        if exchange.error is not None:
            interrupted.add(len(calls))
    trace = Trace(calls=tuple(calls), problems=tuple(problems))
    return replace(input_from_trace(trace, provider), interrupted=frozenset(interrupted))


def input_from_trace(trace: Trace, provider: Provider | None = None) -> CheckInput:
    trace = replace(trace, calls=resolve_chains(trace.calls))
    return CheckInput(trace=trace, queries=infer_queries(trace.calls), provider=provider)


def infer_queries(calls: Sequence[WireCall]) -> tuple[QueryInput, ...]:
    """Calls grouped into queries: a call starts a new query when its last user message
    differs from the previous call's, or when, after a successful call, its conversation does
    not grow (the same message sent again as a new query, as in a re-recorded cassette)."""
    groups: list[tuple[str, list[WireCall]]] = []
    previous: WireCall | None = None
    for call in calls:
        text, after = _last_user(call.request.messages)
        if previous is None or not _continues(previous, text, after):
            groups.append((text, []))
        groups[-1][1].append(call)
        previous = call
    return tuple(
        QueryInput(index=i, message=text, calls=tuple(group))
        for i, (text, group) in enumerate(groups)
    )


def _continues(previous: WireCall, text: str, after: int) -> bool:
    prev_text, prev_after = _last_user(previous.request.messages)
    if text != prev_text:
        return False
    failed = previous.response.status is None or previous.response.status >= 400
    return failed or after > prev_after


def _last_user(messages: Sequence[WireMessage]) -> tuple[str, int]:
    """The text of the last user message and how many messages follow it."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user":
            return messages[i].text, len(messages) - 1 - i
    return "", len(messages)
