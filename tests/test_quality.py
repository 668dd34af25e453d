"""Lint, format and type checks run with the tests, so one command keeps them clean."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed; install the test extras: pip install -e '.[test]'")
    return found


@pytest.mark.parametrize(
    "argv",
    [
        ["ruff", "check", "harness", "tests", "benchmarks", "examples", "docs"],
        ["ruff", "format", "--check", "harness", "tests", "benchmarks", "examples", "docs"],
        ["mypy"],
    ],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_clean(argv: list[str]) -> None:
    result = subprocess.run(
        [_tool(argv[0]), *argv[1:]], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
