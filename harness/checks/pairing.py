"""What each round appends and how requests and results pair: L5 and L6."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from harness.checks.input import CheckInput, QueryInput, ToolRunAt
from harness.checks.registry import rule
from harness.checks.view import (
    answer_for,
    any_tool_request,
    appended_turn,
    asks_tools,
    calls_match,
    describe_calls,
    ids_of,
    logical_calls,
    match_runs,
    pairs,
    runs_by_call,
    same_content,
    short,
)
from harness.findings import Finding
from harness.trace.model import WireCall, WireMessage, WireToolCall, WireToolResult


def _holds_tool_blocks(data: CheckInput) -> bool:
    return any_tool_request(data) or any(
        m.calls or m.results for c in data.trace.calls for m in c.request.messages
    )


# ---- L5 --------------------------------------------------------------------------------------


@rule(
    "L5",
    title="What each round appends",
    description="Each round appends the model's turn exactly as it came (text, requests, ids, "
    "arguments) at the end of the active sequence, then its results, each carrying the id "
    "of the request it answers.",
    needs="wire",
    applies=any_tool_request,
)
def round_appends_turn_then_results(data: CheckInput) -> Iterator[Finding]:
    for query in data.queries:
        grouped = runs_by_call(query) if query.tool_runs is not None else {}
        for a, b in pairs(logical_calls(query.calls)):
            if not asks_tools(a):
                continue
            yield from _appended(query, a, b)
            if grouped:
                yield from _swapped(query, a, b, grouped.get(a.number, []))


def _appended(query: QueryInput, a: WireCall, b: WireCall) -> Iterator[Finding]:
    found = appended_turn(a, b, query.message)
    base = Finding(
        rule="L5", query=query.index, call=b.number, ids=ids_of(a.response.calls), message=""
    )
    if found is None:
        yield replace(
            base,
            path="messages",
            message=f"the turn of call {a.number}'s reply is not in this request",
            expected=describe_calls(a.response.calls),
            actual="no such turn",
        )
        return
    turn = found.turn
    if not found.in_place:
        yield replace(
            base,
            path=turn.path,
            message=f"the turn of call {a.number}'s reply is not where the round appends it "
            "(right after the previous round, at the end of the active sequence)",
            expected="the turn, then its results, appended",
            actual=f"found at {turn.path}",
        )
    if turn.text.strip() != a.response.text.strip():
        yield replace(
            base,
            path=turn.path,
            message=f"the text of call {a.number}'s turn was changed",
            expected=repr(short(a.response.text)),
            actual=repr(short(turn.text)),
        )
    if not calls_match(a.response.calls, turn.calls):
        yield replace(
            base,
            path=turn.path,
            message=f"the tool requests of call {a.number}'s turn were not sent back as the "
            "model gave them",
            expected=describe_calls(a.response.calls),
            actual=describe_calls(turn.calls),
        )


def _swapped(
    query: QueryInput, a: WireCall, b: WireCall, runs: Sequence[ToolRunAt]
) -> Iterator[Finding]:
    """A result carrying another request's output: the ids were mixed up."""
    found = appended_turn(a, b, query.message)
    requested = a.response.calls
    results = answer_for(requested, found.after if found else None)
    matched, _ = match_runs(requested, runs)
    outputs = {i: run.run.result for i, run in matched.items()}
    for index, result in results.items():
        own = outputs.get(index)
        if own is None or same_content(result.content, own):
            continue
        other = next(
            (
                j
                for j, out in outputs.items()
                if j != index and same_content(result.content, out) and not same_content(out, own)
            ),
            None,
        )
        if other is not None:
            yield Finding(
                rule="L5",
                query=query.index,
                call=b.number,
                path=result.path,
                ids=tuple(filter(None, [result.call_id, requested[other].id])),
                message=f"the result for {requested[index].name} (id {requested[index].id}) "
                f"carries the output of {requested[other].name} (id {requested[other].id})",
                expected=repr(short(own)),
                actual=repr(short(result.content)),
            )


# ---- L6 --------------------------------------------------------------------------------------


@rule(
    "L6",
    title="Pairing",
    description="Every tool request gets exactly one result, no result exists without its "
    "request, and the results come immediately after the turn that asked, in its order.",
    needs="wire",
    applies=_holds_tool_blocks,
)
def every_request_has_one_result(data: CheckInput) -> Iterator[Finding]:
    for call in data.trace.calls:
        messages = call.request.messages
        for i, message in enumerate(messages):
            if message.role == "tool":
                before = messages[i - 1] if i else None
                if before is None or before.role != "model" or not before.calls:
                    yield _finding(
                        call,
                        message,
                        "results without a turn asking for them right before",
                        ids=tuple(filter(None, (r.call_id for r in message.results))),
                        expected="a model turn with these requests, then the results",
                        actual="results after a " + (before.role if before else "request start"),
                    )
            elif message.role == "model" and message.calls:
                following = messages[i + 1] if i + 1 < len(messages) else None
                yield from _answered(call, message, following)


def _answered(
    call: WireCall, turn: WireMessage, following: WireMessage | None
) -> Iterator[Finding]:
    if following is None or following.role != "tool":
        yield _finding(
            call,
            turn,
            "tool requests without their results immediately after",
            ids=ids_of(turn.calls),
            expected="the results in the next message",
            actual="the request ends here" if following is None else f"a {following.role} message",
        )
        return
    yield from _missing_and_extra(call, turn.calls, following)
    yield from _order(call, turn.calls, following)


def _missing_and_extra(
    call: WireCall, requests: Sequence[WireToolCall], message: WireMessage
) -> Iterator[Finding]:
    answered = answer_for(requests, message)
    for index, request in enumerate(requests):
        if index not in answered:
            yield _finding(
                call,
                message,
                f"the request {request.name} has no result",
                ids=tuple(filter(None, [request.id])),
                expected=f"one result for {request.id or f'request {index + 1}'}",
                actual="none",
            )
            continue
        result = answered[index]
        count = sum(1 for r in message.results if request.id and r.call_id == request.id)
        if count > 1:
            yield _finding(
                call,
                message,
                f"the request {request.name} has {count} results",
                ids=(request.id or "",),
                expected="exactly one",
                actual=str(count),
            )
        if not request.id and result.name is not None and result.name != request.name:
            yield _result_finding(
                call,
                result,
                f"the result at position {index + 1} names {result.name} but the request "
                f"there is {request.name}",
                expected=request.name,
                actual=result.name,
            )
    yield from _orphans(call, requests, message)


def _orphans(
    call: WireCall, requests: Sequence[WireToolCall], message: WireMessage
) -> Iterator[Finding]:
    """Results no request takes: a request with an id takes the result with that id, one
    without (Gemini) the result at its position, whatever id the client gave it."""
    ids = set(ids_of(requests))
    taken: set[int] = set()
    for index, request in enumerate(requests):
        if request.id:
            found = [k for k, r in enumerate(message.results) if r.call_id == request.id]
            taken.update(found[:1])
        elif index < len(message.results):
            taken.add(index)
    for k, result in enumerate(message.results):
        if k in taken or (result.call_id is not None and result.call_id in ids):
            continue  # a second result for a request is reported as such
        yield _result_finding(
            call,
            result,
            "a result answering no request of the turn before it",
            expected=", ".join(sorted(ids)) or f"{len(requests)} result(s)",
            actual=result.call_id or f"result {k + 1} without id",
        )


def _order(
    call: WireCall, requests: Sequence[WireToolCall], message: WireMessage
) -> Iterator[Finding]:
    order = [r.id for r in requests if r.id]
    sent = [r.call_id for r in message.results if r.call_id in order]
    if len(set(sent)) == len(sent) and sent != [i for i in order if i in sent]:
        yield _finding(
            call,
            message,
            "the results are not in the order of the requests",
            ids=tuple(i for i in sent if i),
            expected=", ".join(order),
            actual=", ".join(i for i in sent if i),
        )


def _finding(
    call: WireCall,
    message: WireMessage,
    text: str,
    *,
    ids: tuple[str, ...],
    expected: str,
    actual: str,
) -> Finding:
    return Finding(
        rule="L6",
        call=call.number,
        path=message.path,
        ids=ids,
        message=text,
        expected=expected,
        actual=actual,
    )


def _result_finding(
    call: WireCall, result: WireToolResult, text: str, *, expected: str, actual: str
) -> Finding:
    return Finding(
        rule="L6",
        call=call.number,
        path=result.path,
        ids=tuple(filter(None, [result.call_id])),
        message=text,
        expected=expected,
        actual=actual,
    )
