"""Console output of a run: a progress line per cell and the final table."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from harness.findings import Finding
from harness.outcome import query_outcome
from harness.runner import CellRun
from harness.terminal import terminal_safe

ANSWER_WIDTH = 48


def _short(text: str, width: int = ANSWER_WIDTH) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def print_progress(number: int, total: int, run: CellRun, findings: Sequence[Finding]) -> None:
    """The cell's line, then its findings grouped by root cause: each headline with its title,
    and the findings it caused indented under it (`harness.headlines`)."""
    from harness.headlines import run_trail
    from harness.report.console import catalogue_titles, headline_count, headline_lines
    from harness.results.build import finding_record

    records = [finding_record(f) for f in findings]
    trail = run_trail(run) if findings else None
    verdict = "ok" if trail is None else headline_count(records, trail)
    print(
        f"[{number}/{total}] {terminal_safe(run.cell.id):<52} {verdict:<14} {run.elapsed:6.2f}s",
        file=sys.stderr,
        flush=True,
    )
    if trail is not None:
        for line in headline_lines(records, trail, catalogue_titles()):
            print(f"    {terminal_safe(line)}", file=sys.stderr)


def print_table(results: Sequence[tuple[CellRun, Sequence[Finding]]]) -> None:
    header = ("scenario", "provider", "ending", "rounds", "executed tools", "answer")
    rows: list[tuple[str, ...]] = []
    for run, _findings in results:
        variant = f"{run.cell.provider}{' stream' if run.cell.stream else ''}"
        for query in run.queries:
            got = query_outcome(query)
            label = run.cell.scenario.id + (
                f" #{query.index + 1}" if len(run.cell.scenario.messages) > 1 else ""
            )
            answer = query.answer if query.error is None else f"ERROR: {query.error}"
            fields = (label, variant, got.ending, str(got.rounds), ",".join(got.executed) or "-")
            # escaped before the widths are measured; the answer's line breaks become spaces
            rows.append((*map(terminal_safe, fields), terminal_safe(_short(answer))))
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    for row in [header, *rows]:
        cols = [c.ljust(w) for c, w in zip(row[:-1], widths, strict=True)]
        print("  ".join([*cols, row[-1]]))
