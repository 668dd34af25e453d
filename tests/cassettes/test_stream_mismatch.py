"""A loop that ignores `stream` on the cassette source (issue 11): the replay answers in the
form the request asked for — JSON folded from a recorded stream, or a stream spelled from a
recorded JSON body — with one `replay.stream_mismatch` warning for the cell, no crash, no
drift from the stream switch alone, and the same verdicts as a loop that follows `stream`."""

from __future__ import annotations

import dataclasses

import pytest

from harness.cassettes.replay import RULE_STREAM_MISMATCH
from harness.cassettes.source import CassetteSource
from harness.loop.contract import LoopCall, LoopResult
from harness.loop.reference import reference_loop
from harness.results.build import sort_findings
from harness.runner import Cell, run_cell
from harness.scenario import load_scenario
from harness.scenario.model import Provider
from tests.conftest import ROOT, SCENARIOS

PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai", "gemini")
# A chain of tool rounds, parallel requests and a closing call: every part of a reply.
SCENARIO_IDS = (
    "three_round_chain",
    "limit_reached_parallel_pending",
    "anthropic_thinking_signatures",
)


def streaming(always: bool):  # type: ignore[no-untyped-def]
    def loop(call: LoopCall) -> LoopResult:
        return reference_loop(dataclasses.replace(call, stream=always))

    return loop


def judged(scenario_id: str, provider: Provider, cell_stream: bool, loop: object):  # type: ignore[no-untyped-def]
    scenario = load_scenario(SCENARIOS / f"{scenario_id}.yaml")
    if provider not in scenario.providers:
        pytest.skip(f"{scenario_id} does not run on {provider}")
    source = CassetteSource([(scenario, provider, cell_stream)], ROOT / "cassettes")
    try:
        cell = Cell(scenario=scenario, provider=provider, stream=cell_stream)
        run = run_cell(cell, source, loop, run_id=f"mismatch-{provider}")  # type: ignore[arg-type]
        own = source.findings(scenario, provider, cell_stream)
    finally:
        source.close()
    return run, sort_findings(run, own, strict=False)


@pytest.mark.parametrize("scenario_id", SCENARIO_IDS)
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("cell_stream", [True, False], ids=["never-streams", "always-streams"])
def test_a_loop_that_ignores_stream_gets_one_notice_and_no_crash(
    scenario_id: str, provider: Provider, cell_stream: bool
) -> None:
    run, found = judged(scenario_id, provider, cell_stream, streaming(not cell_stream))
    assert run.error is None, run.error
    assert found.findings == []
    assert [f.rule for f in found.warnings] == [RULE_STREAM_MISMATCH]
    assert all(e.streamed != cell_stream for e in run.exchanges)
    following, _ = judged(scenario_id, provider, cell_stream, reference_loop)
    assert [q.answer for q in run.queries] == [q.answer for q in following.queries]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("cell_stream", [True, False])
def test_a_loop_that_follows_stream_gets_no_notice(provider: Provider, cell_stream: bool) -> None:
    _, found = judged("three_round_chain", provider, cell_stream, reference_loop)
    assert found.findings == [] and found.warnings == []
