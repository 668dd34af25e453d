"""What a query did, read from the wire and the tool log; how it compares with the scenario's
expectations (ending, rounds, executed tools, tools that must not run); and the cell's findings:
those expectations plus every loop and provider rule (`harness.checks`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harness.findings import Finding
from harness.runner import CellRun, QueryRun
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


def cell_findings(run: CellRun) -> list[Finding]:
    """Everything wrong with a cell: the scenario's expectations and the API's rejections,
    then the findings of every rule check (L1–L15 and the provider rules)."""
    from harness.checks import input_from_run, run_checks

    return [*scenario_findings(run), *run_checks(input_from_run(run))]


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
        findings.append(
            Finding(
                rule=f"api.{entry.error.rule or 'rejected'}",
                message=f"the API rejected the request ({entry.status}): {entry.error.message}",
            )
        )
    return findings


def _query_findings(run: CellRun, query: QueryRun) -> list[Finding]:
    expect = run.cell.scenario.messages[query.index].expect
    got = query_outcome(query)
    out: list[Finding] = []
    pairs: list[tuple[str, object, object]] = [
        ("ending", expect.ending, got.ending),
        ("rounds", expect.rounds, got.rounds),
        ("tools", list(expect.tools), list(got.executed)),
    ]
    for name, want, have in pairs:
        if want != have:
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
