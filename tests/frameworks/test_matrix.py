"""Every discovered framework configuration, on each of its providers, over the CI scenarios
(stream off): the verdict and rule ids must equal the committed docs/frameworks/matrix.json, so
a framework upgrade that changes behaviour fails here and shows in the report's What changed.
Then the generator itself (what changed, the tables, the prose) on small inputs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from importlib import metadata
from pathlib import Path

import pytest

from examples.frameworks.base import Config, Framework
from examples.frameworks.matrix import (
    ConfigInfo,
    FrameworkInfo,
    Matrix,
    MatrixCell,
    overview_table,
    read_matrix,
    rule_table,
    what_changed,
    write_matrix,
)
from examples.frameworks.report import CI_SCENARIOS, Ran, kept_from, main, versions, write_html
from examples.frameworks.summary import headlines, summary_markdown
from harness.errors import HarnessError
from harness.scenario.model import Provider
from tests.frameworks import support
from tests.frameworks.overlap import patient_if_overlapping


@pytest.fixture(scope="module", autouse=True)
def _close_source() -> Iterator[None]:
    yield
    support.close_source()


def _ci_params() -> list[pytest.ParameterSet]:
    return [
        pytest.param(
            fw.name, cfg.name, provider, scenario, id=f"{fw.name}-{cfg.name}-{provider}-{scenario}"
        )
        for fw, cfg, provider, scenario in support.ci_cells()
    ]


@pytest.mark.parametrize(("framework", "config", "provider", "scenario"), _ci_params())
def test_a_cell_behaves_as_the_committed_matrix_says(
    framework: str, config: str, provider: Provider, scenario: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = support.committed_matrix().cell((framework, config, provider, scenario, False))
    patient_if_overlapping(monkeypatch, expected.rules if expected else ())
    _, got = support.ran(framework, config, provider, scenario)
    assert expected is not None, f"{got.label()} is not in matrix.json: {support.REGENERATE}"
    assert (got.verdict, got.rules) == (expected.verdict, expected.rules), (
        f"{got.label()}: matrix.json says {expected.verdict} {list(expected.rules)}, the run "
        f"gives {got.verdict} {list(got.rules)}. {support.REGENERATE}"
    )


def test_every_discovered_configuration_has_its_cells_in_the_matrix() -> None:
    matrix = support.committed_matrix()
    missing = [
        f"{fw.name} {cfg.name} {provider} {scenario.id}"
        for fw in support.FRAMEWORKS
        for cfg in fw.configs
        for provider in cfg.providers
        for scenario in support.SCENARIOS.values()
        if provider in scenario.providers
        and matrix.cell((fw.name, cfg.name, provider, scenario.id, False)) is None
    ]
    assert not missing, f"{len(missing)} cells not in matrix.json, e.g. {missing[:3]}: " + (
        support.REGENERATE
    )


def test_the_matrix_names_the_installed_framework_versions() -> None:
    matrix = support.committed_matrix()
    for fw in support.FRAMEWORKS:
        info = next((f for f in matrix.frameworks if f.name == fw.name), None)
        assert info is not None, f"{fw.name} is not in matrix.json: {support.REGENERATE}"
        assert dict(info.versions) == versions(fw), support.REGENERATE


def test_the_ci_scenarios_are_in_the_library() -> None:
    assert set(CI_SCENARIOS) <= set(support.SCENARIOS)


# ---- the generator on small inputs ------------------------------------------------------------


def _cell(provider: str, scenario: str, *rules: str, config: str = "defaults") -> MatrixCell:
    return MatrixCell(
        framework="toy",
        config=config,
        provider=provider,
        scenario=scenario,
        stream=False,
        verdict="fail" if rules else "pass",
        rules=tuple(sorted(rules)),
        endings=("error",) if "L15" in rules else ("answer",),
    )


def _matrix(*cells: MatrixCell, version: str = "1.0") -> Matrix:
    configs = tuple(
        ConfigInfo(name=n, loop=f"toy:{n}", summary=f"{n} setup", providers=("anthropic", "openai"))
        for n in ("defaults", "conforming")
    )
    return Matrix(
        command="python -m examples.frameworks.report",
        sdk_versions={"anthropic": "2.0"},
        rules={
            "L3": "Round budget",
            "L11": "Pending requests answered",
            "L15": "No broken endings",
            "expect": "Expectations",
        },
        scenarios=("one_tool", "limit"),
        limit_scenarios=("limit",),
        frameworks=(FrameworkInfo(name="toy", versions={"toy-dist": version}, configs=configs),),
        cells=cells,
    )


BEFORE = _matrix(
    _cell("anthropic", "one_tool"),
    _cell("anthropic", "limit", "L3", "L11", "L15", "expect.ending"),
    _cell("openai", "one_tool", "openai.store_false"),
    _cell("anthropic", "one_tool", config="conforming"),
)


def test_what_changed_on_a_first_generation() -> None:
    assert what_changed(None, BEFORE) == [
        "- First generation: no previous matrix.json to compare with."
    ]


def test_what_changed_when_nothing_did() -> None:
    assert what_changed(BEFORE, BEFORE) == [
        "- Nothing: every cell has the same verdict and rules as before."
    ]


def test_what_changed_names_versions_then_changed_added_and_removed_cells() -> None:
    cells = list(BEFORE.cells)
    cells[1] = _cell("anthropic", "limit", "L3", "L15")  # L11 and expect.ending fixed
    cells[2] = _cell("openai", "limit", "L3")  # one_tool no longer run, limit new
    after = replace(_matrix(*cells, version="1.1"), sdk_versions={"anthropic": "2.1"})
    assert what_changed(BEFORE, after) == [
        "- anthropic: 2.0 → 2.1",
        "- toy-dist: 1.0 → 1.1",
        "- toy defaults limit[anthropic]: breaks L11, L15, L3, expect.ending → breaks L15, L3",
        "- toy defaults limit[openai]: new cell, breaks L3",
        "- toy defaults one_tool[openai]: no longer run",
    ]


def test_the_overview_counts_conforming_cells_and_names_the_broken_rules_in_order() -> None:
    assert overview_table(BEFORE) == [
        "| framework | configuration | anthropic | openai |",
        "| --- | --- | --- | --- |",
        "| toy | defaults | 1/2 conform · breaks L3 L11 L15 expect | "
        "0/1 conform · breaks openai.store_false |",
        "| toy | conforming | 1/1 conform | not run |",
    ]


def test_the_rule_table_marks_each_rule_per_configuration_and_provider() -> None:
    table = rule_table(BEFORE, BEFORE.frameworks[0])
    assert table[0] == (
        "| rule | defaults · anthropic | defaults · openai | conforming · anthropic | "
        "conforming · openai |"
    )
    rows = {line.split(" | ")[0].removeprefix("| "): line for line in table[2:]}
    assert rows["L3 Round budget"].endswith("| ✗ 1 | ✓ | ✓ | – |")
    assert rows["expect Expectations"].endswith("| ✗ 1 | ✓ | ✓ | – |")
    # a rule outside the catalogue still gets its row
    assert rows["openai.store_false "].endswith("| ✓ | ✗ 1 | ✓ | – |")


def test_the_headlines_split_ordinary_scenarios_from_the_step_limit() -> None:
    assert headlines(BEFORE, BEFORE.frameworks[0]) == [
        "- **toy**",
        "  - defaults (1/3 cells conform): without a step limit breaks openai.store_false "
        "(1/2); at the step limit breaks L3 (1/1), L11 (1/1), L15 (1/1), expect (1/1), ending "
        "in an error (1/1).",
        "  - conforming (1/1 cells conform): without a step limit no finding (1 cells).",
    ]


def test_the_summary_holds_versions_tables_changes_and_the_command() -> None:
    text = summary_markdown(BEFORE, ["- Nothing changed."])
    for part in (
        "| toy-dist | 1.0 |",
        "over the scenario library, non-streaming;",
        "## Headline results",
        "| toy | defaults |",
        "## toy",
        "- `defaults` (`toy:defaults`): defaults setup",
        "## What changed",
        "- Nothing changed.",
        "python -m examples.frameworks.report",
    ):
        assert part in text


def test_the_matrix_file_round_trips(tmp_path: Path) -> None:
    path = write_matrix(BEFORE, tmp_path / "matrix.json")
    assert read_matrix(path) == BEFORE
    assert read_matrix(tmp_path / "absent.json") is None


def test_a_broken_matrix_file_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "matrix.json"
    path.write_text(json.dumps({"cells": []}), encoding="utf-8")
    with pytest.raises(HarnessError, match=r"matrix.json: not a framework matrix .*regenerate"):
        read_matrix(path)


def test_an_unknown_framework_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--framework", "no-such-framework", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--framework 'no-such-framework'" in err[0]
    assert not (tmp_path / "matrix.json").exists()


def test_a_missing_framework_package_is_a_clear_error() -> None:
    ghost = Framework(
        name="ghost",
        packages=("surely-not-an-installed-distribution",),
        configs=(Config(name="defaults", loop="x:y", summary="", providers=("anthropic",)),),
    )
    with pytest.raises(HarnessError, match=r"ghost needs surely-not-an-installed-distribution"):
        versions(ghost)
    assert metadata.version("pydantic-ai-slim")  # the real ones are installed


def test_rerunning_one_framework_keeps_the_others_cells() -> None:
    other = replace(BEFORE.frameworks[0], name="other", versions={"other-dist": "3.0"}, configs=())
    kept_cell = replace(BEFORE.cells[0], framework="other")
    previous = replace(
        BEFORE, frameworks=(other, *BEFORE.frameworks), cells=(kept_cell, *BEFORE.cells)
    )
    rerun = replace(BEFORE, cells=BEFORE.cells[:1])
    merged = kept_from(previous, rerun)
    assert [f.name for f in merged.frameworks] == ["other", "toy"]
    assert merged.cells == (kept_cell, BEFORE.cells[0])


def test_the_readme_links_the_report_and_names_the_framework_versions() -> None:
    readme = (support.ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Agent frameworks", 1)[1].split("\n## ", 1)[0]
    assert "(docs/frameworks/README.md)" in section
    for info in support.committed_matrix().frameworks:
        for name, version in info.versions.items():
            assert f"{name} {version}" in section, f"README: headline results of {name} {version}"


def test_the_html_report_holds_the_failing_ci_cells_only(tmp_path: Path) -> None:
    fw = support.framework("pydantic-ai")
    cfg = support.config("pydantic-ai", "defaults")
    failing, failing_cell = support.ran(
        fw.name, cfg.name, "anthropic", "limit_reached_pending_write"
    )
    passing, passing_cell = support.ran(fw.name, cfg.name, "anthropic", "one_tool_then_answer")
    assert failing_cell.rules and not passing_cell.rules
    ran = Ran(cells=(failing_cell, passing_cell), judged=(failing, passing))
    name = write_html(fw, cfg, ran, tmp_path)
    assert name == "html/pydantic-ai-defaults.html"
    page = (tmp_path / name).read_text(encoding="utf-8")
    assert "limit_reached_pending_write[anthropic]" in page
    assert "one_tool_then_answer[anthropic]" not in page
    clean = Ran(cells=(passing_cell,), judged=(passing,))
    assert write_html(fw, cfg, clean, tmp_path / "clean") is None


def test_jobs_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--jobs", "0"]) == 2
    assert "--jobs takes a positive number" in capsys.readouterr().err
