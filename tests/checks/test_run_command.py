"""`harness run` shows each cell's findings (rule checks included) and exits 1 when any
check fails, 0 when every cell conforms."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from tests.conftest import SCENARIOS

SCENARIO = str(SCENARIOS / "one_tool_then_answer.yaml")
ONE_CELL = ["run", "--source", "scripted", "--provider", "gemini", "--stream", "off", SCENARIO]


@pytest.fixture(autouse=True)
def _reports_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run writes its reports under ./reports: the test's own folder, never the
    repository's reports/."""
    monkeypatch.chdir(tmp_path)


def test_a_conforming_loop_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(ONE_CELL) == 0
    captured = capsys.readouterr()
    assert "ok" in captured.err and "1 conform, 0 with findings" in captured.out


def test_a_rule_finding_is_shown_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*ONE_CELL, "--loop", "tests.checks.loops:shouting_loop"]) == 1
    err = capsys.readouterr().err
    assert "1 finding(s)" in err
    assert "L2 at call 2: the answer handed back is not the text of the reply" in err
