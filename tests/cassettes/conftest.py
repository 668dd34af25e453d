"""Recording and replaying cells for the cassette tests: through the real SDKs, the reference
loop, the emulator (recording) and the replay transport (replay), never a mock."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.cassettes.files import write_atomic
from harness.cassettes.recorder import Prepared, record_cell
from harness.cassettes.source import CassetteSource
from harness.findings import Finding
from harness.loop.contract import Loop
from harness.loop.reference import reference_loop
from harness.runner import Cell, CellRun, cells, run_cell
from harness.scenario import Scenario, load_scenario
from harness.sources import ScriptedSource
from tests.conftest import SCENARIOS

# One scenario per situation a cassette must carry: one call, parallel calls, the step limit
# with pending calls, thinking signatures, encrypted reasoning, Gemini calls without ids, two
# user messages (the chat saved by query 1 is the history of query 2).
ROUND_TRIP = (
    "one_tool_then_answer",
    "parallel_requests_one_turn",
    "limit_reached_parallel_pending",
    "anthropic_thinking_signatures",
    "openai_reasoning_across_rounds",
    "gemini_calls_without_ids",
    "two_user_messages_fresh_budget",
)


def scenarios(ids: Iterable[str]) -> list[Scenario]:
    return [load_scenario(SCENARIOS / f"{i}.yaml") for i in ids]


def record(
    folder: Path, chosen: Sequence[Cell], loop: Loop = reference_loop
) -> dict[str, Prepared]:
    """Record `chosen` from the emulator into `folder`; every run must be clean."""
    by_id = {c.scenario.id: c.scenario for c in chosen}
    source = ScriptedSource(list(by_id.values()), {})
    out: dict[str, Prepared] = {}
    try:
        for number, cell in enumerate(chosen, 1):
            prepared = record_cell(cell, source, loop, f"rec{number}", folder)
            assert prepared.text is not None, f"{cell.id}: {prepared.problem}"
            write_atomic(prepared.path, prepared.text)
            out[cell.id] = prepared
    finally:
        source.close()
    return out


@dataclass(frozen=True, kw_only=True)
class Replayed:
    run: CellRun
    findings: list[Finding]  # the source's own (drift, missing, unused)


def replay(
    folder: Path, chosen: Sequence[Cell], loop: Loop = reference_loop
) -> dict[str, Replayed]:
    source = CassetteSource([(c.scenario, c.provider, c.stream) for c in chosen], folder)
    out: dict[str, Replayed] = {}
    try:
        for number, cell in enumerate(chosen, 1):
            run = run_cell(cell, source, loop, f"play{number}")
            own = source.findings(cell.scenario, cell.provider, cell.stream)
            out[cell.id] = Replayed(run=run, findings=own)
    finally:
        source.close()
    return out


@dataclass(frozen=True, kw_only=True)
class Library:
    folder: Path
    cells: list[Cell]
    recorded: dict[str, Prepared]


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Library:
    """The ROUND_TRIP scenarios on every provider they run on, streamed and not, recorded."""
    folder = tmp_path_factory.mktemp("cassettes")
    chosen = cells(scenarios(ROUND_TRIP))
    return Library(folder=folder, cells=chosen, recorded=record(folder, chosen))


def cell_of(lib: Library, scenario_id: str, provider: str, stream: bool) -> Cell:
    return next(
        c
        for c in lib.cells
        if c.scenario.id == scenario_id and c.provider == provider and c.stream == stream
    )


@pytest.fixture(autouse=True)
def _private_parse_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tests never read or fill the developer's cassette parse cache."""
    monkeypatch.setenv(
        "HARNESS_CASSETTE_CACHE", str(tmp_path_factory.getbasetemp() / "parse-cache")
    )
