"""`harness record`: refresh cassettes from the emulator (scripted) or the real APIs (live).

Cells run in worker threads (a cap per provider); this thread alone writes files, each one
atomically and only from a run whose every exchange arrived whole. An interrupt stops the
writing at once: every cassette is either its old bytes or a complete new recording.
"""

from __future__ import annotations

import argparse
import queue
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.commands.common import apply_settings, chosen_cells, load_all
from harness.commands.run import add_run_options, parse_models
from harness.errors import HarnessError
from harness.tempfiles import clean_before_recording

if TYPE_CHECKING:
    from harness.cassettes.budget import Budget
    from harness.cassettes.recorder import Prepared
    from harness.loop.contract import Loop
    from harness.runner import Cell
    from harness.scenario.model import Scenario
    from harness.sources import Source

DESCRIPTION = """\
Record cassettes: run each scenario × provider × stream variant through the loop and save
every HTTP exchange to cassettes/<provider>/<scenario_id>[.stream].yaml (readable YAML,
secrets scrubbed). A cassette is the provider's side: it is written when every exchange
arrived whole, also when the loop had findings, raised or reported an error (the output says
"recorded (loop raised: …)"; the findings stay findings on replay). A cut exchange, a
rejected request or an interrupted run leaves the existing file byte-identical and says why.

sources:
  scripted  the local emulator plays each scenario's script (free, offline)
  live      the real APIs (keys from ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY /
            GOOGLE_API_KEY); 429 and 5xx answers are retried with backoff; token usage and
            an ESTIMATED cost are printed; --budget stops before the estimate passes a limit

examples:
  harness record --source scripted
  harness record --source live --provider anthropic --budget 2.50
  harness record --source live scenarios/one_tool_then_answer.yaml --jobs 1

Exit codes: 0 every cell recorded (or unchanged), 1 some cells not recorded, 2 harness or
input error, 130 interrupted.
"""

POLL_SECONDS = 0.2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "scenarios",
        nargs="*",
        metavar="SCENARIO",
        help="scenario files or folders (default: ./scenarios)",
    )
    add_run_options(parser, recording=True)
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="cells at once per provider (default: 2 live, 4 scripted)",
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=3,
        metavar="N",
        help="live: retries of a 429/5xx answer, with backoff (default: 3)",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=None,
        metavar="USD",
        help="live: stop before the estimated cost would pass USD",
    )


@dataclass(frozen=True, kw_only=True)
class _Done:
    number: int
    prepared: Prepared | None = None
    problem: str | None = None  # the cell never ran (budget) or the harness failed on it
    # The loop raised KeyboardInterrupt on this worker thread (a Ctrl-C reaches only the main
    # thread, which stops in `run`): the main thread raises it again, so the run stops as
    # interrupted instead of waiting forever for a cell whose worker died.
    interrupted: bool = False


def run(args: argparse.Namespace) -> int:
    from harness.commands.run import close_loop, loop_from_args
    from harness.sources import sdk_environment

    apply_settings(args)  # [tool.harness] fills what the flags left out
    if args.jobs is not None and args.jobs < 1:
        raise HarnessError("--jobs must be 1 or more")
    if args.retries < 0:
        raise HarnessError("--retries must be 0 or more")
    if args.budget is not None and (args.source != "live" or args.budget <= 0):
        raise HarnessError("--budget takes a positive amount in USD and applies to --source live")
    scenarios = load_all(args.scenarios)
    chosen = chosen_cells(scenarios, args.provider, args.stream)
    if not chosen:
        raise HarnessError("no cell to record: the --provider/--stream filters leave nothing")
    clean_before_recording(args.cassettes, _say)  # what a killed write left behind
    source = _source(args, scenarios, chosen)
    try:
        with sdk_environment(source):  # before the loop's module is imported
            loop, _ = loop_from_args(args)
            try:
                return _Recorder(args, chosen, source, loop).run()
            finally:
                close_loop(loop)
    finally:
        source.close()


def _source(args: argparse.Namespace, scenarios: list[Scenario], chosen: list[Cell]) -> Source:
    from harness.endpoint.forward import RetryPolicy
    from harness.sources import LiveSource, ScriptedSource

    models = parse_models(args.model)
    if args.source == "scripted":
        return ScriptedSource(scenarios, models)
    retry = RetryPolicy(attempts=args.retries + 1, report=lambda line: _say(f"    retry: {line}"))
    return LiveSource(sorted({c.provider for c in chosen}), models, retry=retry)


class _Recorder:
    def __init__(
        self, args: argparse.Namespace, chosen: list[Cell], source: Source, loop: Loop
    ) -> None:
        from harness.cassettes.budget import Budget

        self.cells = chosen
        self.source = source
        self.loop = loop
        self.live = args.source == "live"
        self.folder = Path(args.cassettes)
        self.jobs = args.jobs or (2 if self.live else 4)
        self.budget: Budget = Budget(args.budget)
        self.stop = threading.Event()
        self.results: queue.Queue[_Done] = queue.Queue()
        self.counts = {"written": 0, "unchanged": 0, "not recorded": 0}
        self.loop_failed = 0  # recorded although the loop failed
        self.per_scenario: dict[str, list[Prepared]] = {}

    def run(self) -> int:
        _import_sdks({c.provider for c in self.cells})
        _say(
            f"harness record: {len(self.cells)} cell(s) from {self.source.name} into "
            f"{self.folder}/, {self.jobs} at once per provider"
            + (f", budget ${self.budget.limit:.2f} (estimate)" if self.budget.limit else "")
        )
        started = time.monotonic()
        self._start_workers()
        try:
            for done in self._finished():
                self._handle(done)
        except KeyboardInterrupt:
            self.stop.set()
            written = self.counts["written"]
            _say(
                f"harness record: interrupted; {written} cassette(s) were written whole, "
                "nothing else was touched (every other cassette keeps its old bytes)"
            )
            raise
        self._summary(time.monotonic() - started)
        self._reached_the_api()
        return 0 if self.counts["not recorded"] == 0 else 1

    def _reached_the_api(self) -> None:
        """A live refresh that reached no API at all is exit 2, not cells 'not recorded'."""
        from harness.commands.run import unreachable

        runs = [p.run for done in self.per_scenario.values() for p in done if p.run is not None]
        failed = unreachable(self.source, runs)
        if failed is not None:
            raise HarnessError(f"{failed}; no cassette written")

    def _start_workers(self) -> None:
        numbered = list(enumerate(self.cells, 1))
        for provider in sorted({c.provider for c in self.cells}):
            todo: queue.Queue[tuple[int, Cell]] = queue.Queue()
            for item in numbered:
                if item[1].provider == provider:
                    todo.put(item)
            for _ in range(self.jobs):
                threading.Thread(target=self._work, args=(todo,), daemon=True).start()

    def _work(self, todo: queue.Queue[tuple[int, Cell]]) -> None:
        while not self.stop.is_set():
            try:
                number, cell = todo.get_nowait()
            except queue.Empty:
                return
            self.results.put(self._one(number, cell))

    def _one(self, number: int, cell: Cell) -> _Done:
        from harness.cassettes.cassette import cassette_path
        from harness.cassettes.recorder import cassette_usage, record_cell
        from harness.cassettes.usage import price_for

        reserved = 0.0
        if self.live:
            model = self.source.model(cell.scenario, cell.provider)
            path = cassette_path(self.folder, cell.provider, cell.scenario.id, cell.stream)
            previous = cassette_usage(path, cell.provider) if path.exists() else None
            reserved = self.budget.estimate(cell.provider, model, cell.scenario, previous)
            if not self.budget.reserve(reserved):
                return _Done(
                    number=number,
                    problem=f"not started: its estimated ${reserved:.4f} would pass the budget",
                )
        spent = reserved  # what a cell that failed before reporting usage may have cost
        try:
            prepared = record_cell(
                cell, self.source, self.loop, f"rec{number}-{cell.provider}", self.folder
            )
            if self.live:
                spent = prepared.usage.cost(price_for(cell.provider, prepared.model)[0])
        except KeyboardInterrupt:
            return _Done(number=number, interrupted=True)
        except Exception as exc:  # a harness failure on one cell must not stop the others
            return _Done(number=number, problem=f"{type(exc).__name__}: {exc}")
        finally:
            if self.live:
                self.budget.settle(cell.provider, reserved, spent)
        return _Done(number=number, prepared=prepared)

    def _finished(self) -> Iterator[_Done]:
        for _ in self.cells:
            while True:
                try:
                    done = self.results.get(timeout=POLL_SECONDS)
                    break
                except queue.Empty:
                    continue
            if done.interrupted:
                raise KeyboardInterrupt
            yield done

    def _handle(self, done: _Done) -> None:
        cell = self.cells[done.number - 1]
        prepared = done.prepared
        verdict, why = "not recorded", done.problem
        if prepared is not None:
            verdict, why = self._write(prepared)
            self.per_scenario.setdefault(cell.scenario.id, []).append(prepared)
        self.counts[verdict] += 1
        total = sum(self.counts.values())
        detail = _usage_text(prepared, self.live) if prepared is not None else ""
        _say(f"[{total}/{len(self.cells)}] {cell.id:<52} {verdict:<13} {detail}")
        if why:
            _say(f"    {why}")
        elif prepared is not None and prepared.loop_failed is not None:
            self.loop_failed += 1
            _say(f"    recorded ({prepared.loop_failed}); replaying it gives the same findings")

    def _write(self, prepared: Prepared) -> tuple[str, str | None]:
        from harness.cassettes.recorder import save_recording

        saved = save_recording(prepared)
        if saved.verdict != "not written":
            return saved.verdict, None
        if prepared.text is None:
            return "not recorded", f"{prepared.path} left as it was: {saved.problem}"
        return "not recorded", saved.problem

    def _summary(self, elapsed: float) -> None:
        counts = ", ".join(f"{n} {k}" for k, n in self.counts.items())
        failed = f" ({self.loop_failed} recorded where the loop failed)" if self.loop_failed else ""
        _say(f"harness record: {counts}{failed} in {elapsed:.1f}s")
        if not self.live:
            return
        from harness.cassettes.usage import Usage, price_for

        print(f"{'scenario':<40} {'calls':>5} {'input tok':>10} {'output tok':>10} {'est. USD':>9}")
        grand = 0.0
        for scenario_id, runs in sorted(self.per_scenario.items()):
            usage = sum((p.usage for p in runs), Usage())
            cost = sum(p.usage.cost(price_for(p.cell.provider, p.model)[0]) for p in runs)
            calls = sum(len(p.run.exchanges) for p in runs if p.run is not None)
            grand += cost
            tokens = f"{usage.input_tokens:>10} {usage.output_tokens:>10}"
            print(f"{scenario_id:<40} {calls:>5} {tokens} {cost:>9.4f}")
        print(f"estimated total: ${grand:.4f} (list prices, an estimate, not a bill)")
        if self.budget.limit is not None:
            print(f"budget: ${self.budget.spent:.4f} of ${self.budget.limit:.2f} used (estimate)")


def _usage_text(prepared: Prepared, live: bool) -> str:
    from harness.cassettes.usage import price_for

    calls = len(prepared.run.exchanges) if prepared.run is not None else 0
    usage = prepared.usage
    text = f"{calls} call(s)  {usage.input_tokens} in / {usage.output_tokens} out tokens"
    if live:
        price, listed = price_for(prepared.cell.provider, prepared.model)
        note = "" if listed else f" ({prepared.model} not in the price table: upper bound)"
        text += f"  est. ${prepared.usage.cost(price):.4f}{note}"
    return text


def _import_sdks(providers: set[str]) -> None:
    """Import the SDKs here, once, before worker threads race to import them."""
    import importlib

    modules = {"anthropic": "anthropic", "openai": "openai", "gemini": "google.genai"}
    for provider in sorted(providers):
        importlib.import_module(modules[provider])


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
