"""When the rounds run out: L11 (pending requests answered, not executed), L12 (one closing
call, tools declared, tool choice none) and L13 (the order in the system instructions, never in
a tool result)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from harness.checks.input import CheckInput
from harness.checks.phrases import holds_order
from harness.checks.registry import rule
from harness.checks.view import (
    Shape,
    answer_for,
    any_limit,
    appended_turn,
    describe_run,
    ids_of,
    is_not_executed,
    last_results,
    match_runs,
    runs_by_call,
    shape,
    short,
)
from harness.findings import Finding
from harness.loop.closing import NOT_EXECUTED_RESULT
from harness.trace.model import WireCall


def _budget(data: CheckInput) -> int | None:
    return data.scenario.max_rounds if data.scenario is not None else None


# ---- L11 -------------------------------------------------------------------------------------


@rule(
    "L11",
    title="Pending requests answered, not executed",
    description="When the budget is spent and the last turn still asks for tools, none of "
    f"them runs and each gets the result {NOT_EXECUTED_RESULT!r}, sent with the turn.",
    needs="scenario",
    applies=any_limit,
)
def pending_requests_not_executed(data: CheckInput) -> Iterator[Finding]:
    for query in data.queries:
        found = shape(query, _budget(data))
        if found.limit is not None:
            yield from _pending(found)


def _pending(found: Shape) -> Iterator[Finding]:
    query, limit = found.query, found.limit
    assert limit is not None
    pending = limit.response.calls
    ran, _ = match_runs(pending, runs_by_call(query).get(limit.number, []))
    for index, run in ran.items():
        yield Finding(
            rule="L11",
            query=query.index,
            call=limit.number,
            path=pending[index].path,
            ids=tuple(filter(None, [pending[index].id])),
            message=f"{describe_run(run)} ran although the budget was spent",
            expected="not run",
            actual="ran",
        )
    following = found.next_of(limit)
    if following is None:
        yield Finding(
            rule="L11",
            query=query.index,
            call=limit.number,
            path="response",
            ids=ids_of(pending),
            message=f"the budget ran out with {len(pending)} request(s) pending, and no call "
            "answered them",
            expected=f"each answered {NOT_EXECUTED_RESULT!r} on the closing call",
            actual="the loop stopped",
        )
        return
    appended = appended_turn(limit, following, query.message)
    results = answer_for(pending, appended.after if appended else None)
    for index, request in enumerate(pending):
        result = results.get(index)
        if result is None or not is_not_executed(result):
            yield Finding(
                rule="L11",
                query=query.index,
                call=following.number,
                path=result.path if result else "messages",
                ids=tuple(filter(None, [request.id])),
                message=f"the pending request {request.name} was not answered as not executed",
                expected=repr(NOT_EXECUTED_RESULT),
                actual=repr(short(result.content)) if result else "no result",
            )


# ---- L12 -------------------------------------------------------------------------------------


@rule(
    "L12",
    title="One closing call, text only",
    description="After the pending requests are answered, exactly one more call is made with "
    "the tools still declared and tool choice none, in the provider's own spelling.",
    needs="wire",
    applies=any_limit,
)
def closing_call_disables_tools(data: CheckInput) -> Iterator[Finding]:
    for query in data.queries:
        found = shape(query, _budget(data))
        if found.limit is not None and found.next_of(found.limit) is None:
            yield Finding(
                rule="L12",
                query=query.index,
                call=found.limit.number,
                message="the budget ran out with requests pending and no closing call followed",
                expected="one closing call with tool choice none",
                actual="no closing call",
            )
        for call in found.closing:
            yield from _closing(found, call.number)


def _closing(found: Shape, number: int) -> Iterator[Finding]:
    query = found.query
    call = next(c for c in found.calls if c.number == number)
    base = Finding(rule="L12", query=query.index, call=number, message="")
    if call.request.tool_choice != "none":
        yield replace(
            base,
            path="tool_choice",
            message="the closing call lets the model ask for tools",
            expected="tool choice none",
            actual=call.request.tool_choice
            + (f" ({call.request.tool_choice_name})" if call.request.tool_choice_name else ""),
        )
    usual = found.calls[0].request.declared_tools if found.calls[0] is not call else ()
    declared = call.request.declared_tools
    missing = [t for t in usual if t not in declared]
    if not declared or missing:
        yield replace(
            base,
            path="tools",
            message="the closing call drops the tools"
            if not declared
            else f"the closing call leaves out tools: {', '.join(missing)}",
            expected=", ".join(usual) or "the tools still declared",
            actual=", ".join(declared) or "no tools",
        )
    later = [c for c in found.calls if c.number > number]
    if later:
        yield replace(
            base,
            message=f"{len(later)} more call(s) after the closing call",
            expected="exactly one closing call, then the answer",
            actual=f"call {later[0].number} follows",
        )


# ---- L13 -------------------------------------------------------------------------------------


def _any_closing(data: CheckInput) -> bool:
    """A closing call was made in some query (without one, L12 says so and L13 is n/a)."""
    budget = _budget(data)
    return any(shape(query, budget).closing for query in data.queries)


@rule(
    "L13",
    title="The order in the system instructions",
    description="The closing call's system instructions are the usual system prompt plus the "
    "step-limit order; no tool result carries an order.",
    needs="wire",
    applies=_any_closing,
)
def closing_order_in_system_instructions(data: CheckInput) -> Iterator[Finding]:
    scenario_system = data.scenario.system if data.scenario is not None else None
    for query in data.queries:
        found = shape(query, _budget(data))
        first = found.calls[0] if found.calls else None
        for call in found.closing:
            usual = scenario_system
            if usual is None and first is not None and first is not call:
                usual = first.request.system  # wire only: the query's ordinary system text
            if usual is not None:
                yield from _closing_system(query.index, call, usual)
            yield from _orders_in_results(query.index, call)


def _closing_system(query: int, call: WireCall, usual: str) -> Iterator[Finding]:
    """The usual prompt kept (before or after the addition) and something added to it."""
    base = Finding(rule="L13", query=query, call=call.number, path="system", message="")
    system, usual = call.request.system.strip(), usual.strip()
    if usual not in system:
        yield replace(
            base,
            message="the closing call's system instructions do not keep the usual system prompt",
            expected=repr(short(usual)) + " + the step-limit order",
            actual=repr(short(system)),
        )
    elif len(system) <= len(usual):
        yield replace(
            base,
            message="the step-limit order is not in the closing call's system instructions",
            expected="the usual system prompt + the step-limit order",
            actual="the usual system prompt only" if system else "no system text",
        )


def _orders_in_results(query: int, call: WireCall) -> Iterator[Finding]:
    for result in last_results(call.request):
        order = None if is_not_executed(result) else holds_order(result.content)
        if order is not None:
            yield Finding(
                rule="L13",
                query=query,
                call=call.number,
                path=result.path,
                ids=tuple(filter(None, [result.call_id])),
                message=f"a tool result carries an order ({order!r}): text in a tool result is "
                "data, not an instruction",
                expected=repr(NOT_EXECUTED_RESULT),
                actual=repr(short(result.content, 90)),
            )
