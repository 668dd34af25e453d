"""Console output of a run: a progress line per cell and the final table.

Each part is computed from the cell's run (`progress_parts`, `table_rows`) apart from its
printing, so cells run in worker processes (`harness run --jobs`) print the same lines."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from harness.findings import Finding
from harness.outcome import query_outcome
from harness.runner import CellRun
from harness.terminal import terminal_safe

ANSWER_WIDTH = 48
HEADER = ("scenario", "provider", "ending", "rounds", "executed tools", "answer")


def _short(text: str, width: int = ANSWER_WIDTH) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def progress_parts(run: CellRun, findings: Sequence[Finding]) -> tuple[str, tuple[str, ...]]:
    """The cell's verdict column, and its findings grouped by root cause: each headline with
    its title, and the findings it caused indented under it (`harness.headlines`)."""
    from harness.headlines import run_trail
    from harness.report.console import catalogue_titles, headline_count, headline_lines
    from harness.results.build import finding_record

    if not findings:
        return "ok", ()
    records = [finding_record(f) for f in findings]
    trail = run_trail(run)
    lines = headline_lines(records, trail, catalogue_titles())
    return headline_count(records, trail), tuple(lines)


def print_progress_line(
    number: int, total: int, cell_id: str, verdict: str, elapsed: float, details: Sequence[str]
) -> None:
    print(
        f"[{number}/{total}] {terminal_safe(cell_id):<52} {verdict:<14} {elapsed:6.2f}s",
        file=sys.stderr,
        flush=True,
    )
    for line in details:
        print(f"    {terminal_safe(line)}", file=sys.stderr)


def table_rows(run: CellRun) -> tuple[tuple[str, ...], ...]:
    """The cell's rows of the final table: one per user message."""
    rows: list[tuple[str, ...]] = []
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
    return tuple(rows)


def print_rows(rows: Sequence[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in [HEADER, *rows]) for i in range(len(HEADER) - 1)]
    for row in [HEADER, *rows]:
        cols = [c.ljust(w) for c, w in zip(row[:-1], widths, strict=True)]
        print("  ".join([*cols, row[-1]]))
