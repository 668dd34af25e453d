"""The README's loop-contract example is real code: it runs and conforms."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from harness.outcome import cell_findings
from harness.runner import REFERENCE_LOOP as REFERENCE
from harness.runner import cells, load_loop, run_cells
from harness.sources import ScriptedSource
from tests.conftest import ROOT, library


def test_readme_opens_with_the_two_commands() -> None:
    head = (ROOT / "README.md").read_text().split("## ")[0]
    blocks = re.findall(r"```sh\n(.*?)```", head, re.S)
    assert len(blocks) == 2
    assert "harness run" in blocks[0] and "pip install" in blocks[0]
    assert "pytest" in blocks[1] and "'.[test]'" in blocks[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert blocks[1].strip() in ci


@pytest.mark.parametrize(("block", "stream"), [(0, False), (1, None)], ids=["sync", "async"])
def test_readme_contract_examples_run_and_conform(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int, stream: bool | None
) -> None:
    """The sync example (JSON calls) and the async one (JSON and stream) on Anthropic."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## The loop contract", 1)[1].split("\n## ", 1)[0]
    code = re.findall(r"```python\n(.*?)```", section, re.S)[block]
    name = f"readme_loop_{block}"
    (tmp_path / f"{name}.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(name, None)
    loop = load_loop(f"{name}:run")
    scenarios = library()
    source = ScriptedSource(scenarios, {})
    try:
        runs = list(
            run_cells(cells(scenarios, providers=["anthropic"], stream=stream), source, loop)
        )
    finally:
        source.close()
    assert runs
    for run in runs:
        assert cell_findings(run) == [], run.cell.id


def test_readme_rules_table_lists_the_whole_catalogue() -> None:
    from harness.checks import catalogue

    text = (ROOT / "README.md").read_text()
    rows = re.findall(r"^\| `([^`]+)` \|", text.split("## The rules and the checks", 1)[1], re.M)
    assert [c.id for c in catalogue()] == rows[: len(catalogue())]


def test_readme_scenario_example_is_a_valid_scenario(tmp_path: Path) -> None:
    from harness.scenario import load_scenario

    section = (ROOT / "README.md").read_text().split("## Scenarios", 1)[1]
    example = re.findall(r"```yaml\n(.*?)```", section, re.S)[0]
    path = tmp_path / "readme_example.yaml"
    path.write_text(example)
    scenario = load_scenario(path)
    assert scenario.messages[0].expect.ending == "step_limit"


def test_readme_scenario_example_conforms_on_every_provider(tmp_path: Path) -> None:
    from harness.scenario import load_scenario

    section = (ROOT / "README.md").read_text().split("## Scenarios", 1)[1]
    path = tmp_path / "readme_example.yaml"
    path.write_text(re.findall(r"```yaml\n(.*?)```", section, re.S)[0])
    scenario = load_scenario(path)
    source = ScriptedSource([scenario], {})
    try:
        runs = list(run_cells(cells([scenario]), source, load_loop(REFERENCE)))
    finally:
        source.close()
    assert len(runs) == 6
    for run in runs:
        assert cell_findings(run) == [], run.cell.id
