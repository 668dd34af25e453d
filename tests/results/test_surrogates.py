"""A lone surrogate in what a loop returns (or a model sent as a `\\ud800` escape) cannot be
UTF-8: the run still writes every report, showing it as the text `\\ud800`, and the results file
reads back."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.loop.contract import LoopCall, LoopResult
from harness.loop.reference import reference_loop
from harness.results import read_results
from tests.conftest import SCENARIOS


def surrogate_loop(call: LoopCall) -> LoopResult:
    result = reference_loop(call)
    return LoopResult(answer=result.answer + " \ud800", chat=result.chat, error="broken \udfff")


def test_a_lone_surrogate_is_written_visibly_and_reads_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    code = main(
        [
            "run",
            "--source",
            "scripted",
            "--provider",
            "anthropic",
            "--stream",
            "off",
            str(SCENARIOS / "answer_without_tools.yaml"),
            "--loop",
            "tests.results.test_surrogates:surrogate_loop",
            "--results",
            str(reports / "results.json"),
            "--html",
            str(reports / "index.html"),
            "--junit",
            str(reports / "junit.xml"),
        ]
    )
    assert code == 1  # the loop reported an error: a finding, not a crash
    for name in ("results.json", "index.html", "junit.xml"):
        text = (reports / name).read_text("utf-8")
        assert "\\ud800" in text or "\\udfff" in text, name
    results = read_results(reports / "results.json")
    assert "\\udfff" in str(results)
    assert "Traceback" not in capsys.readouterr().err
