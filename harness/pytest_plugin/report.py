"""`--harness-report DIR`: the cells a pytest session ran, in one results file, HTML report and
JUnit XML, as `harness run` writes them.

Each cell's result travels on its call report as JSON text (`CELL_ATTRIBUTE`; pytest-xdist
sends a report's extra attributes to the controller), so under `-n N` the controller receives
every worker's cells and writes the one report; without xdist the session itself does.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from harness.pytest_plugin.settings import PROVIDERS, Settings

if TYPE_CHECKING:
    from harness.pytest_plugin.player import Played
    from harness.results.model import CellResult

CELL_ATTRIBUTE = "harness_cell"
FILES = ("results.json", "index.html", "junit.xml")
CELL = pytest.StashKey[str]()  # on an item: its cell's result


def cell_json(played: Played) -> str:
    """The cell as the results file holds it (`harness.results`), redacted."""
    from harness.results.build import cell_result, judge
    from harness.results.codec import to_json
    from harness.scrub import redact

    judged = judge(played.run, played.findings, played.drift)
    return redact(json.dumps(to_json(cell_result(judged)), ensure_ascii=False))


class ReportWriter:
    """A plugin object in the process that writes the report: collects the cells from the
    call reports (its own, or every xdist worker's) and writes the files at the end."""

    def __init__(self, settings: Settings, folder: Path) -> None:
        self.settings = settings
        self.folder = folder
        self.started = time.time()
        self.cells: list[str] = []
        self.summary = ""

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        text = getattr(report, CELL_ATTRIBUTE, None)
        if isinstance(text, str):
            self.cells.append(text)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        from harness.errors import HarnessError

        try:
            written = self.write(session.config)
        except HarnessError as exc:
            self.summary = f"harness: report not written: {exc}"
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
            return
        self.summary = (
            f"harness: report of {len(self.cells)} cell(s), the cells this session ran, in "
            f"{self.folder}: {', '.join(p.name for p in written)}"
        )

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.summary:
            terminalreporter.write_line(self.summary)

    def write(self, config: pytest.Config) -> list[Path]:
        from harness.commands.report import write_views
        from harness.results import run_meta, write_results
        from harness.results.build import check_catalogue, loop_label, results_of
        from harness.results.codec import from_json
        from harness.results.model import CellResult

        cells = [from_json(CellResult, json.loads(text)) for text in self.cells]
        meta = run_meta(
            source=self.settings.source,
            loop=loop_label(self.settings.loop, self.settings.exec),
            started=self.started,
            finished=None,
            argv=[Path(sys.argv[0]).name, *config.invocation_params.args],
        )
        results = results_of(sorted(cells, key=_order), meta=meta, rules=check_catalogue())
        results_path, html, junit = (self.folder / name for name in FILES)
        return [write_results(results, results_path), *write_views(results, html, junit, None)]


def _order(cell: CellResult) -> tuple[str, int, bool]:
    """Scenario, then provider in the harness's order, then stream variant: the same order
    whichever worker ran a cell first."""
    return cell.scenario.id, PROVIDERS.index(cell.provider), cell.stream
