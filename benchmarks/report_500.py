"""How the results file and its views scale: a synthetic run of 500 cells (realistic shapes, see
tests/report/synthetic.py) written, read back (schema-checked), and rendered as HTML (alone and
with a previous run whose every call differs: the worst case for "what changed"), JUnit and
the console summary; then the HTML loaded in headless Chromium when it is installed.

With --library the cells are real instead: the scenario library run once through the reference
loop on the scripted source (80 cells), repeated under new scenario ids up to --cells. Real
cells are about twice the size of the synthetic ones (full SDK bodies, usage blocks, ids).

Run from the project folder:
    python -m benchmarks.report_500 [--cells 500] [--repeat 3] [--keep DIR]

Numbers are medians of --repeat runs and go in the README; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from harness.report.console import summary_lines
from harness.report.html import write_html
from harness.report.junit import write_junit
from harness.results import Results, read_results, write_results
from tests.report.synthetic import synthetic_results

T = TypeVar("T")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


def timed(repeat: int, work: Callable[[], T]) -> tuple[float, T]:
    times, value = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        value = work()
        times.append(time.perf_counter() - started)
    assert value is not None
    return statistics.median(times), value


def chromium_ready_ms(html: Path, profile: Path) -> tuple[int, float] | None:
    """(ms until the report's script finished, per the page; wall seconds of the browser run)."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        return None
    argv = [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", html.as_uri()]
    started = time.perf_counter()
    dom = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=True).stdout
    wall = time.perf_counter() - started
    found = re.search(r'data-ready-ms="(\d+)"', dom)
    return (int(found.group(1)) if found else -1), wall


def library_results(cells: int) -> Results:
    from harness.outcome import cell_findings
    from harness.results import build_results, run_meta
    from harness.results.build import check_catalogue, judge
    from harness.runner import REFERENCE_LOOP, load_loop, run_cells
    from harness.runner import cells as all_cells
    from harness.sources import ScriptedSource
    from tests.conftest import library

    started = time.time()
    scenarios = library()
    source = ScriptedSource(scenarios, {})
    try:
        runs = list(run_cells(all_cells(scenarios), source, load_loop(REFERENCE_LOOP)))
    finally:
        source.close()
    meta = run_meta(source="scripted", loop="reference", started=started, finished=None, argv=[])
    once = build_results(
        [judge(r, cell_findings(r)) for r in runs], meta=meta, rules=check_catalogue()
    )
    tiled = []
    for copy in range(cells // len(once.cells) + 1):
        for cell in once.cells:
            scenario = dataclasses.replace(cell.scenario, id=f"{cell.scenario.id}_{copy}")
            cell_id = cell.id.replace(cell.scenario.id, scenario.id, 1)
            tiled.append(dataclasses.replace(cell, id=cell_id, scenario=scenario))
    return dataclasses.replace(once, cells=tuple(tiled[:cells]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="write the files here")
    parser.add_argument("--library", action="store_true", help="real cells (see above)")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="harness-bench-"))
    folder.mkdir(parents=True, exist_ok=True)

    if args.library:
        results = library_results(args.cells)
        previous, compared = results, "nothing changed"
    else:
        results = synthetic_results(args.cells, seed=0)
        previous, compared = synthetic_results(args.cells, seed=1), "every call differs"
    rows: list[tuple[str, float, str]] = []

    t, path = timed(args.repeat, lambda: write_results(results, folder / "results.json"))
    rows.append(("write results.json", t, f"{path.stat().st_size / 1e6:.1f} MB"))
    t, _ = timed(args.repeat, lambda: read_results(path))
    rows.append(("read + schema check", t, ""))
    t, html = timed(args.repeat, lambda: write_html(results, folder / "index.html"))
    rows.append(("render HTML", t, f"{html.stat().st_size / 1e6:.1f} MB"))
    t, changed = timed(args.repeat, lambda: write_html(results, folder / "changed.html", previous))
    rows.append(
        (
            f"render HTML + what changed ({compared})",
            t,
            f"{changed.stat().st_size / 1e6:.1f} MB",
        )
    )
    t, junit = timed(args.repeat, lambda: write_junit(results, folder / "junit.xml"))
    rows.append(("write JUnit", t, f"{junit.stat().st_size / 1e6:.1f} MB"))
    t, lines = timed(args.repeat, lambda: summary_lines(results))
    rows.append(("console summary", t, f"{len(lines)} lines"))

    for name, page in (("index.html", html), ("changed.html", changed)):
        loaded = chromium_ready_ms(page, folder / "profile")
        if loaded is None:
            rows.append((f"chromium: {name}", float("nan"), "chromium not installed"))
            continue
        ready, wall = loaded
        rows.append((f"chromium --dump-dom {name}", wall, f"page ready at {ready} ms"))
    blank = folder / "blank.html"
    blank.write_text("<!DOCTYPE html><title>x</title><p>x", encoding="utf-8")
    baseline = chromium_ready_ms(blank, folder / "profile")
    if baseline is not None:
        rows.append(("chromium --dump-dom (blank page, baseline)", baseline[1], ""))

    print(f"{args.cells} cells, median of {args.repeat}; files in {folder}")
    for label, seconds, note in rows:
        print(f"  {label:<48} {seconds:7.3f} s  {note}")


if __name__ == "__main__":
    main()
