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
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.loop.contract import Loop
    from harness.results.model import CellResult
    from harness.runner import Cell, CellRun
    from harness.sources import Source

POLL_SECONDS = 1.0  # the longest wait for a worker's message before looking again
STOP_SECONDS = 5.0  # how long stopped workers get, all together, before SIGTERM

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
        reached=reached_by(source, run),
    )


def reached_by(source: Source, run: CellRun) -> tuple[Reach, ...]:
    """A live cell's exchanges as `Reach`es (nothing for the other sources)."""
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
    stopping = context.Event()  # the run ends early: a worker takes no further cell
    for number in range(1, len(plan.cells) + 1):
        todo.put(number)
    count = max(1, min(jobs, len(plan.cells)))
    for _ in range(count):
        todo.put(None)
    workers: dict[Any, Any] = {}  # each worker's end of its pipe -> the worker
    try:
        for _ in range(count):
            reader, writer = context.Pipe(duplex=False)
            worker = _start_deaf(context, _work, plan, todo, writer, stopping)
            writer.close()  # the worker holds the only writer: its end is this reader's EOF
            workers[reader] = worker
        yield from _collect(plan, workers)
    except BaseException:  # an interrupt, a failed cell, or the caller stopped reading
        stopping.set()
        raise
    finally:
        _stop(list(workers.values()))


def _collect(plan: Plan, workers: dict[Any, Any]) -> Iterator[Outcome]:
    """What the workers send, until every cell is in. A worker's pipe is read to its end
    before its exit is judged, so nothing it sent is lost to the race with its exit."""
    running: dict[Any, int] = {}  # reader -> the cell its worker started and has not sent
    remaining = len(plan.cells)
    live = dict(workers)
    while remaining:
        if not live:
            raise HarnessError(
                "every worker process stopped before the run's cells were done; no report written"
            )
        ready: list[Any] = wait(list(live), timeout=POLL_SECONDS)
        for reader in ready:
            try:
                item = reader.recv()
            except EOFError:
                _ended(plan, live.pop(reader), running.get(reader))
                continue
            if isinstance(item, _Failed):
                raise HarnessError(item.line)
            if isinstance(item, _Started):
                running[reader] = item.number
                continue
            running.pop(reader, None)
            remaining -= 1
            yield item


def _ended(plan: Plan, worker: Any, number: int | None) -> None:
    """A worker's pipe closed: fine when it stopped cleanly between cells."""
    worker.join(timeout=STOP_SECONDS)
    if worker.exitcode == 0 and number is None:
        return
    where = "" if number is None else f" while running {plan.cells[number - 1].id}"
    raise HarnessError(
        f"a worker process stopped (exit code {worker.exitcode}){where}; no report written. "
        "Run that cell alone with --jobs 1 to see why"
    )


def _start_deaf(context: Any, target: Callable[..., None], *args: Any) -> Any:
    """Start a worker with Ctrl-C ignored until `_work` listens again: one arriving while it
    still starts (unpickling its arguments, importing) would escape as a traceback before any
    code of ours could catch it. An ignored signal stays ignored across the spawn's exec, where
    a handler would not. Such a worker misses that interrupt; the parent hears it and sets
    `stopping`, which the worker reads as soon as it listens, before taking any cell.

    The parent ignores Ctrl-C too for the few milliseconds of each `start()` (the setting is
    the process's): an interrupt in exactly that window is lost, and pressing it again works.
    Only the main thread may set handlers, and a parent already ignoring Ctrl-C (a background
    job) is left as it is: there the worker starts as it always did.

    `target` gets `args` and then whether it was started deaf, to pass to `_listen`."""
    previous = signal.getsignal(signal.SIGINT)
    deaf = threading.current_thread() is threading.main_thread() and callable(previous)
    worker = context.Process(target=target, args=(*args, deaf), daemon=True)
    if not deaf:
        worker.start()
        return worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        worker.start()
    finally:
        signal.signal(signal.SIGINT, previous)
    return worker


def _listen(deaf: bool) -> None:
    """In a worker started `deaf`, Ctrl-C raises KeyboardInterrupt again from now on."""
    if deaf:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _stop(workers: Sequence[Any]) -> None:
    """Wait for the workers to end, within `STOP_SECONDS` for them all; then SIGTERM."""
    deadline = time.monotonic() + STOP_SECONDS
    for worker in workers:
        worker.join(timeout=max(0.0, deadline - time.monotonic()))
    for worker in workers:
        if worker.is_alive():
            worker.terminate()
            worker.join()


def _work(plan: Plan, todo: Any, done: Any, stopping: Any, deaf: bool) -> None:
    """A worker process: set up once, then run cells until the queue says stop or the run is
    `stopping`. `done` is the write end of its pipe to the parent: each send is whole before
    the next line runs. A worker started `deaf` (`_start_deaf`) takes Ctrl-C again from here
    on, and first looks whether the run stopped meanwhile."""
    try:
        _listen(deaf)
        if stopping.is_set():
            return
        from harness.commands.run import close_loop, loop_from_args
        from harness.runner import run_cell
        from harness.sources import sdk_environment

        source = open_source(plan)
        try:
            with sdk_environment(source):
                loop, _ = loop_from_args(argparse.Namespace(**plan.loop))
                try:
                    while not stopping.is_set() and (number := todo.get()) is not None:
                        done.send(_Started(number=number))
                        cell = plan.cells[number - 1]
                        run = run_cell(cell, source, loop, run_id=plan.run_id(number))
                        done.send(outcome_of(number, run, source, strict=plan.strict))
                finally:
                    close_loop(loop)
        finally:
            source.close()
    except HarnessError as exc:
        done.send(_Failed(line=str(exc)))
    except KeyboardInterrupt:
        return  # the parent was interrupted too: it stops the run and says so
    except Exception as exc:  # a harness bug: one line naming where, for the parent to print
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        done.send(
            _Failed(
                line=f"a worker process failed: {type(exc).__name__}: {exc} at "
                f"{frame.filename}:{frame.lineno}"
            )
        )
