"""examples/mcp_agent.py — an agent whose tools come from the harness's MCP endpoint, talking
to Claude with the official SDK — runs clean under `harness run --exec` on library scenarios
(one tool, parallel requests, the budget spent with a write pending; scripted and cassettes,
JSON and stream), its tool calls in the log the checks read."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from harness.cli import main
from tests.conftest import ROOT, SCENARIOS

AGENT = f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'examples' / 'mcp_agent.py'))}"


@pytest.mark.parametrize(
    ("source", "scenarios"),
    [
        ("scripted", ["one_tool_then_answer", "limit_reached_pending_write"]),
        ("cassette", ["parallel_requests_one_turn"]),
    ],
)
def test_the_mcp_agent_runs_clean(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    source: str,
    scenarios: list[str],
) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "reports"
    files = [str(SCENARIOS / f"{name}.yaml") for name in scenarios]
    reports = ["--results", str(out / "results.json"), "--html", str(out / "index.html")]
    reports += ["--junit", str(out / "junit.xml")]
    code = main(
        ["run", "--source", source, "--provider", "anthropic", *files, "--exec", AGENT, *reports]
    )
    printed = capsys.readouterr()
    assert code == 0, printed.out + printed.err
    cells = json.loads((out / "results.json").read_text())["cells"]
    assert len(cells) == 2 * len(scenarios)
    assert all(cell["tool_runs"] for cell in cells)  # its MCP calls are in the tool log
    if "limit_reached_pending_write" in scenarios:  # its pending write was answered, not run
        assert any(cell["verdicts"].get("L11") == "pass" for cell in cells)
