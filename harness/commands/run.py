"""`harness run`: every scenario × provider × stream variant through the loop under test."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING

from harness.commands.common import apply_settings, chosen_cells, load_all
from harness.commands.report import add_run_output_options, load_previous, publish
from harness.errors import HarnessError
from harness.scenario.model import Provider

if TYPE_CHECKING:
    from collections.abc import Iterable

    from harness.loop.contract import Loop
    from harness.results.model import Results
    from harness.runner import Cell, CellRun
    from harness.scenario.model import Scenario
    from harness.sources import Source

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


def loop_from_args(args: argparse.Namespace) -> tuple[Loop, str]:
    """The loop under test and its name for reports: --exec's program, --loop's function, or
    the reference loop. Import the loop after the SDKs' variables point at the endpoint."""
    from harness.runner import REFERENCE_LOOP, load_loop

    timeout = args.exec_timeout
    if timeout is not None and args.exec is None:
        raise HarnessError("--exec-timeout applies to --exec")
    if args.exec is None:
        return load_loop(args.loop or REFERENCE_LOOP), args.loop or "reference"
    if not args.exec.strip():
        raise HarnessError("--exec takes a command, e.g. --exec 'node agent.mjs'")
    if timeout is not None and not timeout > 0:
        raise HarnessError("--exec-timeout takes a positive number of seconds")
    from harness.exec.loop import DEFAULT_TIMEOUT, ExecLoop

    return ExecLoop(command=args.exec, timeout=timeout or DEFAULT_TIMEOUT), f"exec: {args.exec}"


def close_loop(loop: Loop) -> None:
    """Stop what the loop started (an --exec loop's tool endpoint)."""
    close = getattr(loop, "close", None)
    if callable(close):
        close()


def _make_source(
    args: argparse.Namespace, scenarios: list[Scenario], chosen: list[Cell], models: dict[str, str]
) -> Source:
    from harness.sources import LiveSource, ScriptedSource

    if args.source == "scripted":
        return ScriptedSource(scenarios, models)
    if args.source == "live":
        return LiveSource(sorted({c.provider for c in chosen}), models)
    from harness.cassettes.source import CassetteSource

    if models:
        raise HarnessError(
            "--model does not apply to --source cassette: a cassette replays the model it "
            "was recorded with (re-record with `harness record --model ...`)"
        )
    return CassetteSource([(c.scenario, c.provider, c.stream) for c in chosen], args.cassettes)


def unreachable(source: Source, runs: Iterable[CellRun]) -> str | None:
    """One line when a live run reached no API at all (every exchange of every cell failed to
    reach the upstream): the provider, its base URL and the connection error. That is a
    harness or input problem (exit 2), not the loop's findings."""
    from harness.sources import LiveSource

    if not isinstance(source, LiveSource):
        return None
    records = [(run.cell.provider, record) for run in runs for record in run.records]
    errors = [record.error or "" for _, record in records]
    if not records or not all(error.startswith(UNREACHABLE) for error in errors):
        return None
    where = ", ".join(f"{p} at {source.upstreams[p]}" for p in sorted({p for p, _ in records}))
    reason = errors[0].removeprefix(UNREACHABLE).lstrip(": ")
    return (
        f"{UNREACHABLE} ({where}): {reason}; check the network and the base URL "
        "(ANTHROPIC_BASE_URL, OPENAI_BASE_URL, GOOGLE_GEMINI_BASE_URL)"
    )


def run(args: argparse.Namespace) -> int:
    from harness.sources import sdk_environment

    started = time.time()
    apply_settings(args)  # [tool.harness] fills what the flags left out
    previous = load_previous(args)  # a bad --previous stops the run before any cell
    scenarios = load_all(args.scenarios)
    models = parse_models(args.model)
    chosen = chosen_cells(scenarios, args.provider, args.stream)
    if not chosen:
        raise HarnessError(
            "no cell to run: the scenarios' providers/streaming and the "
            "--provider/--stream filters leave nothing"
        )
    source = _make_source(args, scenarios, chosen, models)
    with sdk_environment(source):  # before the loop's module is imported: it may build clients
        try:
            loop, name = loop_from_args(args)
        except BaseException:
            source.close()
            raise
        try:
            return _run_all(args, chosen, source, loop, name, started, previous)
        finally:
            close_loop(loop)


def _run_all(
    args: argparse.Namespace,
    chosen: list[Cell],
    source: Source,
    loop: Loop,
    name: str,
    started: float,
    previous: Results | None,
) -> int:
    from harness.commands.table import print_progress, print_table
    from harness.findings import Finding
    from harness.results.build import Judged, judge, sort_findings
    from harness.runner import run_cells

    print(
        f"harness run: {len(chosen)} cell(s), source {source.name}, loop {name}",
        file=sys.stderr,
    )
    results: list[tuple[CellRun, list[Finding]]] = []
    judged: list[Judged] = []
    try:
        for run_result in run_cells(chosen, source, loop):
            cell = run_result.cell
            own = source.findings(cell.scenario, cell.provider, cell.stream)
            found = sort_findings(run_result, own, strict=args.strict)
            print_progress(len(results) + 1, len(chosen), run_result, found.findings)
            for warning in found.warnings:
                print(f"    warning (fails with --strict): {warning.line()}", file=sys.stderr)
            results.append((run_result, found.findings))
            judged.append(judge(run_result, found.findings, found.drift))
    finally:
        source.close()
    print_table(results)
    failed = unreachable(source, (run_result for run_result, _ in results))
    if failed is not None:
        raise HarnessError(f"{failed}; no report written")
    publish(
        args,
        judged,
        source=source.name,
        loop=name,
        started=started,
        previous=previous,
    )
    return 1 if any(f for _, f in results) else 0
