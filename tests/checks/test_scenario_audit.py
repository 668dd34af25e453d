"""An app outside the harness, recorded by the emulator and judged with its scenario, gets the
same findings as the same cell run in process, for every rule the wire and scenario allow.

The app is the reference loop (or a faulty one) on its own SDK clients, pointed at an
emulator's base URLs as `harness emulate` hands them out; the emulator records through the
same code as `harness emulate --record`; `harness audit --scenario`'s code judges the
cassettes; `harness.outcome.cell_findings` judges the same cell run with `--source scripted`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.cassettes.emulated import EmulateRecorder, emulated_path
from harness.commands.audit import audit_cassette
from harness.commands.common import load_all
from harness.emulator.server import Emulator
from harness.findings import Finding
from harness.loop.clients import make_clients
from harness.loop.contract import Loop, LoopCall, LoopResult
from harness.loop.reference import reference_loop
from harness.outcome import cell_findings
from harness.runner import Cell, cells, run_cell
from harness.scenario.model import Scenario
from harness.sources import ScriptedSource
from harness.tools import ToolRecorder
from tests.faulty_loops.limit import (
    closing_without_tools,
    interim_text_as_answer,
    no_closing_call,
)

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = load_all([str(ROOT / "scenarios")])
BY_ID = {s.id: s for s in LIBRARY}
MAIN_RUN = "default"
ENV_VARS = {
    "anthropic": "ANTHROPIC_BASE_URL",
    "openai": "OPENAI_BASE_URL",
    "gemini": "GOOGLE_GEMINI_BASE_URL",
}


@dataclass(frozen=True, kw_only=True)
class World:
    emulator: Emulator  # the app's emulator, recording as `harness emulate --record` does
    recorder: EmulateRecorder
    folder: Path
    source: ScriptedSource  # the in-process run's


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("emulated")
    recorder = EmulateRecorder(folder, MAIN_RUN, say=lambda line: None, idle=0)
    emulator = Emulator(LIBRARY, on_run=recorder.add).start()
    source = ScriptedSource(LIBRARY, {})
    try:
        yield World(emulator=emulator, recorder=recorder, folder=folder, source=source)
    finally:
        emulator.stop()
        source.close()


def run_as_app(emulator: Emulator, cell: Cell, loop: Loop, run: str, model: str) -> None:
    """The loop as an unmodified app would run: its own clients on the printed base URLs, its
    own tools (the scenario's results), its saved chat carried to the next message."""
    scenario = cell.scenario
    urls = emulator.base_urls(scenario.id, run)
    clients = make_clients(cell.provider, base_url=urls[cell.provider], api_key="dummy")
    tools = ToolRecorder(scenario, lambda: 0).specs()
    history = scenario.history
    for turn in scenario.messages:
        call = LoopCall(
            provider=cell.provider,
            client=clients.sync,
            async_client=clients.async_,
            base_url=urls[cell.provider],
            api_key="dummy",
            env={var: urls[p] for p, var in ENV_VARS.items()},
            model=model,
            system=scenario.system,
            history=history,
            message=turn.text,
            tools=tools,
            max_rounds=scenario.max_rounds,
            stream=cell.stream,
            request_size_limit=scenario.gemini_max_request_bytes,
        )
        result = loop(call)  # the loops here are sync, and report errors in their result
        assert isinstance(result, LoopResult)
        history = result.chat


Key = tuple[str, ...]


def _key(finding: Finding) -> Key:
    # The loop's own error text is not on the wire: an ending is compared without it.
    message = None if finding.rule == "expect.ending" else finding.message
    fields = (finding.query, finding.call, finding.path, finding.ids, message)
    return (finding.rule, *map(repr, fields), repr(finding.expected), repr(finding.actual))


def both_ways(world: World, cell: Cell, loop: Loop, name: str) -> tuple[list[Key], list[Key]]:
    """(findings of the audit, findings of the run it judged, restricted to what the audit
    judged), as comparable keys."""
    run = f"{name}-{cell.provider}-{int(cell.stream)}"
    model = world.source.model(cell.scenario, cell.provider)
    run_as_app(world.emulator, cell, loop, run, model)
    world.recorder.flush()
    path = emulated_path(world.folder, cell.provider, cell.scenario.id, cell.stream, run, MAIN_RUN)
    audit = audit_cassette(path, cell.scenario)
    assert audit.scenario is not None
    in_process = cell_findings(run_cell(cell, world.source, loop, run_id=run))
    # An API rejection is the emulator's log entry in a run (`api.E1`, …) and the recorded 4xx
    # in a cassette (`api.rejected`): each side has one exactly when the other does.
    rejected = any(f.rule.startswith("api.") for f in in_process)
    assert rejected == any(f.rule == "api.rejected" for f in audit.findings), cell.id
    judged = sorted(_key(f) for f in in_process if audit.scenario.covers(f))
    audited = sorted(_key(f) for f in audit.findings if not f.rule.startswith("api."))
    return audited, judged


def _cells(scenario: Scenario) -> list[Cell]:
    return cells([scenario])


@pytest.mark.parametrize("scenario_id", sorted(BY_ID))
def test_reference_loop_same_findings_both_ways(world: World, scenario_id: str) -> None:
    for cell in _cells(BY_ID[scenario_id]):
        audited, in_process = both_ways(world, cell, reference_loop, "ref")
        assert audited == in_process, cell.id
        assert audited == [], cell.id


FAULTY = {
    "no_closing_call": no_closing_call,
    "interim_text_as_answer": interim_text_as_answer,
    "closing_without_tools": closing_without_tools,
}


@pytest.mark.parametrize("loop_name", sorted(FAULTY))
@pytest.mark.parametrize(
    "scenario_id", ["limit_reached_pending_write", "limit_reached_parallel_pending"]
)
def test_faulty_loop_same_findings_both_ways(
    world: World, loop_name: str, scenario_id: str
) -> None:
    caught = 0
    for cell in _cells(BY_ID[scenario_id]):
        audited, in_process = both_ways(world, cell, FAULTY[loop_name], loop_name)
        assert audited == in_process, cell.id
        caught += bool(audited)
    assert caught, "the fault shows in the audit too"
