"""Wall time of `harness run` on the library from the cassettes, with --jobs 1 (cells in one
process) and --jobs N (worker processes), as a user runs it: the `harness` command in a fresh
process, start to exit, including each worker's start-up (importing the SDKs).

Run from the project folder:
    python -m benchmarks.run_jobs [--jobs 1 2] [--repeat 3] [--only SCENARIO ...]

The passes are interleaved (1, 2, 1, 2, …) so a busy machine slows them alike; the table shows
medians. Nothing here is asserted; the numbers go in the README.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADER = ("jobs", "cells", "wall time", "vs --jobs 1")


def harness_command() -> list[str]:
    return [sys.executable, "-m", "harness.cli"]


def one_pass(jobs: int, scenarios: list[str], out: Path) -> tuple[float, int]:
    """(seconds from start to exit, cells run) of one `harness run --jobs N`."""
    command = [*harness_command(), "run", "--jobs", str(jobs), *scenarios]
    command += ["--cassettes", str(ROOT / "cassettes")]
    command += ["--results", str(out / "results.json"), "--html", str(out / "index.html")]
    command += ["--junit", str(out / "junit.xml")]
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, check=False, env=dict(os.environ)
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"harness run --jobs {jobs} exited {done.returncode}:\n{done.stderr}")
    first = done.stderr.splitlines()[0]  # "harness run: 86 cell(s), …"
    return elapsed, int(first.split(":", 1)[1].split("cell", 1)[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*", default=[], metavar="SCENARIO")
    args = parser.parse_args()
    scenarios = [str(ROOT / "scenarios" / f"{name}.yaml") for name in args.only]
    times: dict[int, list[float]] = {jobs: [] for jobs in args.jobs}
    cells = 0
    with tempfile.TemporaryDirectory(prefix="harness-jobs-") as folder:
        for _ in range(args.repeat):
            for jobs in args.jobs:
                elapsed, cells = one_pass(jobs, scenarios, Path(folder))
                times[jobs].append(elapsed)
    base = statistics.median(times[args.jobs[0]])
    print(f"| {' | '.join(HEADER)} |")
    print("| --- | ---: | ---: | ---: |")
    for jobs, measured in times.items():
        median = statistics.median(measured)
        print(f"| {jobs} | {cells} | {median:.1f} s | {median / base:.2f}× |")
    print(f"(medians of {args.repeat} interleaved passes, os.cpu_count() = {os.cpu_count()})")


if __name__ == "__main__":
    main()
