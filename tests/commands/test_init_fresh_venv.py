"""The issue's "done when" for `harness init`: on a fresh virtual environment, in an empty
folder, the scaffold's next commands give a green `--strict` replay of the project's own
recorded cassettes; breaking the stub loop then fails with the rule it broke (exit 1).

The venv is made without pip and without the network: its dependencies are the shared test
environment's site-packages (one path line in a .pth file, so that folder's own .pth files —
including any editable install of harness — are not run), and harness is this checkout, added
the way an editable install adds it, with the console script pip would write."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

from tests.conftest import ROOT

CONSOLE_SCRIPT = """#!{python}
import sys
from harness.cli import main
sys.exit(main())
"""


def fresh_venv(folder: Path) -> Path:
    venv.EnvBuilder(with_pip=False).create(folder)
    python = folder / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        env=clean_env(),
    ).stdout.strip()
    shared = sysconfig.get_paths()["purelib"]
    (Path(purelib) / "harness_checkout.pth").write_text(f"{ROOT}\n{shared}\n")
    script = folder / "bin" / "harness"
    script.write_text(CONSOLE_SCRIPT.format(python=python))
    script.chmod(0o755)
    return script


def clean_env(**extra: str) -> dict[str, str]:
    """No PYTHONPATH (the fresh venv alone says what imports) and no virtualenv of ours."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, **extra}


def run(harness: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # The cassette parse cache stays in the test's folder, not the developer's.
    env = clean_env(HARNESS_CASSETTE_CACHE=str(cwd.parent / "parse-cache"))
    return subprocess.run([str(harness), *args], cwd=cwd, capture_output=True, text=True, env=env)


def test_init_record_replay_strict_then_a_broken_loop_fails_with_its_rule(tmp_path: Path) -> None:
    assert sys.platform != "win32"
    harness = fresh_venv(tmp_path / "venv")
    made = run(harness, "init", "project", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    project = tmp_path / "project"
    assert "harness record --source scripted" in made.stdout
    assert "harness run --strict" in made.stdout

    recorded = run(harness, "record", "--source", "scripted", cwd=project)
    assert recorded.returncode == 0, recorded.stderr
    assert "6 written, 0 unchanged, 0 not recorded" in recorded.stdout + recorded.stderr
    tapes = sorted(p.relative_to(project).as_posix() for p in project.glob("cassettes/*/*.yaml"))
    assert len(tapes) == 6 and "cassettes/gemini/one_tool_then_answer.yaml" in tapes

    replayed = run(harness, "run", "--strict", cwd=project)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "6 cell(s): 6 conform" in replayed.stdout
    assert "loop agent:run" in replayed.stdout  # the project's own loop, from [tool.harness]
    assert (project / "reports" / "index.html").is_file()

    # The fault the rules exist for: at the budget, the pending write is run anyway.
    agent = project / "agent.py"
    text = agent.read_text()
    assert "spent = number == call.max_rounds" in text
    agent.write_text(text.replace("spent = number == call.max_rounds", "spent = False"))
    broken = run(harness, "run", "--strict", cwd=project)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    out = broken.stdout
    assert "3 with findings" in out and "L11" in out
    assert "limit_reached_pending_write" in out and "one_tool_then_answer[anthropic]" not in out
