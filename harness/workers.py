"""A run's cells, each judged where it ran: in this process one at a time, or in worker
processes (`harness run --jobs N`).

A worker is spawned (nothing of this process's threads, event loops or open sockets is
inherited), builds its own source — its own endpoint on 127.0.0.1 with its own emulator or
replay apps, or its own forwarder to the real APIs — points the SDKs' variables at it, imports
the loop once, then takes cells off a shared queue until none is left. Each cell keeps its run
id (`<number>-<provider>`, its place in the whole run), so what it sends is what the sequential
run sends, but for the endpoint's port. A cell comes back judged (`Outcome`: its results-file
entry and its console lines), so the parent only prints and writes.
"""

from __future__ import annotations

import argparse
import multiprocessing
import queue
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.loop.contract import Loop
    from harness.results.model import CellResult
    from harness.runner import Cell, CellRun
    from harness.sources import Source

POLL_SECONDS = 0.2
STOP_SECONDS = 5.0  # how long stopped workers get to close their endpoints before SIGTERM

# One raw exchange of a live cell: its provider, the upstream it was sent to and its error
# (None: it reached the API), so the parent can tell a run that reached no API at all.
Reach = tuple[str, str, str | None]


@dataclass(frozen=True, kw_only=True)
class Plan:
    """What a worker needs to rebuild the run: the cells (numbered from 1 by position), where
    answers come from, and the loop's options (`--loop`, `--exec`, `--exec-timeout`)."""

    cells: tuple[Cell, ...]
    source: str  # cassette | scripted | live
    cassettes: str
    models: Mapping[str, str]
    strict: bool
    loop: Mapping[str, Any]
    # Each cell's place in the whole run, from 1 (a shard's cells keep theirs), which names its
    # run at the endpoint: empty means their positions here.
    places: tuple[int, ...] = ()

    def run_id(self, number: int) -> str:
        """The run id of cell `number` (from 1, its place in this plan)."""
        place = self.places[number - 1] if self.places else number
        return f"{place}-{self.cells[number - 1].provider}"


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """A cell as run and judged: its entry in the results file and its console lines."""

    number: int  # its place in the run, from 1
    result: CellResult
    verdict: str  # the progress line's verdict column
    details: tuple[str, ...]  # the progress line's headlines
    warnings: tuple[str, ...]  # drift that fails only with --strict
    rows: tuple[tuple[str, ...], ...]  # its rows of the final table
    reached: tuple[Reach, ...]


@dataclass(frozen=True, kw_only=True)
class _Started:
    number: int
    pid: int


@dataclass(frozen=True, kw_only=True)
class _Failed:
    line: str  # the harness could not run a cell (a broken cassette, a loop that won't import)


def outcome_of(number: int, run: CellRun, source: Source, *, strict: bool) -> Outcome:
    """Judge a cell that ran: the checks' findings and its source's (drift only warns unless
    `strict`), its results entry, and the lines the console shows for it."""
    from harness.commands.table import progress_parts, table_rows
    from harness.results.build import cell_result, judge, sort_findings

    cell = run.cell
    found = sort_findings(
        run, source.findings(cell.scenario, cell.provider, cell.stream), strict=strict
    )
    verdict, details = progress_parts(run, found.findings)
    return Outcome(
        number=number,
        result=cell_result(judge(run, found.findings, found.drift)),
        verdict=verdict,
        details=details,
        warnings=tuple(w.line() for w in found.warnings),
        rows=table_rows(run),
        reached=_reached(source, run),
    )


def _reached(source: Source, run: CellRun) -> tuple[Reach, ...]:
    upstreams: Mapping[str, str] | None = getattr(source, "upstreams", None)
    if source.name != "live" or upstreams is None:
        return ()
    provider = run.cell.provider
    return tuple((provider, upstreams[provider], r.error) for r in run.records)


def open_source(plan: Plan) -> Source:
    """The plan's source, for its cells (a cassette source reads all their cassettes now)."""
    from harness.sources import LiveSource, ScriptedSource

    scenarios = list({c.scenario.id: c.scenario for c in plan.cells}.values())
    if plan.source == "scripted":
        return ScriptedSource(scenarios, plan.models)
    if plan.source == "live":
        return LiveSource(sorted({c.provider for c in plan.cells}), plan.models)
    from harness.cassettes.source import CassetteSource

    return CassetteSource([(c.scenario, c.provider, c.stream) for c in plan.cells], plan.cassettes)


def outcomes_here(plan: Plan, source: Source, loop: Loop) -> Iterator[Outcome]:
    """Every cell in this process, in run order."""
    from harness.runner import run_cell

    for number, cell in enumerate(plan.cells, 1):
        run = run_cell(cell, source, loop, run_id=plan.run_id(number))
        yield outcome_of(number, run, source, strict=plan.strict)


def outcomes_in_workers(plan: Plan, jobs: int) -> Iterator[Outcome]:
    """Every cell in `jobs` worker processes, in the order they finish. A worker that dies, or
    a cell the harness cannot run, stops the run with one line (HarnessError); an interrupt
    stops the workers and is raised again here."""
    context = multiprocessing.get_context("spawn")
    todo: Any = context.Queue()
    done: Any = context.Queue()
    for number in range(1, len(plan.cells) + 1):
        todo.put(number)
    count = max(1, min(jobs, len(plan.cells)))
    for _ in range(count):
        todo.put(None)
    workers = [
        context.Process(target=_work, args=(plan, todo, done), daemon=True) for _ in range(count)
    ]
    for worker in workers:
        worker.start()
    try:
        yield from _collect(plan, workers, done)
    finally:
        _stop(workers)


def _collect(plan: Plan, workers: Sequence[Any], done: Any) -> Iterator[Outcome]:
    running: dict[int, int] = {}  # worker pid -> the cell number it started and not finished
    remaining = len(plan.cells)
    lost: str | None = None
    while remaining:
        try:
            item = done.get(timeout=POLL_SECONDS)
        except queue.Empty:
            # A stopped worker's last words may still be on their way: only a second empty
            # wait with the same worker gone is a loss.
            if lost is not None:
                raise HarnessError(lost) from None
            lost = _lost(plan, workers, running)
            continue
        lost = None
        if isinstance(item, _Failed):
            raise HarnessError(item.line)
        if isinstance(item, _Started):
            running[item.pid] = item.number
            continue
        running = {pid: n for pid, n in running.items() if n != item.number}
        remaining -= 1
        yield item


def _lost(plan: Plan, workers: Sequence[Any], running: Mapping[int, int]) -> str | None:
    """Why the run cannot finish (a worker died, or every worker stopped), or None."""
    for worker in workers:
        number = None if worker.is_alive() else running.get(worker.pid)
        if not worker.is_alive() and (worker.exitcode != 0 or number is not None):
            where = "" if number is None else f" while running {plan.cells[number - 1].id}"
            return (
                f"a worker process stopped (exit code {worker.exitcode}){where}; no report "
                "written. Run that cell alone with --jobs 1 to see why"
            )
    if not any(w.is_alive() for w in workers):
        return "every worker process stopped before the run's cells were done; no report written"
    return None


def _stop(workers: Sequence[Any]) -> None:
    for worker in workers:
        worker.join(timeout=STOP_SECONDS)
        if worker.is_alive():
            worker.terminate()
            worker.join()


def _work(plan: Plan, todo: Any, done: Any) -> None:
    """A worker process: set up once, then run cells until the queue says stop."""
    import os

    from harness.commands.run import close_loop, loop_from_args
    from harness.runner import run_cell
    from harness.sources import sdk_environment

    try:
        source = open_source(plan)
        try:
            with sdk_environment(source):
                loop, _ = loop_from_args(argparse.Namespace(**plan.loop))
                try:
                    while (number := todo.get()) is not None:
                        done.put(_Started(number=number, pid=os.getpid()))
                        cell = plan.cells[number - 1]
                        run = run_cell(cell, source, loop, run_id=plan.run_id(number))
                        done.put(outcome_of(number, run, source, strict=plan.strict))
                finally:
                    close_loop(loop)
        finally:
            source.close()
    except HarnessError as exc:
        done.put(_Failed(line=str(exc)))
    except KeyboardInterrupt:
        return  # the parent was interrupted too: it stops the run and says so
    except Exception as exc:  # a harness bug: one line naming where, for the parent to print
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        done.put(
            _Failed(
                line=f"a worker process failed: {type(exc).__name__}: {exc} at "
                f"{frame.filename}:{frame.lineno}"
            )
        )
