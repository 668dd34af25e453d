"""What the HTML report shows, computed from a results file: the two matrices with their
counts, and each cell's transcript arranged for reading (per user message, each call with the
messages it added, what came back, the tools that then ran, and the findings at that call).

The template only lays these values out; every decision about what goes where is made here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.headlines import Headline, cell_trail, group, trail_of
from harness.headlines import call_of as _call_of
from harness.report.controls import FORBIDDEN, json_escape
from harness.results.model import (
    CallRecord,
    CellResult,
    DriftRecord,
    ExchangeRecord,
    FindingRecord,
    MessageRecord,
    QueryRecord,
    Results,
    RuleInfo,
    ToolRunRecord,
    Verdict,
)

PROVIDER_ORDER = ("anthropic", "openai", "gemini")


def anchor(cell_id: str) -> str:
    """A stable, URL-safe element id: `one[openai-stream]` → `cell-one--openai-stream`."""
    return "cell-" + re.sub(r"[^A-Za-z0-9_-]+", "-", cell_id.replace("[", "--")).strip("-")


def variant(cell: CellResult) -> str:
    return "stream" if cell.stream else "json"


# ---- matrices --------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Chip:
    anchor: str
    label: str  # json / stream
    verdict: str
    findings: int
    drift: int
    headlines: int = 0


@dataclass(frozen=True, kw_only=True)
class ScenarioRow:
    id: str
    title: str
    chips: dict[str, list[Chip]]  # provider -> its variants


@dataclass(frozen=True, kw_only=True)
class Counts:
    passed: int = 0
    failed: int = 0
    na: int = 0

    def add(self, verdict: Verdict) -> Counts:
        return Counts(
            passed=self.passed + (verdict == "pass"),
            failed=self.failed + (verdict == "fail"),
            na=self.na + (verdict == "n/a"),
        )


@dataclass(frozen=True, kw_only=True)
class RuleRow:
    rule: RuleInfo
    counts: dict[str, Counts]  # provider -> counts over its cells


def providers_of(results: Results) -> list[str]:
    seen = {c.provider for c in results.cells}
    known = [p for p in PROVIDER_ORDER if p in seen]
    return known + sorted(seen - set(known))


def scenario_rows(results: Results, providers: Sequence[str]) -> list[ScenarioRow]:
    rows: dict[str, ScenarioRow] = {}
    for cell in results.cells:
        row = rows.setdefault(
            cell.scenario.id,
            ScenarioRow(
                id=cell.scenario.id, title=cell.scenario.title, chips={p: [] for p in providers}
            ),
        )
        row.chips[cell.provider].append(
            Chip(
                anchor=anchor(cell.id),
                label=variant(cell),
                verdict=cell.verdict,
                findings=len(cell.findings),
                drift=len(cell.drift),
                headlines=len(group(cell.findings, cell_trail(cell))) if cell.findings else 0,
            )
        )
    return list(rows.values())


def provider_totals(results: Results, providers: Sequence[str]) -> dict[str, Counts]:
    totals = {p: Counts() for p in providers}
    for cell in results.cells:
        totals[cell.provider] = totals[cell.provider].add(cell.verdict)
    return totals


def rule_rows(results: Results, providers: Sequence[str]) -> list[RuleRow]:
    """One row per catalogue rule, then any rule that only findings name; a cell with no
    verdict for a rule counts as n/a for it."""
    extra = sorted({r for c in results.cells for r in c.verdicts} - {r.id for r in results.rules})
    rules = [*results.rules, *(RuleInfo(id=r, title=r) for r in extra)]
    rows = []
    for rule in rules:
        counts = {p: Counts() for p in providers}
        for cell in results.cells:
            verdict = cell.verdicts.get(rule.id, "n/a")
            counts[cell.provider] = counts[cell.provider].add(verdict)
        rows.append(RuleRow(rule=rule, counts=counts))
    return rows


# ---- a cell's transcript ---------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CallView:
    call: CallRecord
    raw: ExchangeRecord | None
    sent: tuple[MessageRecord, ...]  # what this request added after the last model turn
    earlier: int  # how many request messages come before `sent`
    closing: bool
    system_addition: str | None  # the closing call's addition to the system prompt
    findings: list[FindingRecord]
    drift: list[DriftRecord]
    tool_runs: list[ToolRunRecord]  # the tools run after this call's response


@dataclass(frozen=True, kw_only=True)
class QueryView:
    query: QueryRecord
    calls: list[CallView]
    findings: list[FindingRecord]  # about this user message but no single call

    @property
    def tools_differ(self) -> bool:
        """The executed tools are not the expected ones, as `expect.tools` judged it (tools
        that ran at once match in any order: `harness.outcome.ran_as_expected`)."""
        return any(f.rule == "expect.tools" for f in self.findings)


@dataclass(frozen=True, kw_only=True)
class Role:
    """How a finding box presents its finding: a headline (`cause` empty), or a consequence of
    `cause` (a rule id) by the named relation, which `why` explains."""

    headline: str  # the rule of the headline it belongs to
    anchor: str  # where that headline is shown
    cause: str = ""
    relation: str = ""
    why: str = ""


@dataclass(frozen=True, kw_only=True)
class HeadlineView:
    finding: FindingRecord
    anchor: str  # the element the headline is shown at (its call, or its user message)
    where: str  # "call 2", "user message 1" or "run"
    consequences: list[tuple[FindingRecord, Role]]


@dataclass(frozen=True, kw_only=True)
class CellView:
    cell: CellResult
    anchor: str
    search: str  # what the text filter matches (lower case), plus `fail:RULE` tokens
    fail_rules: list[str]
    queries: list[QueryView]
    findings: list[FindingRecord]  # about the whole cell
    drift: list[DriftRecord] = field(default_factory=list)  # not tied to a call
    headlines: list[HeadlineView] = field(default_factory=list)
    roles: dict[int, Role] = field(default_factory=dict)  # id(finding) -> its role

    def role(self, finding: FindingRecord) -> Role | None:
        return self.roles.get(id(finding))


def headline_views(cell: CellResult) -> tuple[list[HeadlineView], dict[int, Role]]:
    """The cell's findings grouped by root cause (`harness.headlines`), each headline linked
    to where it is shown, and every finding's role."""
    heads = group(cell.findings, cell_trail(cell))
    views: list[HeadlineView] = []
    roles: dict[int, Role] = {}
    for head in heads:
        where = _where(cell, head)
        roles[id(head.finding)] = Role(headline=head.finding.rule, anchor=where)
        consequences = []
        for c in head.consequences:
            role = Role(
                headline=head.finding.rule,
                anchor=where,
                cause=c.cause.rule,
                relation=c.relation.name,
                why=c.relation.why,
            )
            roles[id(c.finding)] = role
            consequences.append((c.finding, role))
        views.append(
            HeadlineView(
                finding=head.finding,
                anchor=where,
                where=_where_text(head),
                consequences=consequences,
            )
        )
    return views, roles


def _where_text(head: Headline[FindingRecord]) -> str:
    if head.place.call is not None:
        return f"call {head.place.call}"
    if head.place.query is not None:
        return f"user message {head.place.query + 1}"
    return "run"


def _where(cell: CellResult, head: Headline[FindingRecord]) -> str:
    base = anchor(cell.id)
    if head.place.call is not None:
        return f"{base}-call-{head.place.call}"
    if head.place.query is not None:
        return f"{base}-q{head.place.query + 1}"
    return base


def cell_view(cell: CellResult, order: Mapping[str, int] | None = None) -> CellView:
    """`order`: rule id -> its place in the catalogue, for listing failed rules."""
    exchanges = {e.seq: e for e in cell.exchanges}
    numbers = {c.number for c in cell.calls}
    sites = cell_trail(cell).calls
    at_call = {id(f): _call_of(f, sites) for f in cell.findings}
    headlines, roles = headline_views(cell)
    queries = [_query_view(cell, q, exchanges, at_call) for q in cell.queries]
    placed = {id(f) for q in queries for f in q.findings} | {
        id(f) for q in queries for c in q.calls for f in c.findings
    }
    rank = order or {}
    fail_rules = sorted(
        {r for r, v in cell.verdicts.items() if v == "fail"}, key=lambda r: (rank.get(r, 1e9), r)
    )
    return CellView(
        cell=cell,
        anchor=anchor(cell.id),
        search=_search_text(cell, fail_rules, [h.finding.rule for h in headlines]),
        fail_rules=fail_rules,
        queries=queries,
        findings=[f for f in cell.findings if id(f) not in placed],
        drift=[d for d in cell.drift if d.call not in numbers],
        headlines=headlines,
        roles=roles,
    )


def _search_text(cell: CellResult, fail_rules: Sequence[str], headlines: Sequence[str]) -> str:
    words = [
        cell.id,
        cell.scenario.title,
        cell.model,
        f"provider:{cell.provider}",
        f"verdict:{cell.verdict}",
        *(f"fail:{r}" for r in fail_rules),
        *(f"headline:{r}" for r in dict.fromkeys(headlines)),
        *(f.rule for f in cell.findings),
        *(f.message for f in cell.findings),
        *("drift" for _ in cell.drift[:1]),
    ]
    return " ".join(words).lower()


def call_of(finding: FindingRecord, calls: Sequence[CallRecord]) -> int | None:
    """The call a finding concerns: its own `call`, or for an API rejection (which the source
    reports without a number) the failed call whose error message it quotes."""
    return _call_of(finding, trail_of(calls, ()).calls)


def _query_view(
    cell: CellResult,
    query: QueryRecord,
    exchanges: dict[int, ExchangeRecord],
    at_call: Mapping[int, int | None],
) -> QueryView:
    calls = [c for c in cell.calls if c.query == query.index]
    base_system = calls[0].request.system if calls else ""
    views = []
    for position, call in enumerate(calls):
        closing = is_closing(call, calls[:position])
        sent, earlier = _sent(call.request.messages)
        views.append(
            CallView(
                call=call,
                raw=exchanges.get(call.exchange),
                sent=sent,
                earlier=earlier,
                closing=closing,
                system_addition=system_addition(base_system, call.request.system)
                if closing
                else None,
                findings=[f for f in cell.findings if at_call[id(f)] == call.number],
                drift=[d for d in cell.drift if d.call == call.number],
                tool_runs=[r for r in cell.tool_runs if r.after_exchange == call.exchange],
            )
        )
    return QueryView(
        query=query,
        calls=views,
        findings=[f for f in cell.findings if at_call[id(f)] is None and f.query == query.index],
    )


def is_closing(call: CallRecord, before: Sequence[CallRecord]) -> bool:
    """The call made when the budget ran out: tools forbidden, or no longer declared."""
    request = call.request
    if request.tool_choice == "none":
        return True
    return not request.declared_tools and any(b.request.declared_tools for b in before)


def system_addition(base: str, closing: str) -> str:
    """What the closing call's system text adds to the query's first call's."""
    if closing.startswith(base):
        return closing[len(base) :].strip()
    return closing


def _sent(messages: Sequence[MessageRecord]) -> tuple[tuple[MessageRecord, ...], int]:
    last_model = max((i for i, m in enumerate(messages) if m.role == "model"), default=-1)
    return tuple(messages[last_model + 1 :]), last_model + 1


# ---- raw bodies ------------------------------------------------------------------------------


def raw_json(value: Any) -> str:
    """A body as compact JSON (the report's script indents it when the raw view is opened:
    indenting here would double the size of a large report); text bodies as they came."""
    if isinstance(value, str):
        return value
    return _json(value, separators=(",", ":"))


def _json(value: Any, separators: tuple[str, str] | None = None) -> str:
    """JSON text whose unsafe characters (`controls.FORBIDDEN`) are JSON escapes: the page
    shows them as escapes, and the script can still parse the body to indent it."""
    text = json.dumps(value, ensure_ascii=False, separators=separators)
    return FORBIDDEN.sub(json_escape, text)


def raw_response(exchange: ExchangeRecord) -> str:
    """The body as received: JSON, or a stream as its SSE events."""
    if exchange.events is None:
        return raw_json(exchange.response_body)
    lines = []
    for event in exchange.events:
        if event.event:
            lines.append(f"event: {event.event}")
        data = event.data
        if not isinstance(data, str):
            data = _json(data)
        lines.append(f"data: {data}\n")
    return "\n".join(lines)
