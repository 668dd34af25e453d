"""`harness report` as a user runs it — help, the views it writes, exit codes, and one clear
line with exit 2 for every bad input — and the views `harness run` writes after its cells."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.cli import main
from harness.results import read_results, write_results
from tests.results.runs import broken_results, real_results

ROOT = Path(__file__).resolve().parents[2]


def test_help_reads_well(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["report", "--help"])
    assert caught.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps to the terminal
    assert out.startswith(
        "usage: harness report [-h] [--results PATH] [--html PATH] [--junit PATH] [--previous"
    )
    for text in (
        "RESULTS",
        "self-contained",
        "what changed",
        "examples:",
        "harness report reports/results.json --previous",
        "(default: reports/index.html)",
        "Exit codes: 0 every cell conforms, 1 findings, 2",
    ):
        assert text in out, text


def test_report_is_listed_in_the_command_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "report" in capsys.readouterr().out


def test_writes_html_and_junit_and_a_summary_exit_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = write_results(real_results(), tmp_path / "results.json")
    html, junit = tmp_path / "out" / "index.html", tmp_path / "out" / "junit.xml"
    assert main(["report", str(results), "--html", str(html), "--junit", str(junit)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("18 cell(s): 18 conform, 0 with findings")
    assert out.rstrip().endswith(f"wrote {html}, {junit}")
    assert "harness compatibility report" in html.read_text(encoding="utf-8")
    assert ET.parse(junit).getroot().get("tests") == "18"


def test_findings_exit_1_and_previous_adds_what_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = write_results(broken_results(), tmp_path / "now.json")
    previous = write_results(real_results(), tmp_path / "before.json")
    html = tmp_path / "index.html"
    code = main(["report", str(results), "--previous", str(previous), "--html", str(html)])
    assert code == 1
    assert "6 with findings" in capsys.readouterr().out
    assert '<section id="changes">' in html.read_text(encoding="utf-8")


def test_default_html_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = write_results(real_results(), tmp_path / "results.json")
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(results)]) == 0
    assert (tmp_path / "reports" / "index.html").is_file()
    assert not (tmp_path / "reports" / "junit.xml").exists()  # JUnit only when asked


def _bad_files(folder: Path) -> dict[str, tuple[Path, str]]:
    corrupt = folder / "corrupt.json"
    corrupt.write_text('{"schema": "harness-results", "cells": [', encoding="utf-8")
    other = folder / "other.json"
    data = json.loads((write_results(real_results(), folder / "good.json")).read_text())
    other.write_text(json.dumps({**data, "schema_version": 2}), encoding="utf-8")
    return {
        "missing": (folder / "nope.json", "no such results file"),
        "corrupt": (corrupt, "not valid JSON"),
        "version": (other, "results schema version 2"),
        "folder": (folder, "is a folder"),
    }


@pytest.mark.parametrize("case", ["missing", "corrupt", "version", "folder"])
@pytest.mark.parametrize("where", ["results", "previous"])
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, where: str
) -> None:
    bad, expected = _bad_files(tmp_path)[case]
    good = str(tmp_path / "good.json")
    html = str(tmp_path / "index.html")
    argv = [str(bad)] if where == "results" else [good, "--previous", str(bad)]
    assert main(["report", *argv, "--html", html]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and captured.out == ""
    assert captured.err.startswith(f"harness report: error: {bad}: ") and expected in captured.err
    assert not Path(html).exists()  # nothing written


def test_missing_argument_is_usage_error_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["report"])
    assert caught.value.code == 2
    assert "the following arguments are required: RESULTS" in capsys.readouterr().err


def test_read_back_what_run_would_write(tmp_path: Path) -> None:
    path = write_results(broken_results(), tmp_path / "results.json")
    assert read_results(path) == broken_results()


def test_run_writes_results_html_and_junit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    paths = {"--results": out / "r.json", "--html": out / "r.html", "--junit": out / "j.xml"}
    previous = write_results(real_results(), tmp_path / "before.json")
    argv = ["run", "--source", "scripted", "--provider", "openai", "--stream", "off"]
    argv += [str(ROOT / "scenarios" / "limit_reached_pending_write.yaml")]
    argv += [x for option, path in paths.items() for x in (option, str(path))]
    assert main([*argv, "--previous", str(previous)]) == 0
    results = read_results(paths["--results"])
    (cell,) = results.cells
    assert cell.id == "limit_reached_pending_write[openai]" and cell.verdict == "pass"
    assert results.run.source == "scripted" and results.run.loop == "reference"
    assert cell.verdicts["L12"] == "pass"
    html = paths["--html"].read_text(encoding="utf-8")
    assert '<section id="changes">' in html and "limit_reached_pending_write[openai]" in html
    assert ET.parse(paths["--junit"]).getroot().get("tests") == "1"
    assert f"wrote {paths['--results']}, {paths['--html']}, {paths['--junit']}" in (
        capsys.readouterr().out
    )


def test_run_with_a_bad_previous_stops_before_any_cell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "r.json"
    argv = ["run", "--source", "scripted", "--results", str(results)]
    assert main([*argv, "--previous", str(tmp_path / "nope.json")]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "no such results file" in captured.err
    assert not results.exists()


def test_run_help_names_the_outputs(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for text in (
        "--results PATH where to write the run's results file (default: reports/results.json)",
        "(default: reports/index.html)",
        "(default: reports/junit.xml)",
        "--previous FILE",
    ):
        assert text in out, text


def test_an_unwritable_output_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = write_results(real_results(), tmp_path / "results.json")
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    html = blocker / "index.html"
    assert main(["report", str(results), "--html", str(html)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"harness report: error: {html}: cannot write")
