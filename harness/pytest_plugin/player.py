"""Playing one cell for a pytest item: from the scripted emulator, the live APIs, or its
cassette, recording the cassette when the record mode says so. One `Player` per pytest session,
so under pytest-xdist every worker has its own emulator and sources.

Record modes, on the cassette of each cell (`cassettes/<provider>/<scenario_id>[.stream].yaml`;
one cassette holds one cell's whole conversation, so a cell is recorded whole or not at all):

    none          replay only; a missing cassette fails the item (the default)
    once          replay the cassettes that exist; record the missing ones
    new_episodes  as once, and re-record a cell whose replay left its recording (a request
                  beyond the recorded calls, recorded calls never requested, or a request
                  that drifted from the recording): vcrpy's "new requests get recorded"
    all, rewrite  re-record every cell (a cassette is only written from a run that completed
                  cleanly, so a failed recording keeps the old file in both modes)

Recordings come from `--harness-record-from`: the emulator (scripted) or the real APIs (live).
An item that recorded is judged on the recorded run, as with pytest-recording.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from harness.cassettes.replay import RULE_DRIFT, RULE_MISSING, RULE_UNUSED
from harness.errors import CassetteError
from harness.findings import Finding
from harness.loop.contract import Loop
from harness.runner import Cell, CellRun, run_cell
from harness.scenario.model import Provider, Scenario
from harness.sources import Source

if TYPE_CHECKING:
    from harness.pytest_plugin.settings import Settings

# Replay findings that say the loop's conversation is no longer the recorded one.
LEFT_RECORDING = frozenset({RULE_DRIFT, RULE_MISSING, RULE_UNUSED})
NOT_WRITTEN = "record.not_written"


@dataclass(frozen=True, kw_only=True)
class Played:
    run: CellRun
    findings: tuple[Finding, ...]  # fail the item
    warnings: tuple[Finding, ...]  # drift without --harness-strict
    drift: tuple[Finding, ...] = ()  # every drift report, failing or not (for the results file)
    how: str  # scripted, live, replayed, recorded (written | unchanged | not written)
    cassette: Path | None = None

    def describe(self) -> str:
        return self.how if self.cassette is None else f"{self.how}: {self.cassette}"


class Player:
    def __init__(
        self,
        settings: Settings,
        scenarios: list[Scenario],
        providers: list[Provider],
        loop: Loop,
    ) -> None:
        self.settings = settings
        self.scenarios = scenarios
        self.providers = providers
        self.loop = loop
        self.folder = _readable(settings.cassettes)
        self._sources: dict[str, Source] = {}
        self._runs = 0

    def play(self, cell: Cell) -> Played:
        if self.settings.source != "cassette":
            source = self._source(self.settings.source)
            return self._judged(self._run(cell, source), source, self.settings.source)
        path = self._cassette(cell)
        mode = self.settings.record_mode
        if mode in ("all", "rewrite") or (mode != "none" and not path.is_file()):
            return self._record(cell, path)
        played = self._replay(cell, path)
        if mode == "new_episodes" and any(f.rule in LEFT_RECORDING for f in played.findings):
            return self._record(cell, path)
        return played

    def close(self) -> None:
        for source in self._sources.values():
            source.close()
        self._sources.clear()
        close = getattr(self.loop, "close", None)  # an --harness-exec loop's tool endpoint
        if callable(close):
            close()

    def _run(self, cell: Cell, source: Source) -> CellRun:
        self._runs += 1
        return run_cell(cell, source, self.loop, run_id=f"pytest{self._runs}-{cell.provider}")

    def _judged(
        self, run: CellRun, source: Source, how: str, cassette: Path | None = None
    ) -> Played:
        from harness.results.build import sort_findings

        cell = run.cell
        own = source.findings(cell.scenario, cell.provider, cell.stream)
        found = sort_findings(run, own, strict=self.settings.strict)
        return Played(
            run=run,
            findings=tuple(found.findings),
            warnings=tuple(found.warnings),
            drift=tuple(found.drift),
            how=how,
            cassette=cassette,
        )

    def _source(self, name: str) -> Source:
        """The session's scripted or live source, started on first use."""
        if name not in self._sources:
            from harness.sources import LiveSource, ScriptedSource

            models = dict(self.settings.models)  # [tool.harness] models
            if name == "scripted":
                self._sources[name] = ScriptedSource(self.scenarios, models)
            else:
                self._sources[name] = LiveSource(self.providers, models)
        return self._sources[name]

    def _cassette(self, cell: Cell) -> Path:
        from harness.cassettes.cassette import cassette_path

        return cassette_path(self.folder, cell.provider, cell.scenario.id, cell.stream)

    def _replay(self, cell: Cell, path: Path) -> Played:
        from harness.cassettes.source import CassetteSource

        if not path.is_file():
            raise CassetteError(
                f"{path}: no cassette for {cell.id}. Record it with --harness-record-mode once "
                "(from the emulator; add --harness-record-from live for the real API), or run "
                "with --harness-source scripted"
            )
        # One cassette source per cell: it blocks the network only while it replays, so a
        # live recording later in the same session can still reach the API.
        source = CassetteSource([(cell.scenario, cell.provider, cell.stream)], self.folder)
        try:
            return self._judged(self._run(cell, source), source, "replayed", path)
        finally:
            source.close()

    def _record(self, cell: Cell, path: Path) -> Played:
        from harness.cassettes.recorder import record_cell, save_recording

        recorder = self._source(self.settings.record_from)
        self._runs += 1
        run_id = f"pytest{self._runs}-{cell.provider}"
        prepared = record_cell(cell, recorder, self.loop, run_id, self.folder)
        assert prepared.run is not None  # record_cell always runs the cell
        saved = save_recording(prepared)
        played = self._judged(prepared.run, recorder, f"recorded ({saved.verdict})", path)
        if saved.problem is None:
            return played
        not_written = Finding(rule=NOT_WRITTEN, message=f"{path} was not written: {saved.problem}")
        return replace(played, findings=(*played.findings, not_written))


def _readable(path: Path) -> Path:
    """Relative to the current folder when inside it: cassette paths appear in messages."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path
