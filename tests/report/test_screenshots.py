"""docs/screenshots.py makes the README's screenshots from real runs; run here into tmp_path
(never docs/) so the script cannot rot. Needs Debian's chromium, like the browser tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.report.test_browser import CHROMIUM

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium on PATH (Debian: apt-get install chromium; .ci/run installs it)",
)


def test_the_screenshot_script_makes_both_pictures(tmp_path: Path) -> None:
    argv = [sys.executable, str(ROOT / "docs" / "screenshots.py"), "--out", str(tmp_path)]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    for name in ("report.png", "report-transcript.png"):
        png = tmp_path / name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
