"""No test writes into the repository's reports/ (tests/conftest.py checks around every test):
the comparison it relies on sees a file added, removed or rewritten, and nothing else."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import REPORTS, ROOT, changed_names, folder_state


def test_an_untouched_folder_has_no_changes(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("the user's report")
    before = folder_state(tmp_path)
    (tmp_path.parent / f"{tmp_path.name}-elsewhere.html").write_text("not in the folder")
    assert changed_names(before, folder_state(tmp_path)) == []
    assert folder_state(tmp_path / "absent") == {}


def test_added_removed_and_rewritten_files_are_named(tmp_path: Path) -> None:
    for name in ("index.html", "junit.xml", "results.json"):
        (tmp_path / name).write_text(name)
    before = folder_state(tmp_path)
    (tmp_path / "screenshot.png").write_bytes(b"\x89PNG")  # added
    (tmp_path / "junit.xml").unlink()  # removed
    replacement = tmp_path / ".results.json.tmp"
    replacement.write_text("results.json")  # same size, then renamed over: a new inode
    os.replace(replacement, tmp_path / "results.json")
    after = folder_state(tmp_path)
    assert changed_names(before, after) == ["junit.xml", "results.json", "screenshot.png"]


def test_the_checked_folder_is_the_repositorys_reports() -> None:
    assert REPORTS == ROOT / "reports"
