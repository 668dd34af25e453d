"""The loop's rounds: L1 (one round), L2 (normal exit), L3 (round budget), L4 (sequential
tools)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import pairwise

from harness.checks.input import CheckInput, QueryInput, ToolRunAt
from harness.checks.registry import rule
from harness.checks.view import (
    Shape,
    answer_for,
    answers,
    any_answer,
    any_tool_request,
    appended_turn,
    asks_tools,
    canonical,
    describe_run,
    is_not_executed,
    logical_calls,
    match_runs,
    request_key,
    run_key,
    runs_by_call,
    shape,
    short,
)
from harness.findings import Finding
from harness.scenario.model import Scenario
from harness.scenario.tool_schema import argument_errors
from harness.trace.model import WireCall, WireToolCall, WireToolResult


def _tools_involved(data: CheckInput) -> bool:
    """A reply asked for tools, or a tool ran."""
    return any_tool_request(data) or any(q.tool_runs for q in data.queries)


# ---- L1 --------------------------------------------------------------------------------------


@rule(
    "L1",
    title="One round",
    description="After each model call the tools its reply asked for run, once each, and "
    "their results go back on the next call; no tool runs that no reply asked for.",
    needs="run",
    applies=_tools_involved,
)
def one_round_runs_requested_tools(data: CheckInput) -> Iterator[Finding]:
    for query in data.queries:
        grouped = runs_by_call(query)
        calls = logical_calls(query.calls)
        for i, call in enumerate(calls):
            following = calls[i + 1] if i + 1 < len(calls) else None
            yield from _round(data.scenario, query, call, following, grouped.pop(call.number, []))
        for runs in grouped.values():
            for run in runs:
                yield Finding(
                    rule="L1",
                    query=query.index,
                    call=run.call or None,
                    message=f"{describe_run(run)} ran where no reply of this query had asked "
                    "for it",
                    expected="tools run only after a reply that asks for them",
                    actual=f"ran after call {run.call}" if run.call else "ran before any call",
                )


def _round(
    scenario: Scenario | None,
    query: QueryInput,
    call: WireCall,
    following: WireCall | None,
    runs: list[ToolRunAt],
) -> Iterator[Finding]:
    requested = call.response.calls if asks_tools(call) else ()
    results: dict[int, WireToolResult] = {}
    if following is not None:
        found = appended_turn(call, following, query.message)
        results = answer_for(requested, found.after if found else None)
    matched, unmatched = match_runs(requested, runs)
    for run in unmatched:
        yield _unrequested(query, call, run, requested)
    for index, run in matched.items():
        if following is None:
            yield Finding(
                rule="L1",
                query=query.index,
                call=call.number,
                path=requested[index].path,
                ids=tuple(filter(None, [requested[index].id])),
                message=f"{describe_run(run)} ran, but no later call sent its result back",
                expected="the result sent on the next call",
                actual="no next call",
            )
    if following is not None and following.request.tool_choice == "none":
        return  # requests answered on a closing call are not run (L11 judges their results)
    for index, request in enumerate(requested):
        result = results.get(index)
        if index in matched or result is None or is_not_executed(result) or result.is_error:
            continue
        if _runnable(scenario, request):
            yield Finding(
                rule="L1",
                query=query.index,
                call=following.number if following else call.number,
                path=result.path,
                ids=tuple(filter(None, [request.id])),
                message=f"the request {request.name} of call {call.number} was answered "
                f"({short(result.content)!r}) without running the tool",
                expected=f"{request.name} runs once",
                actual="never ran",
            )


def _unrequested(
    query: QueryInput, call: WireCall, run: ToolRunAt, requested: Sequence[WireToolCall]
) -> Finding:
    again = any(request_key(r) == run_key(run) for r in requested)
    return Finding(
        rule="L1",
        query=query.index,
        call=call.number,
        message=f"{describe_run(run)} ran "
        + ("more often than the reply asked" if again else "but the reply did not ask for it"),
        expected=", ".join(f"{n}({a})" for n, a in map(request_key, requested)) or "no tool",
        actual=describe_run(run),
    )


def _runnable(scenario: Scenario | None, request: WireToolCall) -> bool:
    """A request a correct loop runs: a declared tool with arguments that fit its schema (an
    unknown tool or bad arguments is answered with an error instead, without running)."""
    tool = scenario.tool(request.name) if scenario is not None else None
    if tool is None or not isinstance(request.arguments, dict):
        return False
    # The scenario's own validator: refs stay inside the schema, patterns run on RE2 (a
    # model's arguments are untrusted input too).
    return not argument_errors(tool.parameters, request.arguments)


# ---- L2 --------------------------------------------------------------------------------------


@rule(
    "L2",
    title="Normal exit",
    description="A reply that asks for no tool ends the loop: no further model call, and its "
    "text is the answer.",
    needs="wire",
    applies=any_answer,
)
def answer_ends_the_loop(data: CheckInput) -> Iterator[Finding]:
    for query in data.queries:
        calls = logical_calls(query.calls)
        ending = next((c for c in calls if answers(c)), None)
        if ending is None:
            continue
        later = [c for c in calls if c.number > ending.number]
        if later:
            yield Finding(
                rule="L2",
                query=query.index,
                call=later[0].number,
                message=f"call {later[0].number} was made after call {ending.number} answered "
                "without asking for tools",
                expected=f"the loop ends at call {ending.number}",
                actual=f"{len(later)} more call(s)",
            )
        handed = query.answer if query.error is None else None
        if handed is not None and _flat(handed) != _flat(ending.response.text):
            yield Finding(
                rule="L2",
                query=query.index,
                call=ending.number,
                message="the answer handed back is not the text of the reply that ended the loop",
                expected=repr(short(ending.response.text)),
                actual=repr(short(handed)),
            )


def _flat(text: str) -> str:
    return " ".join(text.split())


# ---- L3 --------------------------------------------------------------------------------------


def _with_budget(data: CheckInput) -> bool:
    return bool(data.trace.calls) and data.scenario is not None


@rule(
    "L3",
    title="Round budget",
    description="Per user message at most max_rounds tool rounds and max_rounds + 1 ordinary "
    "calls; the closing call comes only once the budget is spent, and a new user message "
    "starts a fresh budget.",
    needs="scenario",
    applies=_with_budget,
)
def round_budget_per_message(data: CheckInput) -> Iterator[Finding]:
    assert data.scenario is not None
    budget = data.scenario.max_rounds
    for query in data.queries:
        found = shape(query, budget)
        yield from _budget_counts(found, budget)
        yield from _budget_cut_short(found, budget)


def _budget_counts(found: Shape, budget: int) -> Iterator[Finding]:
    query = found.query
    ordinary = [c for c in found.calls if c not in found.closing]
    if len(ordinary) > budget + 1:
        yield Finding(
            rule="L3",
            query=query.index,
            call=ordinary[budget + 1].number,
            message=f"{len(ordinary)} ordinary model calls for one user message",
            expected=f"at most max_rounds + 1 = {budget + 1}",
            actual=str(len(ordinary)),
        )
    rounds = sorted({r.call for r in query.tool_runs or () if r.call})
    if len(rounds) > budget:
        yield Finding(
            rule="L3",
            query=query.index,
            call=rounds[budget],
            message=f"tools ran in {len(rounds)} rounds for one user message",
            expected=f"at most max_rounds = {budget}",
            actual=str(len(rounds)),
        )


def _budget_cut_short(found: Shape, budget: int) -> Iterator[Finding]:
    query, position = found.query, found.position
    for call in found.closing:
        at = position[call.number]  # a correct closing call is call budget + 2 of the query
        if at < budget + 2:
            yield Finding(
                rule="L3",
                query=query.index,
                call=call.number,
                message=f"the budget was treated as spent after {max(at - 2, 0)} round(s): "
                f"call {call.number} closes the query (each user message has {budget} "
                "rounds of its own)",
                expected=f"the closing call as call {budget + 2} of the query",
                actual=f"call {at} of the query",
            )
    last = found.calls[-1] if found.calls else None
    if last is None or last in found.closing or query.error is not None:
        return
    if asks_tools(last) and position[last.number] <= budget:
        yield Finding(
            rule="L3",
            query=query.index,
            call=last.number,
            message=f"the loop stopped after {position[last.number] - 1} round(s) with "
            "tool requests pending",
            expected=f"up to {budget} rounds",
            actual="no further call",
        )


# ---- L4 --------------------------------------------------------------------------------------


@rule(
    "L4",
    title="Sequential tools",
    description="The tools one turn asks for run one at a time, never overlapping, in the "
    "order the model listed them.",
    needs="run",
    applies=_tools_involved,
)
def tools_run_one_at_a_time(data: CheckInput) -> Iterator[Finding]:
    calls = {c.number: c for c in data.trace.calls}
    for query in data.queries:
        yield from _overlaps(query)
        for number, runs in runs_by_call(query).items():
            call = calls.get(number)
            if call is not None and asks_tools(call):
                yield from _order(query, call, runs)


def _overlaps(query: QueryInput) -> Iterator[Finding]:
    runs = sorted(query.tool_runs or (), key=lambda r: r.run.started)
    for earlier, later in pairwise(runs):
        if later.run.started < earlier.run.ended:
            yield Finding(
                rule="L4",
                query=query.index,
                call=later.call or None,
                message=f"{describe_run(later)} started before {describe_run(earlier)} "
                f"ended (threads {earlier.run.thread} and {later.run.thread})",
                expected="one tool at a time",
                actual="overlapping runs",
            )


def _order(query: QueryInput, call: WireCall, runs: Sequence[ToolRunAt]) -> Iterator[Finding]:
    """The runs that carry out the reply's requests, in start order, follow the listed order
    (runs no request asked for are L1's)."""
    matched, _ = match_runs(call.response.calls, runs)
    ran = sorted(matched, key=lambda index: matched[index].run.started)
    if ran != sorted(ran):
        yield Finding(
            rule="L4",
            query=query.index,
            call=call.number,
            path="response",
            message=f"the tools of call {call.number}'s reply ran in another order than listed",
            expected=" → ".join(describe_call(call.response.calls[i]) for i in sorted(ran)),
            actual=" → ".join(describe_run(matched[i]) for i in ran),
        )


def describe_call(request: WireToolCall) -> str:
    return f"{request.name}({canonical(request.arguments)})"
