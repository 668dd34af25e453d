"""Build a run's results from what the runner kept (`CellRun`s) and what the checks found.

Verdicts per rule come from the checks (pass / fail / n/a); on top of them every cell gets a
verdict for the harness's own groups of findings (`expect`, `api`, `replay`, `harness`, `exec`),
so the rule matrix also shows the scenario expectations, API rejections, replay mismatches, loop
crashes and --exec programs that gave no answer. A finding whose rule has no verdict fails that
rule.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from typing import TYPE_CHECKING

from harness import __version__
from harness.cassettes.replay import RULE_DRIFT, RULE_STREAM_MISMATCH
from harness.emulator.script import RULE_SCRIPT_EXHAUSTED
from harness.findings import Finding
from harness.outcome import query_outcome
from harness.results.model import (
    VERDICTS,
    CellResult,
    DriftRecord,
    Expected,
    FindingRecord,
    QueryRecord,
    Results,
    RuleInfo,
    RunMeta,
    ScenarioRef,
    Timing,
    ToolRunRecord,
    UsageTotals,
    Verdict,
)
from harness.results.transcript import call_records, exchange_record
from harness.runner import CellRun, QueryRun
from harness.tools import ToolRun

if TYPE_CHECKING:
    from harness.shards import Shard

SDK_DISTRIBUTIONS = ("anthropic", "openai", "google-genai", "httpx2")
# Findings that warn instead of failing the cell (unless --strict): drift from a recording, and
# the scenario's own limits — a request answered past its script, a recording served in the
# other form (JSON / stream) than the request asked.
WARNING_RULES = frozenset({RULE_DRIFT, RULE_SCRIPT_EXHAUSTED, RULE_STREAM_MISMATCH})

# Rows of the rule matrix for findings that are not loop/provider rules: the rule id of such a
# finding is `<group>.<detail>` (`expect.ending`, `api.E1`, `replay.drift`, `harness.loop_error`).
HARNESS_GROUPS: tuple[RuleInfo, ...] = (
    RuleInfo(
        id="expect",
        title="Scenario expectations",
        description="The ending, rounds and executed tools the scenario expects, and the "
        "tools that must not run.",
    ),
    RuleInfo(
        id="api",
        title="Accepted by the API",
        description="No request was rejected the way the real API rejects it.",
    ),
    RuleInfo(
        id="replay",
        title="Matches the recording",
        description="Cassette source: every recorded interaction was requested, and (with "
        "--strict) no request drifted from its recording.",
    ),
    RuleInfo(
        id="harness",
        title="Loop ran to the end",
        description="The loop returned a result instead of raising.",
    ),
    RuleInfo(
        id="exec",
        title="Program answered",
        description="An --exec program finished within its timeout, exited 0 and printed one "
        "answer document matching answer.json.",
    ),
)

# Usage keys that count as input / output tokens, whichever wire they came from (Anthropic's
# cache tokens are billed as input beside `input_tokens`; Gemini's thoughts as output).
INPUT_KEYS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "prompt_tokens",
    "promptTokenCount",
)
OUTPUT_KEYS = ("output_tokens", "completion_tokens", "candidatesTokenCount", "thoughtsTokenCount")


@dataclass(frozen=True, kw_only=True)
class Judged:
    """A cell as run and judged: its findings (all of them fail the cell), the checks' rule
    verdicts, and the source's drift reports (kept whether or not they fail the cell)."""

    run: CellRun
    findings: Sequence[Finding]
    verdicts: Mapping[str, Verdict] = field(default_factory=dict)
    drift: Sequence[Finding] = ()


@dataclass(frozen=True, kw_only=True)
class Sorted:
    """A cell's findings once its source has spoken."""

    findings: list[Finding]  # fail the cell: the checks', then the source's
    warnings: list[Finding]  # drift from the recording, shown but not failing (not strict)
    drift: list[Finding]  # every drift report, failing or not (kept in the results file)


def sort_findings(run: CellRun, own: Sequence[Finding], *, strict: bool) -> Sorted:
    """The cell's findings (`harness.outcome.cell_findings`) and its source's (`own`): drift
    from a recording only warns unless `strict`; every other finding fails the cell."""
    from harness.outcome import cell_findings

    found = [*cell_findings(run), *own]
    drift = [f for f in found if f.rule in WARNING_RULES]
    warnings = [] if strict else drift
    findings = [f for f in found if f not in warnings]
    return Sorted(findings=findings, warnings=warnings, drift=drift)


def iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).isoformat(timespec="seconds")


def sdk_versions() -> dict[str, str]:
    """Installed SDK versions, read from package metadata (importing the SDKs is slow)."""
    out: dict[str, str] = {}
    for name in SDK_DISTRIBUTIONS:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = ""
    return out


def loop_label(loop: str | None, exec_command: str | None) -> str:
    """How reports name the loop under test (`run.loop`, which merging compares)."""
    if exec_command is not None:
        return f"exec: {exec_command}"
    return loop or "reference"


def run_meta(
    *,
    source: str,
    loop: str,
    started: float,
    finished: float | None,
    argv: Sequence[str],
    strict: bool = False,
    shard: Shard | None = None,
) -> RunMeta:
    """`started` / `finished` are `time.time()` values; `shard`: this run's part of a sharded
    run (`harness run --shard K/N`)."""
    end = time.time() if finished is None else finished
    return RunMeta(
        harness_version=__version__,
        sdk_versions=sdk_versions(),
        python=platform.python_version(),
        source=source,
        loop=loop,
        started=iso(started),
        finished=iso(end),
        elapsed=round(end - started, 3),
        argv=tuple(argv),
        strict=strict,
        shard=None if shard is None else shard.label,
        selection=() if shard is None else shard.selection,
        library="" if shard is None else shard.library,
    )


def build_results(
    judged: Iterable[Judged], *, meta: RunMeta, rules: Sequence[RuleInfo] = ()
) -> Results:
    """`rules`: the check catalogue (loop and provider rules); the harness groups are added."""
    return results_of((cell_result(j) for j in judged), meta=meta, rules=rules)


def results_of(
    cells: Iterable[CellResult], *, meta: RunMeta, rules: Sequence[RuleInfo] = ()
) -> Results:
    """A results file of cells already built (`cell_result`), e.g. in worker processes."""
    known = {r.id for r in rules}
    catalogue = (*rules, *(g for g in HARNESS_GROUPS if g.id not in known))
    return Results(run=meta, rules=catalogue, cells=tuple(cells))


def judge(run: CellRun, findings: Sequence[Finding], drift: Sequence[Finding] = ()) -> Judged:
    """A cell with the checks' verdict on every rule (`harness.checks`)."""
    from harness.outcome import cell_verdicts

    given = cell_verdicts(run, list(findings))
    verdicts: dict[str, Verdict] = {k: _verdict(v) for k, v in given.items()}
    return Judged(run=run, findings=findings, verdicts=verdicts, drift=drift)


def _verdict(value: str) -> Verdict:
    for verdict in VERDICTS:
        if value == verdict:
            return verdict
    raise ValueError(f"not a verdict: {value!r}")


def check_catalogue() -> tuple[RuleInfo, ...]:
    """The loop and provider rules, in report order (`harness.checks.catalogue`)."""
    from harness.checks import catalogue

    return tuple(RuleInfo(id=e.id, title=e.title, description=e.description) for e in catalogue())


def cell_result(judged: Judged) -> CellResult:
    run = judged.run
    scenario = run.cell.scenario
    calls = call_records(run.queries)
    return CellResult(
        id=run.cell.id,
        scenario=ScenarioRef(
            id=scenario.id, title=scenario.title, path=scenario.path, rules=scenario.rules
        ),
        provider=run.cell.provider,
        model=run.model,
        source=run.source,
        stream=run.cell.stream,
        verdict="fail" if judged.findings else "pass",
        error=run.error,
        queries=tuple(
            _query(run, q, tuple(c.number for c in calls if c.query == q.index))
            for q in run.queries
        ),
        tool_runs=tuple(_tool_run(r) for r in run.tool_runs),
        findings=tuple(finding_record(f) for f in judged.findings),
        verdicts=with_group_verdicts(judged.findings, judged.verdicts, run.source),
        calls=calls,
        exchanges=tuple(exchange_record(e) for e in run.exchanges),
        usage=usage_totals(c.response.usage for c in calls),
        drift=_drift(judged),
        timing=Timing(
            elapsed=round(run.elapsed, 6),
            http=round(sum(e.elapsed for e in run.exchanges), 6),
            tools=round(sum(r.ended - r.started for r in run.tool_runs), 6),
        ),
    )


def with_group_verdicts(
    findings: Sequence[Finding], given: Mapping[str, Verdict], source: str
) -> dict[str, Verdict]:
    """The checks' verdicts (`given`) plus one for each harness group (`HARNESS_GROUPS`); a
    finding fails its group, or its own rule when it belongs to no group."""
    verdicts: dict[str, Verdict] = dict(given)
    groups = {g.id for g in HARNESS_GROUPS}
    for group in groups:
        verdicts[group] = "pass"
    if source != "cassette":
        verdicts["replay"] = "n/a"
    for finding in findings:
        head = finding.rule.split(".", 1)[0]
        verdicts[head if head in groups else finding.rule] = "fail"
    return verdicts


def finding_record(finding: Finding) -> FindingRecord:
    return FindingRecord(
        rule=finding.rule,
        message=finding.message,
        call=finding.call,
        query=finding.query,
        path=finding.path,
        ids=finding.ids,
        expected=finding.expected,
        actual=finding.actual,
    )


def usage_totals(usages: Iterable[Mapping[str, int]]) -> UsageTotals:
    by_key: dict[str, int] = {}
    for usage in usages:
        for key, value in usage.items():
            by_key[key] = by_key.get(key, 0) + value
    return UsageTotals(
        input_tokens=sum(by_key.get(k, 0) for k in INPUT_KEYS),
        output_tokens=sum(by_key.get(k, 0) for k in OUTPUT_KEYS),
        by_key=dict(sorted(by_key.items())),
    )


def _query(run: CellRun, query: QueryRun, calls: tuple[int, ...]) -> QueryRecord:
    got = query_outcome(query)
    turns = run.cell.scenario.messages
    expect = turns[query.index].expect if query.index < len(turns) else None
    return QueryRecord(
        index=query.index,
        message=query.message,
        answer=query.answer,
        error=query.error,
        ending=got.ending,
        rounds=got.rounds,
        executed=got.executed,
        calls=calls,
        expected=None
        if expect is None
        else Expected(
            ending=expect.ending, rounds=expect.rounds, tools=expect.tools, not_run=expect.not_run
        ),
    )


def _tool_run(run: ToolRun) -> ToolRunRecord:
    return ToolRunRecord(
        seq=run.seq,
        name=run.name,
        arguments=dict(run.arguments),
        result=run.result,
        is_error=run.is_error,
        after_exchange=run.after_call,
        elapsed=round(run.ended - run.started, 6),
    )


def _drift(judged: Judged) -> tuple[DriftRecord, ...]:
    seen = [*judged.drift, *(f for f in judged.findings if f.rule == RULE_DRIFT)]
    unique = list(dict.fromkeys(seen))
    return tuple(DriftRecord(call=f.call, path=f.path, message=f.message) for f in unique)
