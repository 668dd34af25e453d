"""What a SIGKILL inside an atomic write leaves (`.NAME.yaml.XXXXXXXX.tmp` beside a cassette,
`.NAME.XXXXXXXX` beside a results file or report): `harness record` removes it when old enough,
never anything else, and git ignores it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.tempfiles import STALE_AFTER, remove_stale_temp_files, stale_temp_files
from tests.conftest import SCENARIOS

ROOT = Path(__file__).resolve().parents[2]
ONE = str(SCENARIOS / "one_tool_then_answer.yaml")
OLD = time.time() - STALE_AFTER - 60

# (path under the folder, removed when old)
NAMES = [
    ("anthropic/.one_tool_then_answer.yaml.k2x_9abq.tmp", True),
    ("openai/.one.stream.yaml.abcdefgh.tmp", True),
    (".results.json.a1b2c3d4", True),
    (".index.html.zz_zz_z", False),  # 7 random characters: not mkstemp's
    (".index.html.zz_zz_zz", True),
    (".junit.xml.0123456_", True),
    ("anthropic/one_tool_then_answer.yaml", False),  # a cassette
    ("anthropic/.one.yaml.ABCDEFGH.tmp", False),  # upper case: not mkstemp's
    ("anthropic/.one.yaml.abcdefgh.tmp.bak", False),
    ("anthropic/one.yaml.abcdefgh.tmp", False),  # no leading dot
    (".results.json.abcdefgh.tmp", False),
    (".notes.txt.abcdefgh", False),
    ("results.json", False),
    (".gitkeep", False),
    ("a/b/.deep.yaml.abcdefgh.tmp", False),  # deeper than cassettes/<provider>/
]


def _make(folder: Path, relative: str, mtime: float = OLD) -> Path:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("half a file", encoding="utf-8")
    os.utime(path, (mtime, mtime))
    return path


@pytest.mark.parametrize(("relative", "removed"), NAMES)
def test_only_our_old_temp_names_are_removed(tmp_path: Path, relative: str, removed: bool) -> None:
    path = _make(tmp_path, relative)
    assert remove_stale_temp_files([tmp_path]) == ([path] if removed else [])
    assert path.exists() != removed


KILLED_WRITER = """
import os, signal, sys
from harness.cassettes.files import write_atomic
from harness.results.files import write_text_atomic
os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)  # killed in the write window
folder = sys.argv[1]
if sys.argv[2] == "cassette":
    write_atomic(folder + "/anthropic/one.stream.yaml", "interactions: []\\n")
else:
    write_text_atomic(folder + "/results.json", "{}")
"""


@pytest.mark.parametrize("kind", ["cassette", "results"])
def test_what_a_killed_write_really_leaves_is_cleaned(tmp_path: Path, kind: str) -> None:
    argv = [sys.executable, "-c", KILLED_WRITER, str(tmp_path), kind]
    killed = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    left = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(left) == 1, left
    os.utime(left[0], (OLD, OLD))
    assert remove_stale_temp_files([tmp_path]) == left


def test_a_recent_temp_file_is_a_write_in_progress_and_is_kept(tmp_path: Path) -> None:
    recent = _make(tmp_path, NAMES[0][0], mtime=time.time() - 5)
    assert list(stale_temp_files(tmp_path)) == []
    assert list(stale_temp_files(tmp_path, now=time.time() + STALE_AFTER + 10)) == [recent]


def test_links_are_never_followed_or_removed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    target = _make(outside, "anthropic/.victim.yaml.abcdefgh.tmp")
    folder = tmp_path / "cassettes"
    folder.mkdir()
    (folder / "anthropic").symlink_to(outside / "anthropic")  # a linked provider folder
    link = folder / ".link.yaml.abcdefgh.tmp"
    link.symlink_to(target)  # a link with our name
    assert remove_stale_temp_files([folder]) == []
    assert target.exists() and link.is_symlink()


def test_a_missing_folder_is_nothing_to_clean(tmp_path: Path) -> None:
    assert remove_stale_temp_files([tmp_path / "none"]) == []


def test_record_cleans_cassettes_and_reports_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # `reports/` is relative to where harness runs
    monkeypatch.setenv("HARNESS_CASSETTE_CACHE", "off")
    stale = [
        _make(tmp_path, "cassettes/anthropic/.one_tool_then_answer.yaml.abcdefgh.tmp"),
        _make(tmp_path, "reports/.results.json.abcdefgh"),
    ]
    kept = [
        _make(tmp_path, "cassettes/anthropic/.other.yaml.abcdefgh.tmp", mtime=time.time()),
        _make(tmp_path, "reports/notes.txt"),
    ]
    args = ["--source", "scripted", "--provider", "anthropic", "--stream", "off", ONE]
    assert main(["record", "--cassettes", "cassettes", *args]) == 0
    assert not any(p.exists() for p in stale) and all(p.exists() for p in kept)
    assert (tmp_path / "cassettes/anthropic/one_tool_then_answer.yaml").is_file()
    err = capsys.readouterr().err
    assert "removed 2 stale temporary file(s)" in err


@pytest.mark.skipif(shutil.which("git") is None, reason="no git")
def test_git_ignores_the_temp_files_and_nothing_else() -> None:
    names = {
        "cassettes/openai/.one.stream.yaml.abcdefgh.tmp": True,
        "reports/.results.json.abcdefgh": True,
        "public/.index.html.abcdefgh": True,
        ".junit.xml.abcdefgh": True,
        "cassettes/openai/one.stream.yaml": False,
        "scenarios/one.yaml": False,
        ".github/workflows/ci.yml": False,
    }
    for name, ignored in names.items():
        check = subprocess.run(
            ["git", "check-ignore", "-q", "--no-index", name], cwd=ROOT, check=False
        )
        assert (check.returncode == 0) == ignored, name
