"""`harness report`: the views of a results file — the HTML compatibility report, JUnit XML and
the console summary. `harness run` writes the same views through `publish` after its cells ran.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.results import Judged, Results

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

examples:
  harness report {DEFAULT_RESULTS}
  harness report {DEFAULT_RESULTS} --previous last-week/results.json
  harness report {DEFAULT_RESULTS} --html public/index.html --junit junit.xml

Exit codes: 0 every cell conforms, 1 findings, 2 a missing, corrupt or other-version
results file (or any other input error).
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results", metavar="RESULTS", help=f"the results file to read (e.g. {DEFAULT_RESULTS})"
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

    results = read_results(args.results)
    previous = load_previous(args)
    written = write_views(results, args, previous)
    print_summary(results, written)
    return 0 if results.conforms else 1


def load_previous(args: argparse.Namespace) -> Results | None:
    """Read --previous first, so a bad file stops a run before any cell runs."""
    from harness.results import read_results

    return None if args.previous is None else read_results(args.previous)


def write_views(results: Results, args: argparse.Namespace, previous: Results | None) -> list[Path]:
    from harness.report.html import write_html
    from harness.report.junit import write_junit

    written: list[Path] = []
    if args.html:
        written.append(write_html(results, args.html, previous))
    if args.junit:
        written.append(write_junit(results, args.junit))
    return written


def print_summary(results: Results, written: Sequence[Path]) -> None:
    from harness.report.console import summary_lines

    print("\n".join(summary_lines(results)))
    if written:
        print("wrote " + ", ".join(str(p) for p in written))
    sys.stdout.flush()


def publish(
    args: argparse.Namespace,
    judged: Sequence[Judged],
    *,
    source: str,
    loop: str,
    started: float,
    previous: Results | None,
    argv: Sequence[str] | None = None,
) -> Results:
    """After `harness run`: write the results file, then every view of it, then the summary."""
    from harness.results import build_results, run_meta, write_results
    from harness.results.build import check_catalogue

    meta = run_meta(
        source=source,
        loop=loop,
        started=started,
        finished=None,
        argv=list(sys.argv if argv is None else argv),
    )
    results = build_results(judged, meta=meta, rules=check_catalogue())
    written = [write_results(results, args.results)]
    written += write_views(results, args, previous)
    print_summary(results, written)
    return results
