"""The one-screen console summary of a results file, and a finding as one line of text."""

from __future__ import annotations

from collections import Counter

from harness.report.view import providers_of
from harness.results.model import FindingRecord, Results
from harness.terminal import terminal_safe

SUMMARY_CELLS = 8  # failing cells listed
SUMMARY_RULES = 8


def finding_line(f: FindingRecord) -> str:
    """The finding with its evidence on one line: where (call, path, ids), what, expected/sent."""
    where = f"call {f.call}" if f.call is not None else "run"
    if f.query is not None and f.call is None:
        where = f"user message {f.query + 1}"
    if f.path:
        where += f" {f.path}"
    ids = f" [{', '.join(f.ids)}]" if f.ids else ""
    detail = f" (expected {f.expected}; sent {f.actual})" if f.expected or f.actual else ""
    return f"{f.rule} at {where}{ids}: {f.message}{detail}"


def summary_lines(results: Results) -> list[str]:
    """At most ~24 lines: totals per provider, the rules that failed, the first failing cells.
    Each line is terminal-safe: ids, loop names and findings come from files and loops."""
    cells = results.cells
    failing = [c for c in cells if c.verdict == "fail"]
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
    rules = Counter(f.rule for c in failing for f in {f.rule: f for f in c.findings}.values())
    if rules:
        top = ", ".join(f"{rule} ×{n}" for rule, n in rules.most_common(SUMMARY_RULES))
        more = len(rules) - SUMMARY_RULES
        lines.append(f"failing rules (cells): {top}" + (f", … {more} more" if more > 0 else ""))
    for cell in failing[:SUMMARY_CELLS]:
        lines.append(f"  ✗ {cell.id}: {_short(finding_line(cell.findings[0]))}")
    if len(failing) > SUMMARY_CELLS:
        lines.append(f"  … and {len(failing) - SUMMARY_CELLS} more cell(s) with findings")
    return [terminal_safe(line) for line in lines]


def _short(text: str, width: int = 110) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
