"""The collected nodes: a scenario file, and one item per cell of it, named like the cell
(`limit_reached_pending_write[anthropic-stream]`), so `-k` selects by scenario, provider or
stream variant."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from harness.errors import HarnessError
from harness.pytest_plugin.settings import SETTINGS
from harness.runner import Cell, cells
from harness.scenario import Scenario, load_scenario
from harness.scrub import redact
from harness.settings import load_settings

if TYPE_CHECKING:
    from harness.pytest_plugin.player import Played

MARKER = "harness"
SOURCE_PROPERTY = "harness.source"


class HarnessDriftWarning(UserWarning):
    """A replayed request differs from its recording (an error with --harness-strict)."""


class CellFailed(Exception):
    """The cell ran and broke rules; `repr_failure` prints them."""

    def __init__(self, played: Played) -> None:
        super().__init__(f"{len(played.findings)} finding(s)")
        self.played = played


class _Writer(Protocol):
    """What `toterminal` uses of pytest's (private) TerminalWriter."""

    def line(self, s: str = "") -> None: ...


@dataclass(frozen=True)
class Crash:
    """What pytest's short summary (`-ra`, `--tb=line`) and JUnit's failure message read."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True)
class CellFailure:
    """A failure report pytest prints as is; `reprcrash` gives its one-line summary."""

    text: str
    reprcrash: Crash

    def toterminal(self, tw: _Writer) -> None:
        for line in self.text.splitlines():
            tw.line(line)

    def __str__(self) -> str:  # pytest-xdist sends the report to the controller as text
        return self.text


class ScenarioFile(pytest.File):
    def collect(self) -> Iterator[ScenarioItem]:
        try:
            # The project's [tool.harness] (budget, context window) as for the CLI.
            scenario = load_scenario(self.path, load_settings(Path(str(self.config.rootpath))))
        except HarnessError as exc:
            raise self.CollectError(str(exc)) from None
        settings = self.config.stash[SETTINGS]
        for cell in cells([scenario], settings.providers, settings.stream):
            yield ScenarioItem.from_parent(self, name=cell.id, cell=cell)


class ScenarioItem(pytest.Item):
    def __init__(self, *, cell: Cell, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cell = cell
        self.add_marker(MARKER)

    @property
    def scenario(self) -> Scenario:
        return self.cell.scenario

    def runtest(self) -> None:
        from harness.pytest_plugin import player_for

        played = player_for(self.session).play(self.cell)
        run = played.run
        self.user_properties += [
            (SOURCE_PROPERTY, played.how),
            ("harness.cassette", str(played.cassette or "")),
            ("harness.model", run.model),
            ("harness.calls", len(run.exchanges)),
            ("harness.rules", " ".join(sorted({f.rule for f in played.findings}))),
        ]
        if self.config.stash[SETTINGS].report is not None:
            from harness.pytest_plugin.report import CELL, cell_json

            self.stash[CELL] = cell_json(played)
        self.add_report_section("call", "harness", redact(played.describe()))
        for warning in played.warnings:
            line = redact(f"{self.cell.id}: {warning.line()}")
            warnings.warn(HarnessDriftWarning(line), stacklevel=1)
        if played.findings:
            raise CellFailed(played)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> Any:
        error = excinfo.value
        if isinstance(error, CellFailed):
            from harness.pytest_plugin.excerpt import failure_summary, failure_text

            played = error.played
            loop = self.config.stash[SETTINGS].loop or "reference"
            text = redact(failure_text(played.run, played.findings, played.describe(), loop))
            summary = redact(failure_summary(played.findings, played.run))
            return CellFailure(text, Crash(str(self.path), summary))
        if isinstance(error, HarnessError):
            return redact(f"{self.cell.id}: {error}")  # a harness or input error: one line
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"scenario {self.cell.id}"
