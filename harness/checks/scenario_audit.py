"""Judging recorded traffic against its scenario without a tool log (`harness audit
--scenario`): which rules that reading allows, running them, and saying what was left out.

Judged: every wire rule; L3 (the budget, counted from the calls), L7 (the first message's
context against the scenario's saved history), L11 (the pending requests' results on the
wire) on every query; L14 and L15 on the queries that ended on a text reply, read as the
answer; and `expect.ending` where the wire shows the ending. Not judged: what needs the tool log
(L1, L4, `expect.rounds`, `expect.tools`, `expect.not_run`) and, per query, what needs the
answer the app showed when the wire does not hold it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from harness.checks.engine import _checked, _unique, ordered_rules, run_checks
from harness.checks.input import CheckInput
from harness.checks.registry import RULES
from harness.checks.scenario_input import QueryReading, ScenarioReading
from harness.findings import Finding

SCENARIO_RULES = ("L3", "L7", "L11")  # on every query, answers unknown
ANSWER_RULES = ("L14", "L15")  # on the queries that ended on a text reply
ENDING = "expect.ending"
TOOL_LOG = ("L1", "L4", "expect.rounds", "expect.tools", "expect.not_run")
WHY_TOOL_LOG = "need the tool log (which tools ran, when and in what order), not on the wire"
# What the judged rules read that the wire does not hold: said beside the verdict.
IN_PART = {
    "L2": "the answer the app handed back is not on the wire; its last reply is",
    "L3": "ordinary and closing calls are counted; tool rounds are counted only in a run",
    "L10": "reasoning copied into the chat the app saved is not seen (only into requests)",
    "L11": "the pending requests' results are judged; whether a pending tool ran is not",
}
WHY_EMULATOR_LOG = (
    "the emulator's judgement of each request is in its log, not in the cassette (a "
    "rejected request shows as its 4xx answer)"
)


@dataclass(frozen=True, kw_only=True)
class Skipped:
    """Rules not judged, on the given user messages (0-based; None: on every one), and why."""

    rules: tuple[str, ...]
    why: str
    messages: tuple[int, ...] | None = None


@dataclass(frozen=True, kw_only=True)
class ScenarioAudit:
    findings: tuple[Finding, ...]
    judged: tuple[str, ...]
    skipped: tuple[Skipped, ...]

    def covers(self, finding: Finding) -> bool:
        """Whether this audit judged what `finding` (from a run of the same cell) is about."""
        if finding.rule not in self.judged:
            return False
        return not any(
            finding.rule in s.rules and (s.messages is None or finding.query in s.messages)
            for s in self.skipped
        )


def judge(reading: ScenarioReading) -> ScenarioAudit:
    findings = [
        *ending_findings(reading),
        *run_checks(reading.wire, wire_only=True),
        *_run(SCENARIO_RULES, reading.wire),
        *_run(ANSWER_RULES, reading.answered),
    ]
    return ScenarioAudit(
        findings=tuple(findings),
        judged=_judged(reading.wire),
        skipped=tuple(_skipped(reading)),
    )


def _run(ids: Iterable[str], data: CheckInput) -> list[Finding]:
    """The rules `ids` on `data`, as `run_checks` runs them (a broken check is a finding of
    its rule; duplicates folded), whatever they would need from a run."""
    wanted = set(ids)
    found: list[Finding] = []
    for rule in ordered_rules():
        if rule.id in wanted and rule.apis & data.apis:
            found.extend(_checked(rule, data))
    return _unique(found)


def _judged(data: CheckInput) -> tuple[str, ...]:
    rules = [
        r.id
        for r in ordered_rules()
        if r.apis & data.apis and (r.wire_only or r.id in (*SCENARIO_RULES, *ANSWER_RULES))
    ]
    return (*rules, ENDING)


def _skipped(reading: ScenarioReading) -> Iterator[Skipped]:
    yield Skipped(rules=TOOL_LOG, why=WHY_TOOL_LOG)
    yield Skipped(rules=("api.*", "script.*"), why=WHY_EMULATOR_LOG)
    later = sorted({q.message for q in reading.queries if q.message > 0})
    if later:
        yield Skipped(
            rules=("L7",),
            why="the chat the app saved after the earlier messages is not on the wire",
            messages=tuple(later),
        )
    for query in reading.queries:
        why = _unread(query)
        if why is not None:
            rules = ANSWER_RULES if query.ending == "failed" else (*ANSWER_RULES, ENDING)
            yield Skipped(rules=rules, why=why, messages=(query.message,))


def _unread(query: QueryReading) -> str | None:
    """Why the answer this query showed cannot be read from the wire (None: it can)."""
    if query.ending == "pending":
        return (
            f"user message {query.message + 1} stopped on a reply still asking for tools: "
            "what the app showed then is not on the wire"
        )
    if query.ending == "failed":
        return (
            f"user message {query.message + 1} ended on a failed call: what the app showed "
            "then is not on the wire (its ending is judged as an error)"
        )
    return None


def ending_findings(reading: ScenarioReading) -> Iterator[Finding]:
    """`expect.ending` where the wire shows it, worded as in a run."""
    for query in reading.queries:
        if query.ending == "pending":
            continue
        have = "error" if query.ending == "failed" else "step_limit" if query.closing else "answer"
        want = reading.scenario.messages[query.message].expect.ending
        if want != have:
            detail = f": {query.error}" if query.error else ""
            yield Finding(
                rule=ENDING,
                query=query.message,
                message=f"user message {query.message + 1}: ending differs{detail}",
                expected=repr(want),
                actual=repr(have),
            )


def rule_title(rule_id: str) -> str:
    found = RULES.get(rule_id)
    return found.title if found is not None else "the scenario's expected ending"
