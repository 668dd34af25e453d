"""The README's loop-contract example is real code: it runs and conforms."""

from __future__ import annotations

import os
import re
import socket
import subprocess
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
    assert "pytest" in blocks[1] and "'.[test,frameworks]'" in blocks[1]
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


def _emulator_startups() -> list[str]:
    """The README's emulator start-up lines: each shell block of the emulator section that
    starts `harness emulate`, up to the line that sources the variables."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## The emulator", 1)[1].split("\n## ", 1)[0]
    blocks = [b for b in re.findall(r"```sh\n(.*?)```", section, re.S) if "harness emulate" in b]
    lines = [b.splitlines() for b in blocks]
    return [
        "\n".join(block[: next(i for i, x in enumerate(block) if ". ./emulator.env" in x) + 1])
        for block in lines
    ]


def _run_startup(snippet: str, port: int, folder: Path) -> subprocess.CompletedProcess[str]:
    """The snippet with bash in `folder` (scenarios linked in), on `port`; it then prints the
    Anthropic base URL it sourced and stops the emulator it started."""
    (folder / "scenarios").symlink_to(ROOT / "scenarios")
    script = re.sub(r"harness emulate (\S+)", rf"harness emulate \1 --port {port}", snippet)
    script = script.replace("--port 8765 ", "")
    script += (
        '\nstatus=$?; echo "url=$ANTHROPIC_BASE_URL"; kill $! 2>/dev/null; wait; exit $status\n'
    )
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return subprocess.run(
        ["bash", "-c", script],
        cwd=folder,
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=90,  # the snippet's own bound is 30 s; a wait that never ends fails here
        check=False,
    )


def test_readme_emulator_snippets_are_the_start_up_lines() -> None:
    snippets = _emulator_startups()
    assert len(snippets) == 2
    assert all("kill -0 $!" in s and "seq 300" in s for s in snippets)


@pytest.mark.parametrize("block", [0, 1], ids=["emulate", "emulate-record"])
def test_readme_emulator_snippet_sources_the_lines(tmp_path: Path, block: int) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = _run_startup(_emulator_startups()[block], port, tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"url=http://127.0.0.1:{port}/s/" in done.stdout


@pytest.mark.parametrize("block", [0, 1], ids=["emulate", "emulate-record"])
def test_readme_emulator_snippet_stops_when_the_port_is_taken(tmp_path: Path, block: int) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = _run_startup(_emulator_startups()[block], taken.getsockname()[1], tmp_path)
    assert done.returncode != 0
    assert "Address already in use" in done.stderr and "url=\n" in done.stdout
