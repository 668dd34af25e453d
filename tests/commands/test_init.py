"""`harness init`: what it writes, what it refuses to overwrite (nothing is written then), how
it adds `[tool.harness]` to an existing pyproject.toml, and that the stub loop it writes
conforms on the starter scenarios for every provider (scripted, in process). The end-to-end
run on a fresh venv is `test_init_fresh_venv.py`."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from harness import __version__
from harness.cli import main
from harness.loop import LoopCall, LoopResult
from harness.settings import load_settings

SCAFFOLD = [
    ".github/workflows/harness.yml",
    "agent.py",
    "pyproject.toml",
    "scenarios/limit_reached_pending_write.yaml",
    "scenarios/one_tool_then_answer.yaml",
]


def files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_init_writes_the_scaffold_and_prints_the_next_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", str(tmp_path / "app")]) == 0
    assert files(tmp_path / "app") == SCAFFOLD
    out = capsys.readouterr().out
    steps = out[out.index("Next:") :].splitlines()
    assert steps[1].strip() == f"cd {tmp_path / 'app'}"
    assert steps[2].strip().startswith("harness record --source scripted")
    assert steps[3].strip().startswith("harness run --strict")
    assert steps[4].strip().startswith("git add pyproject.toml agent.py scenarios cassettes")
    settings = load_settings(tmp_path / "app")
    assert (settings.loop, settings.stream) == ("agent:run", "off")
    assert settings.cassettes == tmp_path / "app" / "cassettes"
    workflow = yaml.safe_load((tmp_path / "app" / WORKFLOW).read_text())
    commands = [step.get("run", "") for step in workflow["jobs"]["replay"]["steps"]]
    assert f'harness=={__version__}"' in commands[2]
    assert commands[3] == "harness run --strict"  # replay only: recording is not CI's job
    assert not any("record" in c for c in commands)


WORKFLOW = ".github/workflows/harness.yml"


def test_in_the_current_folder_there_is_no_cd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    out = capsys.readouterr().out
    assert files(tmp_path) == SCAFFOLD and "cd " not in out


@pytest.mark.parametrize("taken", ["agent.py", "scenarios/one_tool_then_answer.yaml", WORKFLOW])
def test_an_existing_file_is_never_overwritten_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], taken: str
) -> None:
    (tmp_path / taken).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / taken).write_text("mine\n")
    assert main(["init", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{tmp_path / taken} already exist(s); nothing was written" in err
    assert len(err.splitlines()) == 1
    assert files(tmp_path) == [taken] and (tmp_path / taken).read_text() == "mine\n"


def test_an_existing_pyproject_gets_the_block_appended(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = '[project]\nname = "app"\n\n[tool.ruff]\nline-length = 99'  # no final newline
    (tmp_path / "pyproject.toml").write_text(mine)
    assert main(["init", str(tmp_path)]) == 0
    assert f"appended to {tmp_path / 'pyproject.toml'}" in capsys.readouterr().out
    text = (tmp_path / "pyproject.toml").read_text()
    assert text.startswith(mine + "\n\n[tool.harness]\n")
    assert load_settings(tmp_path).loop == "agent:run"


@pytest.mark.parametrize(
    ("pyproject", "says"),
    [
        ('[tool.harness]\nstream = "on"\n', "already has [tool.harness]; nothing was written"),
        ("tool = {ruff = {line-length = 99}}\n", "appended to it would not be read"),
        ("[project\n", "cannot read it as TOML"),
    ],
)
def test_a_pyproject_the_block_cannot_join_is_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pyproject: str, says: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(pyproject)
    assert main(["init", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1
    assert files(tmp_path) == ["pyproject.toml"]
    assert (tmp_path / "pyproject.toml").read_text() == pyproject


def test_a_file_in_place_of_the_folder_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "app").write_text("")
    assert main(["init", str(tmp_path / "app")]) == 2
    assert "not a folder" in capsys.readouterr().err


def over_budget(call: LoopCall) -> LoopResult:
    """The stub with the fault the rules exist for: it ignores the scenario's round budget."""
    from harness.scaffold.agent import run

    return run(replace(call, max_rounds=call.max_rounds + 5))


def test_the_stub_loop_conforms_on_the_starter_scenarios_and_a_broken_one_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The stub is this package's `harness.scaffold.agent`, so it runs in process here."""
    assert main(["init", str(tmp_path)]) == 0
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--source", "scripted", "--loop", "harness.scaffold.agent:run"]) == 0
    assert "6 cell(s): 6 conform" in capsys.readouterr().out
    broken = "tests.commands.test_init:over_budget"
    assert main(["run", "--source", "scripted", "--loop", broken]) == 1
    out = capsys.readouterr().out
    assert "6 cell(s): 3 conform, 3 with findings" in out
    assert "L3" in out and "L11" in out


def test_the_readme_shows_the_workflow_and_the_commands_init_gives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.conftest import ROOT

    readme = (ROOT / "README.md").read_text()
    ci = readme.split("## CI workflow", 1)[1].split("\n## ", 1)[0]
    assert main(["init", str(tmp_path)]) == 0
    written = (tmp_path / WORKFLOW).read_text()
    assert re.findall(r"```yaml\n(.*?)```", ci, re.S)[0] == written
    printed = capsys.readouterr().out.split("Next:", 1)[1].splitlines()[2:5]
    first_hour = readme.split("## Test your own loop", 1)[1].split("\n## ", 1)[0]
    shown = re.findall(r"```sh\n(.*?)```", first_hour, re.S)[0].splitlines()
    assert [line.split("#")[0].strip() for line in printed] == [
        line.split("#")[0].strip() for line in shown[1:]
    ]


def test_an_installation_without_the_scaffold_files_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.commands import init

    monkeypatch.setattr(init, "TEMPLATES", tmp_path / "missing")
    assert main(["init", str(tmp_path / "app")]) == 2
    err = capsys.readouterr().err.strip()
    assert "lacks its scaffold file settings.toml" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "app").exists()
