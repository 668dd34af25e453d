"""A partial run (scenario arguments, --provider, --stream, --shard) never silently replaces the
full run's report: it merges into a compatible full run's results, or writes its own report,
and says which. A project of two scenarios with their cassettes, run from its own folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from tests.conftest import ROOT, SCENARIOS

NAMES = ("one_tool_then_answer", "answer_without_tools")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "scenarios").mkdir()
    for name in NAMES:
        shutil.copy(SCENARIOS / f"{name}.yaml", tmp_path / "scenarios")
        for cassette in (ROOT / "cassettes").glob(f"*/{name}.*yaml"):
            target = tmp_path / "cassettes" / cassette.parent.name
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy(cassette, target)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def results(path: str) -> dict[str, object]:
    data: dict[str, object] = json.loads(Path(path).read_text(encoding="utf-8"))
    return data


def cell_ids(path: str) -> list[str]:
    return [c["id"] for c in results(path)["cells"]]  # type: ignore[attr-defined]


def test_a_partial_run_merges_into_the_full_run_and_says_so(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run"]) == 0
    full = cell_ids("reports/results.json")
    assert len(full) == 12
    assert "partial run" not in capsys.readouterr().out

    assert main(["run", "--provider", "gemini", "--stream", "on"]) == 0
    out = capsys.readouterr().out
    assert (
        "partial run (2 of 12 cells): merged into reports/results.json, whose other 10 cell(s) "
        "are from the earlier run (see run.parts in the results file)"
    ) in out
    assert out.rstrip().endswith(
        "wrote reports/results.json, reports/index.html, reports/junit.xml"
    )
    assert cell_ids("reports/results.json") == full
    run = results("reports/results.json")["run"]
    assert [p["cells"] for p in run["parts"]] == [12, 2]  # type: ignore[index]
    assert not (project / "reports" / "partial").exists()

    # a scenario argument naming every file is the full run, not a partial one
    assert main(["run", "scenarios/"]) == 0
    assert "partial run" not in capsys.readouterr().out
    assert results("reports/results.json")["run"]["parts"] == []  # type: ignore[index]


def test_a_partial_run_that_cannot_merge_writes_its_own_report(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--provider", "openai"]) == 0
    out = capsys.readouterr().out
    assert (
        "partial run (4 of 12 cells): wrote its own report in reports/partial/, not into "
        "reports/results.json: there is no full run there to merge into"
    ) in out
    assert len(cell_ids("reports/partial/results.json")) == 4
    assert not (project / "reports" / "results.json").exists()

    assert main(["run"]) == 0
    before = (project / "reports" / "results.json").read_bytes()
    capsys.readouterr()
    # another source: the full run's report stays as it was
    assert main(["run", "--source", "scripted", f"scenarios/{NAMES[0]}.yaml"]) == 0
    out = capsys.readouterr().out
    assert (
        "partial run (6 of 12 cells): wrote its own report in reports/partial/, not into "
        "reports/results.json: it is not a full run of this library with the same source, loop "
        "and --strict; it is left as it was"
    ) in out
    assert (project / "reports" / "results.json").read_bytes() == before
    assert results("reports/partial/results.json")["run"]["source"] == "scripted"  # type: ignore[index]


def test_a_shard_writes_its_own_folder_and_given_paths_are_used_as_given(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--shard", "2/3"]) == 0
    out = capsys.readouterr().out
    assert (
        "shard 2/3 (4 of 12 cells): wrote its own report in reports/shard-2-of-3/; merge the "
        "shards with `harness report reports/shard-*/results.json`"
    ) in out
    assert len(cell_ids("reports/shard-2-of-3/results.json")) == 4
    assert (project / "reports" / "shard-2-of-3" / "junit.xml").is_file()
    assert not (project / "reports" / "results.json").exists()

    given = ["--results", "mine/r.json", "--html", "mine/i.html", "--junit", "mine/j.xml"]
    assert main(["run", "--provider", "anthropic", *given]) == 0
    assert "partial run" not in capsys.readouterr().out
    assert len(cell_ids("mine/r.json")) == 4
    assert not (project / "reports" / "partial").exists()


def test_the_projects_report_folder_and_scenario_folder_count_as_the_defaults(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """[tool.harness] `reports` and `scenarios` are the project's defaults: a partial run
    merges into the full run there (never overwrites it), and a run naming one file of the
    settings' scenario folder is partial even without ./scenarios."""
    (project / "scenarios").rename(project / "library")
    (project / "pyproject.toml").write_text(
        '[tool.harness]\nreports = "out"\nscenarios = ["library"]\n'
    )
    assert main(["run"]) == 0
    full = cell_ids("out/results.json")
    assert len(full) == 12 and not (project / "reports").exists()
    capsys.readouterr()

    assert main(["run", "--provider", "gemini"]) == 0
    assert "partial run (4 of 12 cells): merged into out/results.json" in capsys.readouterr().out
    assert cell_ids("out/results.json") == full

    assert main(["run", "library/one_tool_then_answer.yaml"]) == 0
    assert "partial run (6 of 12 cells): merged into out/results.json" in capsys.readouterr().out
    assert cell_ids("out/results.json") == full
