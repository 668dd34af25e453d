"""What the person gets: L14 (the closing answer) and L15 (no broken endings)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from harness.checks.input import CheckInput, QueryInput
from harness.checks.phrases import (
    CONTINUE_WORDS,
    LIMIT_WORDS,
    NO_CONTENT,
    ClosingPhrases,
    contains_any,
    technical_text,
)
from harness.checks.registry import rule
from harness.checks.view import (
    Shape,
    answers,
    asks_tools,
    empty_reply,
    failed,
    logical_calls,
    provider_failure,
    shape,
    short,
)
from harness.findings import Finding
from harness.scenario.model import ClosingExpectation, Scenario
from harness.trace.model import WireCall

# ---- L14 -------------------------------------------------------------------------------------


def _budget_spent(query: QueryInput, found: Shape) -> bool:
    """The query used its whole budget: the limit was reached, a closing call was made, or the
    loop stopped while the model still asked for tools after running them `budget` times
    (a loop that counts its own way, or stops without a closing call)."""
    if found.limit is not None or found.closing:
        return True
    rounds = len({r.call for r in query.tool_runs}) if query.tool_runs is not None else 0
    last = found.calls[-1] if found.calls else None
    stopped_asking = last is not None and asks_tools(last)
    return stopped_asking and (found.budget is None or rounds >= found.budget)


def _any_budget_spent(data: CheckInput) -> bool:
    budget = data.scenario.max_rounds if data.scenario is not None else None
    return any(_budget_spent(q, shape(q, budget)) for q in data.queries)


@rule(
    "L14",
    title="The closing answer",
    description="When the budget ran out (closing call or not) the answer explains the limit, "
    "asks whether to continue, never claims a write that was not executed, and is the closing "
    "reply's text when there was one (Portuguese, English and Spanish by default; scenarios "
    "add phrases).",
    needs="scenario",
    applies=_any_budget_spent,
)
def closing_answer_explains_and_asks(data: CheckInput) -> Iterator[Finding]:
    scenario = data.scenario
    assert scenario is not None
    for query in data.queries:
        found = shape(query, scenario.max_rounds)
        if not _budget_spent(query, found) or query.error is not None:
            continue  # no closing answer to judge; an error is L15's
        closing = found.closing[0] if found.closing else None
        text = query.answer if query.answer is not None else _text(closing)
        yield from _judge(scenario, found, closing, text)


def _text(call: WireCall | None) -> str:
    return call.response.text if call is not None and not failed(call) else ""


def _judge(
    scenario: Scenario, found: Shape, closing: WireCall | None, text: str
) -> Iterator[Finding]:
    query = found.query
    expect = _expectation(scenario, query)
    phrases = ClosingPhrases(
        continue_words=CONTINUE_WORDS,
        limit_words=LIMIT_WORDS + scenario.closing_phrases.explains_limit,
        must_not_contain=expect.must_not_contain,
    )
    number = closing.number if closing is not None else None
    if number is None and found.limit is not None:
        number = found.limit.number  # no closing call: the answer came after the limit call
    if number is None and found.calls:
        number = found.calls[-1].number  # the loop stopped here, the model still asking
    base = Finding(rule="L14", query=query.index, call=number, message="")
    shown = repr(short(text, 90)) if text.strip() else "no text"
    if closing is not None and answers(closing) and _flat(text) != _flat(closing.response.text):
        yield replace(
            base,
            path="response",
            message="the answer handed back is not the closing reply's text",
            expected=repr(short(closing.response.text, 90)),
            actual=shown,
        )
    asks = phrases.asks_to_continue(text) or (
        contains_any(text, scenario.closing_phrases.asks_to_continue) is not None
    )
    if expect.asks_to_continue is not False and not asks:
        yield replace(
            base,
            message="the closing answer does not ask whether to continue",
            expected="a question whether to continue",
            actual=shown,
        )
    if expect.explains_limit is not False and not phrases.explains_limit(text):
        yield replace(
            base,
            message="the closing answer does not explain the step limit",
            expected="a mention of the step limit",
            actual=shown,
        )
    claim = phrases.claim(text, writes_pending=_writes_pending(scenario, found))
    if claim is not None:
        yield replace(
            base,
            message=f"the closing answer claims a write that was not executed ({claim!r})",
            expected="no claim that a pending write happened",
            actual=shown,
        )


def _expectation(scenario: Scenario, query: QueryInput) -> ClosingExpectation:
    if query.index < len(scenario.messages):
        return scenario.messages[query.index].expect.closing or ClosingExpectation()
    return ClosingExpectation()


def _writes_pending(scenario: Scenario, found: Shape) -> bool:
    """A pending request is a write, or a tool the scenario does not know (maybe one)."""
    last = found.limit or (found.calls[-1] if found.calls and not found.closing else None)
    pending = last.response.calls if last is not None and asks_tools(last) else ()
    tools = [scenario.tool(c.name) for c in pending]
    return any(tool is None or tool.effect == "write" for tool in tools)


def _flat(text: str) -> str:
    return " ".join(text.split())


# ---- L15 -------------------------------------------------------------------------------------


def _answers_known(data: CheckInput) -> bool:
    return bool(data.queries)


@rule(
    "L15",
    title="No broken endings",
    description="The person never gets a technical error caused by the loop, a half sentence "
    "written between rounds presented as the answer (alone or joined with other lines), an "
    'empty answer, a generic "no content" message, or a raw provider error, HTTP status line, '
    "exception or traceback shown as the answer.",
    needs="run",
    applies=_answers_known,
)
def no_broken_endings(data: CheckInput) -> Iterator[Finding]:
    for query in data.queries:  # needs="run": every answer is known
        calls = logical_calls(query.calls)
        last = calls[-1] if calls else None
        if query.error is not None:
            if not _provider_to_blame(last):
                yield Finding(
                    rule="L15",
                    query=query.index,
                    call=last.number if last else None,
                    message="the person gets a technical error instead of an answer",
                    expected="an answer (the closing answer when the budget ran out)",
                    actual=short(query.error, 160),
                )
            continue
        yield from _broken_answer(query, calls, last)


def _provider_to_blame(last: WireCall | None) -> bool:
    """The query failed because the provider did: a server or network failure, an empty
    reply, or tool requests in a reply whose tool choice was none."""
    if last is None:
        return False
    if provider_failure(last) or empty_reply(last):
        return True
    return last.request.tool_choice == "none" and asks_tools(last)


def _broken_answer(
    query: QueryInput, calls: tuple[WireCall, ...], last: WireCall | None
) -> Iterator[Finding]:
    answer = query.answer or ""
    base = Finding(rule="L15", query=query.index, call=last.number if last else None, message="")
    final = last.response.text if last is not None and answers(last) else None
    if not answer.strip():
        yield replace(
            base,
            message="the answer is empty",
            expected="the model's answer",
            actual="no text",
        )
        return
    technical = technical_text(answer)
    if technical is not None:
        yield replace(
            base,
            message=f"the answer is a technical error ({technical!r})",
            expected="an answer, or a plain explanation that it could not answer",
            actual=repr(short(answer, 90)),
        )
        return
    if final is not None and _flat(final) == _flat(answer):
        return
    interim = next(
        (
            c
            for c in calls
            if asks_tools(c) and c.response.text.strip() and _flat(c.response.text) in _flat(answer)
        ),
        None,
    )
    if interim is not None:
        yield replace(
            base,
            message=f"the answer is the half sentence call {interim.number}'s reply wrote "
            "before asking for tools",
            expected="an answer (the closing answer when the budget ran out)",
            actual=repr(short(answer, 90)),
        )
    elif (phrase := contains_any(answer, NO_CONTENT)) is not None:
        yield replace(
            base,
            message=f"the answer is a generic error message ({phrase!r})",
            expected="an answer (the closing answer when the budget ran out)",
            actual=repr(short(answer, 90)),
        )
