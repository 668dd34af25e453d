"""`harness run`: every scenario × provider × stream variant through the loop under test."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.commands.common import apply_settings, chosen_cells, load_all
from harness.commands.report import add_run_output_options, load_previous, publish
from harness.errors import HarnessError
from harness.scenario.model import Provider

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from harness.commands.outputs import Scope
    from harness.loop.contract import Loop
    from harness.results.model import Results
    from harness.runner import CellRun
    from harness.shards import Shard
    from harness.sources import Source
    from harness.workers import Outcome, Plan, Reach

DESCRIPTION = """\
Run scenarios through an agent loop (the reference loop, or yours with --loop) on each
provider and stream variant, check what reached the wire, and print a table. Then write
the run's results file, the HTML compatibility report and JUnit XML (see `harness report`).

sources:
  cassette  the recorded cassettes in ./cassettes (default; offline, network blocked):
            requests are compared with the recording (drift is reported, and fails
            with --strict); a missing or unused recording fails
  scripted  the local emulator plays each scenario's script (no keys, no network)
  live      the real APIs; keys from ANTHROPIC_API_KEY, OPENAI_API_KEY,
            GEMINI_API_KEY / GOOGLE_API_KEY; base URLs from the SDKs' usual variables

examples:
  harness run
  harness run --strict --provider anthropic
  harness run --source scripted
  harness run --source scripted --provider gemini scenarios/gemini_calls_without_ids.yaml
  harness run --source scripted --loop my_app.agent:run_loop
  harness run --exec 'node agent.mjs'
  harness run --jobs 2
  harness run --shard 2/3 --jobs 2     (then: harness report reports/shard-*/results.json)

A partial run (scenario arguments, --provider, --stream, --shard) does not replace the full
run's report: it merges into reports/results.json when that is a full run of the same
library, source, loop and --strict, else writes reports/partial/ (a shard:
reports/shard-K-of-N/), and says which. Paths given with --results/--html/--junit are used.

Exit codes: 0 every cell conforms, 1 findings, 2 harness or input error.
"""

PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai", "gemini")
# How the live forwarder (harness/endpoint/forward.py) marks an exchange whose request never
# reached the real API (a closed port, a wrong base URL, no network).
UNREACHABLE = "the live API could not be reached"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "scenarios",
        nargs="*",
        metavar="SCENARIO",
        help="scenario files or folders (default: ./scenarios)",
    )
    add_run_options(parser)
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="run cells in N worker processes (default: 1, in this process); the results are "
        "the same but for timings. live: at most N cells at once in all",
    )
    parser.add_argument(
        "--shard",
        default=None,
        metavar="K/N",
        help="run only shard K of N (cells sorted by id, dealt round-robin), e.g. one job of "
        "a CI matrix; merge the shards' results with `harness report A B ...`",
    )
    add_run_output_options(parser)


def add_run_options(parser: argparse.ArgumentParser, *, recording: bool = False) -> None:
    """The options that choose what runs: for `harness run`, or for `harness record`
    (`recording`: only the scripted and live sources, one of them required; no --strict)."""
    verb = "record" if recording else "run"
    if recording:
        parser.add_argument(
            "--source",
            choices=("scripted", "live"),
            required=True,
            help="where the answers come from",
        )
    else:
        parser.add_argument(
            "--source",
            choices=("cassette", "scripted", "live"),
            default="cassette",
            help="where model answers come from (default: cassette)",
        )
    parser.add_argument(
        "--cassettes",
        default=None,
        metavar="DIR",
        help=f"cassette folder {'to write' if recording else 'for --source cassette'} "
        "(default: [tool.harness] cassettes, else ./cassettes)",
    )
    if not recording:
        parser.add_argument(
            "--strict",
            action="store_true",
            help="cassette: a request that drifted from its recording fails the cell",
        )
    parser.add_argument(
        "--provider",
        action="append",
        choices=PROVIDERS,
        metavar="NAME",
        help=f"{verb} only this provider (repeatable): anthropic, openai, gemini (default: "
        "[tool.harness] providers, else all)",
    )
    parser.add_argument(
        "--stream",
        choices=("both", "on", "off"),
        default=None,
        help=f"stream variants to {verb} (default: [tool.harness] stream, else both, as each "
        "scenario allows)",
    )
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument(
        "--loop",
        default=None,
        metavar="MODULE:FUNCTION",
        help=f"the loop {'to record' if recording else 'under test'} (default: [tool.harness] loop "
        "or exec, else the reference loop)",
    )
    chosen.add_argument(
        "--exec",
        default=None,
        metavar="COMMAND",
        help="the loop is a program, in any language: COMMAND runs via the shell once per user "
        "message, the query (JSON) on stdin, the answer (JSON) on stdout, the SDKs' base-URL "
        "and key variables pointing at the harness (see harness/exec/schemas)",
    )
    parser.add_argument(
        "--exec-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="--exec: kill the program's process group after this long per user message "
        "(default: 120)",
    )
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="PROVIDER=MODEL",
        help="override the model for a provider (repeatable)",
    )


def parse_models(items: list[str]) -> dict[str, str]:
    models: dict[str, str] = {}
    for item in items:
        provider, sep, model = item.partition("=")
        if not sep or provider not in PROVIDERS or not model:
            raise HarnessError(
                f"--model {item!r}: write it as PROVIDER=MODEL with PROVIDER one "
                f"of {', '.join(PROVIDERS)}"
            )
        models[provider] = model
    return models


def loop_name(args: argparse.Namespace) -> str:
    """The loop's name for reports, once its options are checked (--exec, --exec-timeout)."""
    timeout = args.exec_timeout
    if timeout is not None and args.exec is None:
        raise HarnessError("--exec-timeout applies to --exec")
    if args.exec is not None:
        if not args.exec.strip():
            raise HarnessError("--exec takes a command, e.g. --exec 'node agent.mjs'")
        if timeout is not None and not timeout > 0:
            raise HarnessError("--exec-timeout takes a positive number of seconds")
    from harness.results.build import loop_label

    return loop_label(args.loop, args.exec)


def loop_from_args(args: argparse.Namespace) -> tuple[Loop, str]:
    """The loop under test and its name for reports: --exec's program, --loop's function, or
    the reference loop. Import the loop after the SDKs' variables point at the endpoint."""
    from harness.runner import REFERENCE_LOOP, load_loop

    name = loop_name(args)
    if args.exec is None:
        return load_loop(args.loop or REFERENCE_LOOP), name
    from harness.exec.loop import DEFAULT_TIMEOUT, ExecLoop

    return ExecLoop(command=args.exec, timeout=args.exec_timeout or DEFAULT_TIMEOUT), name


def close_loop(loop: Loop) -> None:
    """Stop what the loop started (an --exec loop's tool endpoint)."""
    close = getattr(loop, "close", None)
    if callable(close):
        close()


def unreachable(source: Source, runs: Iterable[CellRun]) -> str | None:
    """One line when a live run reached no API at all (every exchange of every cell failed to
    reach the upstream): the provider, its base URL and the connection error. That is a
    harness or input problem (exit 2), not the loop's findings."""
    from harness.workers import reached_by

    return unreachable_line([r for run in runs for r in reached_by(source, run)])


def unreachable_line(reached: Sequence[Reach], everything: bool = True) -> str | None:
    """`unreachable` from each live exchange's provider, upstream and error: when every
    exchange failed to reach its API, or (`everything` False) every exchange of some provider —
    its cells were never judged, which is a harness or input problem too."""
    down = [
        provider
        for provider in sorted({p for p, _, _ in reached})
        if all((e or "").startswith(UNREACHABLE) for p, _, e in reached if p == provider)
    ]
    if not down or (everything and len(down) < len({p for p, _, _ in reached})):
        return None
    failed = [(p, u, e or "") for p, u, e in reached if p in down]
    where = ", ".join(f"{p} at {u}" for p, u in sorted({(p, u) for p, u, _ in failed}))
    reason = failed[0][2].removeprefix(UNREACHABLE).lstrip(": ")
    return (
        f"{UNREACHABLE} ({where}): {reason}; check the network and the base URL "
        "(ANTHROPIC_BASE_URL, OPENAI_BASE_URL, GOOGLE_GEMINI_BASE_URL)"
    )


def run(args: argparse.Namespace) -> int:
    from harness.commands.outputs import scope_of
    from harness.shards import shard_of
    from harness.sources import sdk_environment
    from harness.workers import Plan, open_source, outcomes_here, outcomes_in_workers

    started = time.time()
    apply_settings(args)  # [tool.harness] fills what the flags left out
    previous = load_previous(args)  # a bad --previous stops the run before any cell
    if args.jobs < 1:
        raise HarnessError(f"--jobs {args.jobs}: give 1 or more worker processes")
    scenarios = load_all(args.scenarios)
    models = parse_models(args.model)
    if models and args.source == "cassette":
        raise HarnessError(
            "--model does not apply to --source cassette: a cassette replays the model it "
            "was recorded with (re-record with `harness record --model ...`)"
        )
    chosen = chosen_cells(scenarios, args.provider, args.stream)
    if not chosen:
        raise HarnessError(
            "no cell to run: the scenarios' providers/streaming and the "
            "--provider/--stream filters leave nothing"
        )
    places: list[int] = []
    shard = None
    if args.shard is not None:
        places, shard = shard_of(chosen, scenarios, args.shard)
        if not places:
            raise HarnessError(
                f"--shard {args.shard}: no cell falls in this shard (the run has "
                f"{len(chosen)}); use fewer shards"
            )
        chosen = [chosen[p - 1] for p in places]
    scope = scope_of(args, scenarios, chosen)
    run_ = Launch(
        plan=Plan(
            cells=tuple(chosen),
            source=args.source,
            cassettes=args.cassettes,
            models=models,
            strict=args.strict,
            loop={"loop": args.loop, "exec": args.exec, "exec_timeout": args.exec_timeout},
            places=tuple(places),
        ),
        loop=loop_name(args),
        started=started,
        previous=previous,
        scope=scope,
        shard=shard,
        jobs=min(args.jobs, len(chosen)),
    )
    if run_.jobs > 1:
        return _run_all(args, run_, outcomes_in_workers(run_.plan, run_.jobs))
    source = open_source(run_.plan)
    try:
        with sdk_environment(source):  # before the loop's module is imported: it may build clients
            loop, _ = loop_from_args(args)
            try:
                return _run_all(args, run_, outcomes_here(run_.plan, source, loop))
            finally:
                close_loop(loop)
    finally:
        source.close()


@dataclass(frozen=True, kw_only=True)
class Launch:
    """A run about to start: its cells and how they run, and what its report records."""

    plan: Plan
    loop: str
    started: float
    previous: Results | None
    scope: Scope
    shard: Shard | None
    jobs: int


def _run_all(args: argparse.Namespace, run_: Launch, outcomes: Iterator[Outcome]) -> int:
    from harness.commands.table import print_progress_line, print_rows

    plan = run_.plan
    total = len(plan.cells)
    how = f", {run_.jobs} worker processes" if run_.jobs > 1 else ""
    part = (
        f", shard {run_.shard.label} ({total} of {len(run_.shard.selection)})" if run_.shard else ""
    )
    print(
        f"harness run: {total} cell(s){part}, source {plan.source}, loop {run_.loop}{how}",
        file=sys.stderr,
    )
    done: list[Outcome] = []
    for outcome in outcomes:
        done.append(outcome)
        result = outcome.result
        print_progress_line(
            len(done), total, result.id, outcome.verdict, result.timing.elapsed, outcome.details
        )
        for warning in outcome.warnings:
            print(f"    warning (fails with --strict): {warning}", file=sys.stderr)
    done.sort(key=lambda o: o.number)
    print_rows([row for o in done for row in o.rows])
    reached = [r for o in done for r in o.reached]
    failed = unreachable_line(reached)
    if failed is not None:
        raise HarnessError(f"{failed}; no report written")
    publish(
        args,
        [o.result for o in done],
        source=plan.source,
        loop=run_.loop,
        started=run_.started,
        previous=run_.previous,
        scope=run_.scope,
        shard=run_.shard,
    )
    partly = unreachable_line(reached, everything=False)
    if partly is not None:  # the other providers' cells are in the report
        print(
            f"harness run: error: {partly}; the report holds the other providers' cells",
            file=sys.stderr,
        )
        return 2
    return 1 if any(o.result.verdict == "fail" for o in done) else 0
