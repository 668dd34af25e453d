"""Any client is judged the same: the reference loop, the same loop on the async clients, a
loop that builds its own SDK client from the connection details, and a loop that speaks raw
HTTP with httpx give the same trace and the same verdicts — on the scripted and the cassette
source, JSON and stream, all three providers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from harness.cassettes.source import CassetteSource
from harness.loop.contract import Loop, LoopCall, LoopResult
from harness.loop.reference import async_reference_loop, reference_loop
from harness.outcome import cell_findings, cell_verdicts
from harness.runner import CellRun, cells, run_cell
from harness.sources import ScriptedSource, Source
from harness.trace.parse import parse_trace
from tests.conftest import ROOT, library
from tests.endpoint.raw_loop import raw_http_loop

SCENARIOS = [
    s for s in library() if s.id in ("one_tool_then_answer", "limit_reached_pending_write")
]
CELLS = cells(SCENARIOS)


def own_client_loop(call: LoopCall) -> LoopResult:
    """Builds its own official client from `call.base_url` and `call.api_key` (as a framework
    does), with the SDK's own HTTP client."""
    if call.provider == "anthropic":
        import anthropic

        client: Any = anthropic.Anthropic(base_url=call.base_url, api_key=call.api_key)
    elif call.provider == "openai":
        import openai

        client = openai.OpenAI(base_url=call.base_url, api_key=call.api_key)
    else:
        from google import genai
        from google.genai import types

        options = types.HttpOptions(base_url=call.base_url)
        client = genai.Client(api_key=call.api_key, http_options=options)
    return reference_loop(replace(call, client=client))


LOOPS: dict[str, Loop] = {
    "reference": reference_loop,
    "async": async_reference_loop,
    "own_client": own_client_loop,
    "raw_httpx": raw_http_loop,
}


def summary(run: CellRun) -> tuple[Any, ...]:
    """What the checks judge. A client's own spelling (key order, field aliases, how many
    bytes and so tokens a request takes) is not part of it."""
    calls = parse_trace(run.exchanges).calls
    return (
        [neutral(c) for c in calls],
        [(q.answer, q.error) for q in run.queries],
        cell_verdicts(run),
        [f.rule for f in cell_findings(run)],
    )


def neutral(call: Any) -> Any:
    request = replace(call.request, size_bytes=0, extra={})
    return replace(call, url="", request=request, response=replace(call.response, usage={}))


@pytest.fixture(scope="module", params=["scripted", "cassette"])
def source(request: pytest.FixtureRequest) -> Iterator[Source]:
    made: Source
    if request.param == "scripted":
        made = ScriptedSource(SCENARIOS, {})
    else:
        made = CassetteSource(
            [(c.scenario, c.provider, c.stream) for c in CELLS], ROOT / "cassettes"
        )
    yield made
    made.close()


@pytest.mark.parametrize("cell", CELLS, ids=[c.id for c in CELLS])
def test_every_client_shape_gives_the_same_trace_and_verdicts(source: Source, cell: Any) -> None:
    runs = {
        name: run_cell(cell, source, loop, f"{name}-{cell.provider}")
        for name, loop in LOOPS.items()
    }
    reference = runs["reference"]
    assert reference.exchanges and not cell_findings(reference)
    for name, run in runs.items():
        assert summary(run) == summary(reference), name
