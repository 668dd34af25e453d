"""The emulator's honest limits: a request past the script is answered all the same (the
script's last turn again) and noted as the scenario's limit, `script.exhausted` — a warning,
never the API's rejection (`api.*`) nor the loop's fault (L15); a turn marked
`repeat: until_limit` drives a loop of any budget with no note at all."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.emulator.script import RULE_SCRIPT_EXHAUSTED
from harness.loop.contract import LoopCall, LoopResult
from harness.loop.reference import reference_loop
from harness.outcome import query_outcome
from harness.results.build import sort_findings
from harness.runner import Cell, CellRun, run_cell
from harness.scenario import Scenario, load_scenario
from harness.scenario.model import Provider
from harness.sources import ScriptedSource
from tests.conftest import SCENARIOS
from tests.scenario.test_loader import write
from tests.scenario.test_repeat import repeating

PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai", "gemini")


def budget_of(rounds: int):  # type: ignore[no-untyped-def]
    """The reference loop with a budget of its own, whatever the scenario says."""

    def loop(call: LoopCall) -> LoopResult:
        return reference_loop(dataclasses.replace(call, max_rounds=rounds))

    return loop


def run(scenario: Scenario, provider: Provider, loop: object, stream: bool = False) -> CellRun:
    source = ScriptedSource([scenario], {})
    try:
        cell = Cell(scenario=scenario, provider=provider, stream=stream)
        return run_cell(cell, source, loop, run_id=f"limits-{provider}")  # type: ignore[arg-type]
    finally:
        source.close()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_loop_with_a_larger_budget_runs_past_the_script_and_gets_a_note(
    provider: Provider,
) -> None:
    """limit_reached_pending_read has two rounds; a loop whose own budget is 10 keeps getting
    the script's last tool turn, then its closing call the closing text."""
    scenario = load_scenario(SCENARIOS / "limit_reached_pending_read.yaml")
    cell = run(scenario, provider, budget_of(10))
    assert cell.error is None and cell.queries[0].error is None
    assert query_outcome(cell.queries[0]).rounds == 10
    assert [e.status for e in cell.exchanges] == [200] * 12
    found = sort_findings(cell, [], strict=False)
    assert {f.rule for f in found.warnings} == {RULE_SCRIPT_EXHAUSTED}
    assert "not the API's rejection" in found.warnings[0].message
    rules = {f.rule for f in found.findings}
    assert not any(r.startswith(("api.", "script.")) for r in rules), rules
    assert "L15" not in rules and "L14" not in rules  # the closing text still came back
    assert "L3" in rules  # ten rounds where the product's budget is two: the loop's own defect


def test_the_reference_loop_never_runs_past_the_script() -> None:
    scenario = load_scenario(SCENARIOS / "limit_reached_pending_read.yaml")
    cell = run(scenario, "anthropic", reference_loop)
    found = sort_findings(cell, [], strict=False)
    assert found.findings == [] and found.warnings == []


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("budget", [10, 50])
def test_one_repeating_scenario_drives_a_loop_of_any_budget(
    tmp_path: Path, provider: Provider, budget: int
) -> None:
    scenario = load_scenario(write(tmp_path, repeating(budget)))
    cell = run(scenario, provider, reference_loop, stream=budget == 10)
    found = sort_findings(cell, [], strict=False)
    assert found.findings == [] and found.warnings == []
    assert query_outcome(cell.queries[0]).rounds == budget
    assert len(cell.exchanges) == budget + 2  # every round, the limit call, the closing call


def test_a_fixed_budget_loop_on_a_repeating_scenario_is_judged_on_its_budget(
    tmp_path: Path,
) -> None:
    """The script never runs out (no note); a budget of 10 where the product says 3 is L3."""
    scenario = load_scenario(write(tmp_path, repeating(3)))
    cell = run(scenario, "gemini", budget_of(10))
    found = sort_findings(cell, [], strict=False)
    assert found.warnings == []
    assert {"L3", "expect.rounds"} <= {f.rule for f in found.findings}
