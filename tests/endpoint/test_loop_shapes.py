"""Loop shapes a user brings: `async def` loops (CLI and library), a client kept in a module
and built at import from the SDKs' variables, and a loop whose calls never reach the endpoint
(one honest finding, never L1 or an ending mismatch)."""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace
from pathlib import Path

import pytest

from harness.cli import main
from harness.loop.contract import LoopCall, LoopResult
from harness.loop.reference import async_reference_loop, reference_loop
from harness.outcome import RULE_NO_CALL, cell_findings
from harness.runner import cells, run_cell
from harness.sources import ScriptedSource
from tests.conftest import SCENARIOS, library

ONE = str(SCENARIOS / "one_tool_then_answer.yaml")
LIMIT = str(SCENARIOS / "limit_reached_pending_write.yaml")


def reports(tmp_path: Path) -> list[str]:
    out = tmp_path / "reports"
    return [
        "--results",
        str(out / "results.json"),
        "--html",
        str(out / "index.html"),
        "--junit",
        str(out / "junit.xml"),
    ]


async def asyncio_run_per_round_loop(call: LoopCall) -> LoopResult:
    """An async loop that also hops event loops: it awaits the async reference loop in a
    fresh thread with its own `asyncio.run` (Gemini's `client.aio` must work in any loop)."""
    return await asyncio.to_thread(asyncio.run, async_reference_loop(call))


@pytest.mark.parametrize(
    "loop",
    [
        "harness.loop.reference:async_reference_loop",
        "tests.endpoint.test_loop_shapes:asyncio_run_per_round_loop",
    ],
)
def test_an_async_loop_runs_from_the_cli_on_every_provider(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], loop: str
) -> None:
    args = ["run", "--source", "scripted", ONE, LIMIT, "--loop", loop, *reports(tmp_path)]
    assert main(args) == 0, capsys.readouterr().out
    assert "12 cell(s): 12 conform" in capsys.readouterr().out


def test_a_module_level_client_built_from_the_environment_is_captured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "run",
        "--source",
        "cassette",
        "--provider",
        "anthropic",
        ONE,
        LIMIT,
        "--loop",
        "tests.endpoint.module_client_loop:run",
        *reports(tmp_path),
    ]
    assert main(args) == 0
    assert "4 cell(s): 4 conform" in capsys.readouterr().out


def elsewhere_loop(call: LoopCall) -> LoopResult:
    """Talks to a client of its own pointed at a port nobody serves."""
    import anthropic

    client = anthropic.Anthropic(base_url="http://127.0.0.1:9", api_key="k", max_retries=0)
    return reference_loop(replace(call, client=client))


def test_a_loop_whose_calls_never_reach_the_endpoint_gets_one_honest_finding() -> None:
    scenario = next(s for s in library() if s.id == "one_tool_then_answer")
    source = ScriptedSource([scenario], {})
    try:
        cell = cells([scenario], ["anthropic"], False)[0]
        run = run_cell(cell, source, elsewhere_loop, "elsewhere")
    finally:
        source.close()
    (finding,) = cell_findings(run)
    assert finding.rule == RULE_NO_CALL
    assert "no model call reached the harness endpoint" in finding.message
    assert "call.base_url" in finding.message and "Connection" in finding.message


def test_a_loop_that_calls_through_the_endpoint_has_no_such_finding() -> None:
    scenario = next(s for s in library() if s.id == "one_tool_then_answer")
    source = ScriptedSource([scenario], {})
    try:
        run = run_cell(cells([scenario], ["anthropic"], False)[0], source, reference_loop, "ok")
    finally:
        source.close()
    assert cell_findings(run) == []


def test_a_loop_module_that_raises_on_import_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken_loop_mod.py").write_text("raise RuntimeError('config missing')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    args = ["run", "--source", "scripted", ONE, "--loop", "broken_loop_mod:run", *reports(tmp_path)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "RuntimeError: config missing" in err and "broken_loop_mod.py:1" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("source", ["scripted", "cassette"])
def test_the_async_example_runs_clean_on_the_whole_library(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str
) -> None:
    args = ["run", "--source", source, "--loop", "examples.async_loop:run", *reports(tmp_path)]
    assert main(args) == 0
    summary = re.search(r"(\d+) cell\(s\): (\d+) conform, 0 with findings", capsys.readouterr().out)
    assert summary and summary[1] == summary[2] and int(summary[1]) >= 80
