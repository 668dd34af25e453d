"""What a query did, read from the wire and the tool log; how it compares with the scenario's
expectations (ending, rounds, executed tools, tools that must not run); and the cell's findings:
those expectations plus every loop and provider rule (`harness.checks`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from harness.findings import Finding
from harness.runner import CellRun, QueryRun
from harness.tools import ToolRun
from harness.trace.parse import parse_trace

Ending = Literal["answer", "step_limit", "error"]


@dataclass(frozen=True, kw_only=True)
class QueryOutcome:
    ending: Ending
    rounds: int  # how many times tools were run (L1, L3)
    executed: tuple[str, ...]
    model_calls: int


def query_outcome(query: QueryRun) -> QueryOutcome:
    trace = parse_trace(query.exchanges)
    rounds = len({run.after_call for run in query.tool_runs})
    ending: Ending = "answer"
    if query.error is not None:
        ending = "error"
    elif any(c.request.tool_choice == "none" for c in trace.calls):
        ending = "step_limit"
    return QueryOutcome(
        ending=ending,
        rounds=rounds,
        executed=tuple(r.name for r in query.tool_runs),
        model_calls=len(trace.calls),
    )


def ran_as_expected(expected: Sequence[str], runs: Sequence[ToolRun]) -> bool:
    """Whether `runs` are the expected tools in the expected order. Runs that overlapped in
    time have no order between them (which started first is the scheduler's choice, and
    running them at once is L4's finding): each such group matches the same tools, in any
    order, at its place in the expected list."""
    if len(expected) != len(runs):
        return False
    at = 0
    for batch in overlapping(runs):
        names = sorted(r.name for r in batch)
        if names != sorted(expected[at : at + len(batch)]):
            return False
        at += len(batch)
    return True


def overlapping(runs: Sequence[ToolRun]) -> list[list[ToolRun]]:
    """`runs` in start order, in groups of runs that overlapped in time (one run alone when
    it overlapped none)."""
    batches: list[list[ToolRun]] = []
    last_end = float("-inf")
    for run in sorted(runs, key=lambda r: (r.started, r.seq)):
        if batches and run.started < last_end:
            batches[-1].append(run)
            last_end = max(last_end, run.ended)
        else:
            batches.append([run])
            last_end = run.ended
    return batches


RULE_NO_CALL = "harness.no_model_call"


def cell_findings(run: CellRun) -> list[Finding]:
    """Everything wrong with a cell: the scenario's expectations and the API's rejections,
    then the findings of every rule check (L1–L15 and the provider rules). A query whose loop
    made no model call that reached the endpoint is that one finding alone: with nothing on
    the wire, every rule would only restate it (L1 "a tool ran before any call", an ending
    mismatch)."""
    from harness.checks import input_from_run, run_checks

    if run.error is not None and run.error_rule is not None:
        return [failure_finding(run, run.error_rule, run.error)]
    silent = no_call_findings(run)
    if silent:
        return silent
    return [*scenario_findings(run), *run_checks(input_from_run(run))]


def failure_finding(run: CellRun, rule: str, message: str) -> Finding:
    """A failure the loop named itself (an --exec program that timed out, exited non-zero or
    printed no answer): the one finding of the cell, placed at its user message. What reached
    the wire before it would only restate it (an unfinished round, a missing answer)."""
    index = run.queries[-1].index if run.queries else 0
    return Finding(rule=rule, query=index, message=f"user message {index + 1}: {message}")


def no_call_findings(run: CellRun) -> list[Finding]:
    """One finding per query that reached nothing: the loop's own exception when it raised
    (that is the defect), else that no call arrived and what usually causes it."""
    out: list[Finding] = []
    for query in run.queries:
        if query.exchanges:
            continue
        if run.error is not None and query.error == run.error:
            out.append(
                Finding(
                    rule="harness.loop_error",
                    query=query.index,
                    message=f"{run.error} (before any model call reached the harness endpoint)",
                )
            )
            continue
        why = f" (the loop reported: {query.error})" if query.error else ""
        out.append(
            Finding(
                rule=RULE_NO_CALL,
                query=query.index,
                message=f"user message {query.index + 1}: no model call reached the harness "
                f"endpoint{why}. The loop must call the model through the base URL the harness "
                "hands it: call.client / call.async_client, or a client built from "
                "call.base_url and call.api_key (or call.env; an --exec program: the query's "
                "base_url and api_key, or the SDKs' variables it is started with); a client "
                "built before the run or pointed at another URL (the real API, a proxy) is "
                "not seen",
            )
        )
    return out


def cell_verdicts(run: CellRun, findings: list[Finding] | None = None) -> dict[str, str]:
    """Rule id → pass / fail / n/a for the cell (for reports)."""
    from harness.checks import input_from_run, rule_verdicts

    return dict(rule_verdicts(input_from_run(run), findings))


def scenario_findings(run: CellRun) -> list[Finding]:
    """The scenario's expectations against what happened, plus every request the emulator
    rejected as the real API would."""
    findings: list[Finding] = []
    if run.error is not None:
        findings.append(Finding(rule="harness.loop_error", message=run.error))
    for query in run.queries:
        findings.extend(_query_findings(run, query))
    for entry in run.rejections:
        assert entry.error is not None
        findings.append(rejection_finding(entry.error.rule, entry.status, entry.error.message))
    return findings


def rejection_finding(rule: str, status: int, message: str) -> Finding:
    """An emulator log entry as a finding: the API's rejection (`api.E2`, …), or a limit of
    the scenario's script (`script.*`: the request ran past the script, answered all the
    same; or its user message could not be told), which is never the API's word."""
    if rule.startswith("script."):
        return Finding(rule=rule, message=f"the scenario's script: {message}")
    return Finding(
        rule=f"api.{rule or 'rejected'}",
        message=f"the API rejected the request ({status}): {message}",
    )


def _query_findings(run: CellRun, query: QueryRun) -> list[Finding]:
    expect = run.cell.scenario.messages[query.index].expect
    got = query_outcome(query)
    out: list[Finding] = []
    # (expectation, expected, what happened, whether they differ)
    pairs: list[tuple[str, object, object, bool]] = [
        ("ending", expect.ending, got.ending, expect.ending != got.ending),
        ("rounds", expect.rounds, got.rounds, expect.rounds != got.rounds),
        (
            "tools",
            list(expect.tools),
            list(got.executed),
            not ran_as_expected(expect.tools, query.tool_runs),
        ),
    ]
    for name, want, have, differs in pairs:
        if differs:
            detail = f": {query.error}" if name == "ending" and query.error else ""
            out.append(
                Finding(
                    rule=f"expect.{name}",
                    query=query.index,
                    message=f"user message {query.index + 1}: {name} differs{detail}",
                    expected=repr(want),
                    actual=repr(have),
                )
            )
    for tool in expect.not_run:
        if tool in got.executed:
            out.append(
                Finding(
                    rule="expect.not_run",
                    query=query.index,
                    message=f"user message {query.index + 1}: {tool!r} ran but must "
                    "not (its request came after the step limit)",
                    expected="not run",
                    actual="run",
                )
            )
    return out
