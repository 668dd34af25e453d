"""`harness report`: the views of a results file — the HTML compatibility report, JUnit XML and
the console summary. `harness run` writes the same views through `publish` after its cells ran.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.commands.outputs import Outputs, Scope
    from harness.results import CellResult, Results
    from harness.shards import Shard

DEFAULT_RESULTS = "reports/results.json"
DEFAULT_HTML = "reports/index.html"
DEFAULT_JUNIT = "reports/junit.xml"

DESCRIPTION = f"""\
Write the views of a results file (the JSON file `harness run` writes, {DEFAULT_RESULTS}
by default): the HTML compatibility report, JUnit XML if asked, and a one-screen summary.

The HTML report is one self-contained file (no network): a scenario x provider matrix, a
rule x provider matrix, filters, and each cell's transcript with its findings at the call
they concern. With --previous it also shows what changed since that run: new failures,
fixes, changed endings, and drift in the requests and responses.

Several results files are merged into one first (written to --results, with the HTML report
and JUnit XML): the shards of one run (`harness run --shard K/N`), or partial runs of one
library (e.g. one per provider). They must share the harness version, source, loop and
--strict, and no cell may come from two files; shards must be cut from the same cells and
scenario files. A missing shard is named, and the report has the cells it got.

examples:
  harness report {DEFAULT_RESULTS}
  harness report {DEFAULT_RESULTS} --previous last-week/results.json
  harness report {DEFAULT_RESULTS} --html public/index.html --junit junit.xml
  harness report reports/shard-*/results.json

Exit codes: 0 every cell conforms, 1 findings, 2 a missing, corrupt or other-version
results file, results that do not merge (or any other input error).
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="RESULTS",
        help=f"the results file to read (e.g. {DEFAULT_RESULTS}); several: the shards (or "
        "partial runs) of one run, merged into one",
    )
    parser.add_argument(
        "--results",
        default=None,
        metavar="PATH",
        help="several RESULTS: where to write the merged results file "
        f"(default: {DEFAULT_RESULTS})",
    )
    add_view_options(parser, junit_default=None)


def add_view_options(parser: argparse.ArgumentParser, junit_default: str | None) -> None:
    """--html, --junit and --previous; `harness run` also writes JUnit by default."""
    parser.add_argument(
        "--html",
        default=DEFAULT_HTML,
        metavar="PATH",
        help=f"where to write the HTML report (default: {DEFAULT_HTML})",
    )
    parser.add_argument(
        "--junit",
        default=junit_default,
        metavar="PATH",
        help="where to write JUnit XML"
        + (f" (default: {junit_default})" if junit_default else " (default: not written)"),
    )
    parser.add_argument(
        "--previous",
        default=None,
        metavar="FILE",
        help="an earlier results file: the report adds what changed since then",
    )


def add_run_output_options(parser: argparse.ArgumentParser) -> None:
    """The options `harness run` takes for its results file and views."""
    parser.add_argument(
        "--results",
        default=DEFAULT_RESULTS,
        metavar="PATH",
        help=f"where to write the run's results file (default: {DEFAULT_RESULTS})",
    )
    add_view_options(parser, junit_default=DEFAULT_JUNIT)


def run(args: argparse.Namespace) -> int:
    from harness.results import read_results

    if args.results is not None and len(args.inputs) == 1:
        raise HarnessError("--results applies when merging several results files")
    named = [(path, read_results(path)) for path in args.inputs]
    previous = load_previous(args)
    written: list[Path] = []
    if len(named) == 1:
        results = named[0][1]
    else:
        results, written = _merged(args, named)
    written += write_views(results, args.html, args.junit, previous)
    print_summary(results, written)
    return 0 if results.conforms else 1


def _merged(
    args: argparse.Namespace, named: list[tuple[str, Results]]
) -> tuple[Results, list[Path]]:
    """Several results files merged into one (JUnit written too, unless --junit '')."""
    from harness.results import write_results
    from harness.results.merge import merge_files, missing_shards

    results = merge_files(named, sys.argv)
    if args.junit is None:
        args.junit = DEFAULT_JUNIT
    missing = missing_shards(named)
    parts = f"{len(named)} shards" if results.run.parts[0].shard else f"{len(named)} runs"
    print(
        f"merged {parts} into {len(results.cells)} cell(s)"
        + (f"; missing shard(s) {', '.join(missing)}" if missing else "")
    )
    return results, [write_results(results, args.results or DEFAULT_RESULTS)]


def load_previous(args: argparse.Namespace) -> Results | None:
    """Read --previous first, so a bad file stops a run before any cell runs."""
    from harness.results import read_results

    return None if args.previous is None else read_results(args.previous)


def write_views(
    results: Results, html: str | Path | None, junit: str | Path | None, previous: Results | None
) -> list[Path]:
    from harness.report.html import write_html
    from harness.report.junit import write_junit

    written: list[Path] = []
    if html:
        written.append(write_html(results, html, previous))
    if junit:
        written.append(write_junit(results, junit))
    return written


def print_summary(results: Results, written: Sequence[Path]) -> None:
    from harness.report.console import summary_lines

    print("\n".join(summary_lines(results)))
    if written:
        print("wrote " + ", ".join(str(p) for p in written))
    sys.stdout.flush()


def default_outputs(folder: Path | None) -> Outputs:
    """Where a run writes when not told: `reports/`, or `folder` (`[tool.harness]` reports)."""
    from harness.commands.outputs import Outputs

    plain = (DEFAULT_RESULTS, DEFAULT_HTML, DEFAULT_JUNIT)
    results, html, junit = (p if folder is None else str(folder / Path(p).name) for p in plain)
    return Outputs(results=results, html=html, junit=junit)


def publish(
    args: argparse.Namespace,
    cells: Sequence[CellResult],
    *,
    source: str,
    loop: str,
    started: float,
    previous: Results | None,
    scope: Scope,
    shard: Shard | None = None,
    argv: Sequence[str] | None = None,
) -> Results:
    """After `harness run`: write the results file, then every view of it, then the summary.
    A partial run goes where `harness.commands.outputs` decides, and says where."""
    from harness.commands.outputs import outputs_for
    from harness.results import run_meta, write_results
    from harness.results.build import check_catalogue, results_of
    from harness.results.merge import merge_partial

    meta = run_meta(
        source=source,
        loop=loop,
        started=started,
        finished=None,
        argv=list(sys.argv if argv is None else argv),
        strict=bool(getattr(args, "strict", False)),
        shard=shard,
    )
    results = results_of(cells, meta=meta, rules=check_catalogue())
    from harness.settings import load_settings

    outputs = outputs_for(args, default_outputs(load_settings().reports), scope, shard, results)
    if outputs.merge_into is not None:
        results = merge_partial(outputs.merge_into, results)
    written = [write_results(results, outputs.results)]
    written += write_views(results, outputs.html, outputs.junit, previous)
    if outputs.note:
        print(outputs.note)
    print_summary(results, written)
    return results
