"""Every benchmark runs, with tiny parameters, so none can rot (their numbers are in the README,
measured with the defaults; nothing about speed is asserted here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

TINY = {
    "replay_overhead.py": (
        ["--only", "one_tool_then_answer", "--copies", "1", "2", "--repeat", "1"],
        "growth",
    ),
    "emulator_throughput.py": (["--requests", "5", "--threads", "1", "--repeats", "1"], "r/s"),
    "report_500.py": (["--cells", "5", "--repeat", "1"], "render HTML"),
    "run_jobs.py": (
        ["--only", "one_tool_then_answer", "--jobs", "1", "2", "--repeat", "1"],
        "vs --jobs 1",
    ),
}


def test_every_benchmark_is_listed() -> None:
    scripts = {p.name for p in (ROOT / "benchmarks").glob("*.py") if p.name != "__init__.py"}
    assert scripts == set(TINY)


@pytest.mark.parametrize("script", sorted(TINY))
def test_benchmark_runs_with_tiny_parameters(script: str, tmp_path: Path) -> None:
    args, expected = TINY[script]
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={
            "HARNESS_CASSETTE_CACHE": str(tmp_path / "cache"),
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(ROOT),  # the scripts import this checkout (and tests/ helpers)
        },
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert expected in result.stdout
