"""Project settings in `[tool.harness]`: product decisions (round budget, context window,
stream variants, providers) the checks and the CLI read; a scenario's own values and the flags
override them; an unknown key or a wrong type is one clear line and exit 2."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.scenario import load_scenario
from harness.settings import KNOWN, Settings, SettingsError, load_settings, settings_from, table_in
from tests.conftest import ROOT, SCENARIOS

ONE = SCENARIOS / "one_tool_then_answer.yaml"


def project(tmp_path: Path, table: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[project]\nname = 'app'\n\n[tool.harness]\n{table}")
    (tmp_path / "scenarios").mkdir()
    shutil.copy(ONE, tmp_path / "scenarios")
    return tmp_path


def test_defaults_without_a_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'app'\n")
    assert load_settings(tmp_path) == Settings(file="")


def test_a_table_is_read_from_the_nearest_pyproject(tmp_path: Path) -> None:
    project(
        tmp_path, 'max_rounds = 10\ncontext_window = 8\nstream = "off"\nproviders = ["gemini"]\n'
    )
    (tmp_path / "sub").mkdir()
    settings = load_settings(tmp_path / "sub")
    assert (settings.max_rounds, settings.context_window, settings.stream, settings.providers) == (
        10,
        8,
        "off",
        ("gemini",),
    )


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ("max_round = 3\n", "unknown key 'max_round'"),
        ('max_rounds = "ten"\n', "max_rounds: must be an integer"),
        ("context_window = 0\n", "context_window: must be an integer from 1"),
        ('stream = "yes"\n', 'stream: must be "both", "on" or "off"'),
        ('providers = ["bard"]\n', "providers: must be a non-empty list"),
        ("max_rounds = [\n", "cannot read it as TOML"),
        ('drift_ignore = "max_tokens"\n', "drift_ignore: must be a list of field paths"),
        ('drift_ignore = ["bard:max_tokens"]\n', "drift_ignore: 'bard:max_tokens' is not a field"),
        ('drift_ignore = ["messages[0]"]\n', "drift_ignore: 'messages[0]' is not a field path"),
        ('loop = "my_app.agent"\n', 'loop: write it as "module:function"'),
        ('exec = ""\n', "exec: must be a non-empty string"),
        ('loop = "a:b"\nexec = "node a.mjs"\n', "loop and exec both name the loop"),
        ("scenarios = 3\n", "scenarios: must be a folder or file, or a list"),
        ("cassettes = [1]\n", "cassettes: must be a non-empty string"),
        ("reports = false\n", "reports: must be a non-empty string"),
        ('models = {bard = "x"}\n', "models: must be a table of provider"),
        ('models = "gpt"\n', "models: must be a table of provider"),
    ],
)
def test_a_bad_table_is_one_clear_line_and_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    table: str,
    says: str,
) -> None:
    project(tmp_path, table)
    with pytest.raises(SettingsError, match=re.escape(says)):
        load_settings(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["check"]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and "pyproject.toml" in err and len(err.splitlines()) == 1


def test_scenarios_take_the_project_defaults_and_keep_their_own(tmp_path: Path) -> None:
    settings = Settings(max_rounds=7, context_window=12)
    own = load_scenario(SCENARIOS / "limit_reached_pending_write.yaml", settings)
    assert (own.max_rounds, own.context_window) == (1, 12)  # its own budget, the project window
    text = ONE.read_text()
    assert "max_rounds" not in text
    assert load_scenario(ONE, settings).max_rounds == 7
    assert load_scenario(ONE).max_rounds == 10


def test_the_cli_runs_the_providers_and_stream_variants_the_project_chose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project(tmp_path, 'stream = "off"\nproviders = ["anthropic", "gemini"]\n')
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--source", "scripted"]) == 0
    assert "2 cell(s): 2 conform" in capsys.readouterr().out
    assert main(["run", "--source", "scripted", "--provider", "openai", "--stream", "both"]) == 0
    assert "2 cell(s): 2 conform" in capsys.readouterr().out


def test_drift_ignore_is_read_as_given(tmp_path: Path) -> None:
    project(tmp_path, 'drift_ignore = ["max_tokens", "gemini:generationConfig.*", "tools.*"]\n')
    assert load_settings(tmp_path).drift_ignore == (
        "max_tokens",
        "gemini:generationConfig.*",
        "tools.*",
    )


MINIMAL_LOOP = ROOT / "examples" / "minimal_loop.py"


def test_paths_are_relative_to_the_pyproject_folder(tmp_path: Path) -> None:
    project(tmp_path, 'scenarios = ["scenarios", "more"]\ncassettes = "tapes"\nreports = "out"\n')
    (tmp_path / "sub").mkdir()
    settings = load_settings(tmp_path / "sub")
    assert [p.resolve() for p in settings.scenarios] == [tmp_path / "scenarios", tmp_path / "more"]
    assert settings.cassettes is not None and settings.cassettes.resolve() == tmp_path / "tapes"
    assert settings.reports is not None and settings.reports.resolve() == tmp_path / "out"
    assert load_settings(tmp_path).scenarios[0] == Path(tmp_path / "scenarios")


def test_record_and_run_take_loop_folders_and_models_from_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project(
        tmp_path,
        'loop = "settings_loop:run"\nscenarios = "library"\ncassettes = "tapes"\n'
        'reports = "out"\nstream = "off"\nproviders = ["anthropic"]\n'
        'models = {anthropic = "claude-from-settings"}\n',
    )
    (tmp_path / "scenarios").rename(tmp_path / "library")
    shutil.copy(MINIMAL_LOOP, tmp_path / "settings_loop.py")
    monkeypatch.chdir(tmp_path)
    assert main(["record", "--source", "scripted"]) == 0
    assert (tmp_path / "tapes" / "anthropic" / "one_tool_then_answer.yaml").is_file()
    tape = (tmp_path / "tapes" / "anthropic" / "one_tool_then_answer.yaml").read_text()
    assert "claude-from-settings" in tape
    assert main(["run", "--strict"]) == 0
    out = capsys.readouterr().out
    assert "1 cell(s): 1 conform" in out and "loop settings_loop:run" in out
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "index.html",
        "junit.xml",
        "results.json",
    ]
    assert not (tmp_path / "reports").exists()


def test_flags_override_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project(
        tmp_path,
        'loop = "no_such_module_here:run"\ncassettes = "tapes"\nreports = "out"\n'
        'stream = "off"\nproviders = ["openai"]\nmodels = {openai = "gpt-from-settings"}\n',
    )
    monkeypatch.chdir(tmp_path)
    args = ["--source", "scripted", "--loop", "harness.loop.reference:reference_loop"]
    assert main(["record", *args, "--cassettes", "mine", "--model", "openai=gpt-flag"]) == 0
    assert "gpt-flag" in (tmp_path / "mine" / "openai" / "one_tool_then_answer.yaml").read_text()
    assert not (tmp_path / "tapes").exists()
    assert main(["run", *args, "--results", "elsewhere/results.json"]) == 0
    assert (tmp_path / "elsewhere" / "results.json").is_file()
    assert (tmp_path / "out" / "index.html").is_file()  # --html left at its default
    assert main(["run", "--source", "scripted"]) == 2  # the settings' loop, which is not there
    assert "no_such_module_here" in capsys.readouterr().err


def test_the_readme_settings_block_is_read_and_every_key_is_documented(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Settings: the product's decisions", 1)[1]
    block = re.findall(r"```toml\n(.*?)```", section, re.S)[0]
    table = table_in(block, tmp_path / "pyproject.toml")
    assert table is not None
    settings = settings_from(table, str(tmp_path / "pyproject.toml"))
    assert settings.loop == "my_app.agent:run" and settings.models["openai"] == "gpt-5-mini"
    undocumented = [k for k in KNOWN if not re.search(rf"^#? ?{k} = ", readme, re.M)]
    assert undocumented == []


def test_check_reads_the_scenario_folders_from_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project(tmp_path, 'scenarios = ["library"]\n')
    (tmp_path / "scenarios").rename(tmp_path / "library")
    monkeypatch.chdir(tmp_path)
    assert main(["check"]) == 0
    assert "ok    library/one_tool_then_answer.yaml" in capsys.readouterr().out


def test_the_settings_module_imports_first() -> None:
    """harness.settings and the scenario loader import each other's names: either may be the
    first import of a process (the plugin and `harness init` read the settings first)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", "import harness.settings"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
