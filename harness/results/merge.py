"""Merge results files: the shards of one run (`harness report a.json b.json …`), or a partial
run into the full run it is part of (`harness run --provider gemini` after `harness run`).

A merged file is a results file like any other; its `run.parts` says which runs it was made
of, when each ran and how many of its cells are each one's. Only results of one library, one
loop and one source merge, and a cell comes from exactly one of them: anything else is one
line (`MergeError`, exit 2).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime

from harness.errors import HarnessError
from harness.results.model import CellResult, Results, RunMeta, RunPart


class MergeError(HarnessError):
    """Results files that are not parts of one run of one library."""


def parts_of(results: Results) -> tuple[RunPart, ...]:
    """The runs a results file was made of (itself, when it is one run)."""
    run = results.run
    if run.parts:
        return run.parts
    return (
        RunPart(
            started=run.started,
            finished=run.finished,
            elapsed=run.elapsed,
            argv=run.argv,
            shard=run.shard,
            cells=len(results.cells),
        ),
    )


def merge_files(named: Sequence[tuple[str, Results]], argv: Sequence[str]) -> Results:
    """One results file from several (`name` is each one's path, for the messages)."""
    first_name, first = named[0]
    for name, other in named[1:]:
        _same_run(first_name, first, name, other)
    _no_overlap(named)
    cells = [c for _, r in named for c in r.cells]
    if first.run.shard is not None:
        order = {cell_id: i for i, cell_id in enumerate(first.run.selection)}
        cells.sort(key=lambda c: order.get(c.id, len(order)))
    meta = _merged_meta(first.run, [r for _, r in named], argv)
    return dataclasses.replace(first, run=meta, cells=tuple(cells))


def missing_shards(named: Sequence[tuple[str, Results]]) -> list[str]:
    """The shards of the run none of the files holds ("3/4"), for a merge of shards."""
    first = named[0][1].run
    if first.shard is None:
        return []
    count = int(first.shard.split("/")[1])
    have = {r.run.shard for _, r in named}
    return [f"{k}/{count}" for k in range(1, count + 1) if f"{k}/{count}" not in have]


def merge_partial(full: Results, partial: Results) -> Results:
    """The full run's results with the partial run's cells in their places."""
    newer = {c.id: c for c in partial.cells}
    cells = tuple(newer.get(c.id, c) for c in full.cells)
    meta = _merged_meta(partial.run, [full, partial], partial.run.argv)
    return dataclasses.replace(partial, run=meta, cells=cells)


def _same_run(first_name: str, first: Results, name: str, other: Results) -> None:
    a, b = first.run, other.run
    for field in ("harness_version", "source", "loop", "strict"):
        if getattr(a, field) != getattr(b, field):
            raise MergeError(
                f"{name}: {field} {getattr(b, field)!r} differs from {first_name}'s "
                f"{getattr(a, field)!r}; merge only the results of one run"
            )
    if (a.shard is None) != (b.shard is None):
        raise MergeError(
            f"{name} and {first_name}: one is a shard (--shard) and the other is not; merge "
            "the shards of one run"
        )
    if a.shard is not None and (
        a.shard.split("/")[1] != (b.shard or "").split("/")[1]
        or a.selection != b.selection
        or a.library != b.library
    ):
        raise MergeError(
            f"{name}: shard {b.shard} is not of the same run as {first_name}'s {a.shard} "
            "(another shard count, cell list or scenario files); rerun the shards from one commit"
        )
    _same_scenarios(first_name, first.cells, name, other.cells)


def _same_scenarios(
    first_name: str, first: Sequence[CellResult], name: str, other: Sequence[CellResult]
) -> None:
    known = {c.scenario.id: c.scenario for c in first}
    for cell in other:
        mine = known.get(cell.scenario.id)
        if mine is not None and (mine.path, mine.title) != (
            cell.scenario.path,
            cell.scenario.title,
        ):
            raise MergeError(
                f"{name}: scenario {cell.scenario.id!r} is not the one in {first_name} "
                f"({cell.scenario.path!r} vs {mine.path!r}); merge results of one library"
            )


def _no_overlap(named: Sequence[tuple[str, Results]]) -> None:
    seen: dict[str, str] = {}
    for name, results in named:
        for cell in results.cells:
            if cell.id in seen:
                raise MergeError(
                    f"{name} and {seen[cell.id]} both hold cell {cell.id}; each cell must come "
                    "from one file (merge different shards, not the same one twice)"
                )
            seen[cell.id] = name


def _merged_meta(base: RunMeta, merged: Sequence[Results], argv: Sequence[str]) -> RunMeta:
    parts = tuple(p for r in merged for p in parts_of(r))
    started = min(p.started for p in parts)
    finished = max(p.finished for p in parts)
    elapsed = (datetime.fromisoformat(finished) - datetime.fromisoformat(started)).total_seconds()
    return dataclasses.replace(
        base,
        started=started,
        finished=finished,
        elapsed=max(0.0, elapsed),
        argv=tuple(argv),
        shard=None,
        selection=(),
        parts=parts,
    )
