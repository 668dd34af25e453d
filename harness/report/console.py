"""The one-screen console summary of a results file, and findings as lines of text: one line
per finding, and a cell's findings grouped under their headlines (`harness.headlines`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache

from harness.headlines import Trail, cell_trail, group, title_of, titled
from harness.report.view import providers_of
from harness.results.model import FindingRecord, Results, RuleInfo
from harness.terminal import terminal_safe

SUMMARY_CELLS = 8  # failing cells listed
SUMMARY_RULES = 8
CONSEQUENCE = "↳"


def finding_line(f: FindingRecord, titles: Mapping[str, str] | None = None) -> str:
    """The finding with its evidence on one line: where (call, path, ids), what, expected/sent;
    with `titles`, the rule's title first (`[Pairing] L6 at call 2: …`)."""
    where = f"call {f.call}" if f.call is not None else "run"
    if f.query is not None and f.call is None:
        where = f"user message {f.query + 1}"
    if f.path:
        where += f" {f.path}"
    ids = f" [{', '.join(f.ids)}]" if f.ids else ""
    detail = f" (expected {f.expected}; sent {f.actual})" if f.expected or f.actual else ""
    title = title_of(f.rule, titles or {})
    prefix = f"[{title}] " if title else ""
    return f"{prefix}{f.rule} at {where}{ids}: {f.message}{detail}"


def headline_lines(
    findings: Sequence[FindingRecord], trail: Trail, titles: Mapping[str, str]
) -> list[str]:
    """Each headline on its line, then its consequences indented under it, each saying what it
    follows from and by which relation."""
    lines: list[str] = []
    for head in group(findings, trail):
        lines.append(finding_line(head.finding, titles))
        for c in head.consequences:
            why = f"follows from {c.cause.rule} ({c.relation.name})"
            lines.append(f"  {CONSEQUENCE} {finding_line(c.finding, titles)} · {why}")
    return lines


def headline_count(findings: Sequence[FindingRecord], trail: Trail) -> str:
    """`9 finding(s) under 1 headline(s)`."""
    return f"{len(findings)} finding(s) under {len(group(findings, trail))} headline(s)"


def rule_titles(rules: Sequence[RuleInfo]) -> dict[str, str]:
    """Rule (or harness group) id -> title, e.g. from a results file's `rules`."""
    return {r.id: r.title for r in rules}


@cache
def catalogue_titles() -> Mapping[str, str]:
    """The titles of the check catalogue and the harness groups, for output made before a
    results file exists (progress lines, the pytest plugin)."""
    from harness.results.build import HARNESS_GROUPS, check_catalogue

    return rule_titles((*check_catalogue(), *HARNESS_GROUPS))


def summary_lines(results: Results) -> list[str]:
    """At most ~24 lines: totals per provider, the rules that failed (as headlines, and in all),
    the first failing cells with their first headline. Each line is terminal-safe: ids, loop
    names and findings come from files and loops."""
    cells = results.cells
    failing = [c for c in cells if c.verdict == "fail"]
    titles = rule_titles(results.rules)
    run = results.run
    lines = [
        f"{len(cells)} cell(s): {len(cells) - len(failing)} conform, {len(failing)} with "
        f"findings · source {run.source} · loop {run.loop} · {run.elapsed:.1f} s"
    ]
    for provider in providers_of(results):
        mine = [c for c in cells if c.provider == provider]
        bad = sum(c.verdict == "fail" for c in mine)
        drift = sum(bool(c.drift) for c in mine)
        extra = f", {drift} with drift" if drift else ""
        ok = len(mine) - bad
        lines.append(f"  {provider:<10} {ok:>4} conform  {bad:>4} with findings{extra}")
    heads = {c.id: group(c.findings, cell_trail(c)) for c in failing}
    headline_rules = Counter(r for c in failing for r in {h.finding.rule for h in heads[c.id]})
    if headline_rules:
        lines.append(_rule_counts("headline rules (cells)", headline_rules, titles))
    rules = Counter(r for c in failing for r in {f.rule for f in c.findings})
    if rules:
        lines.append(_rule_counts("failing rules (cells)", rules, titles))
    for cell in failing[:SUMMARY_CELLS]:
        first = heads[cell.id][0]
        more = len(cell.findings) - 1
        tail = f" (+{more} more finding(s), {len(heads[cell.id])} headline(s))" if more else ""
        lines.append(f"  ✗ {cell.id}: {_short(finding_line(first.finding, titles))}{tail}")
    if len(failing) > SUMMARY_CELLS:
        lines.append(f"  … and {len(failing) - SUMMARY_CELLS} more cell(s) with findings")
    return [terminal_safe(line) for line in lines]


def _rule_counts(label: str, counts: Counter[str], titles: Mapping[str, str]) -> str:
    top = ", ".join(f"{titled(rule, titles)} ×{n}" for rule, n in counts.most_common(SUMMARY_RULES))
    more = len(counts) - SUMMARY_RULES
    return f"{label}: {top}" + (f", … {more} more" if more > 0 else "")


def _short(text: str, width: int = 110) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
