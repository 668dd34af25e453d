"""Make the README's two screenshots from real runs (headless Chromium, Debian's `chromium`).

Run from the repository root:  python docs/screenshots.py [--loop MODULE:FUNCTION]

- `docs/report.png`: the report of the library replayed from the committed cassettes by the
  reference loop (what the README's first command leaves in reports/index.html).
- `docs/report-transcript.png`: one failing cell, opened: `--loop` (default: the pydantic-ai
  adapter with the framework's defaults, which runs the pending write at the step limit) on
  `limit_reached_pending_write` from the scripted source, Anthropic.

Nothing else is written (the runs' reports go to a temporary folder); `--out DIR` writes the two
PNGs elsewhere (tests/report/test_browser.py runs it that way so it cannot rot).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness.report.view import anchor

ROOT = Path(__file__).resolve().parent.parent
FAILING_LOOP = "examples.frameworks.pydantic_ai_agent:defaults"
FAILING_CELL = "limit_reached_pending_write[anthropic]"
WINDOW = "--window-size=1280,1500"


def harness(*args: str, folder: Path) -> None:
    """`harness run` writing its report files into `folder`; findings (exit 1) are expected."""
    argv = [sys.executable, "-m", "harness.cli", "run", *args]
    argv += ["--results", str(folder / "results.json"), "--html", str(folder / "index.html")]
    argv += ["--junit", str(folder / "junit.xml")]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        sys.exit(f"harness run {' '.join(args)} failed (exit {done.returncode}):\n{done.stderr}")


def screenshot(chromium: str, page: str, png: Path, profile: Path) -> None:
    png.parent.mkdir(parents=True, exist_ok=True)
    argv = [chromium, "--headless", "--no-sandbox", "--disable-gpu"]
    argv += ["--disable-background-networking", "--disable-component-update", "--disable-sync"]
    argv += ["--no-first-run", f"--user-data-dir={profile}", WINDOW, "--hide-scrollbars"]
    argv += [f"--screenshot={png}", page]
    subprocess.run(argv, capture_output=True, check=True, timeout=120)
    print(f"wrote {png}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loop", default=FAILING_LOOP, help="the loop of the failing cell")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    parser.add_argument("--out", type=Path, default=ROOT / "docs", help="where the PNGs go")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        library, failing = Path(work) / "library", Path(work) / "failing"
        library.mkdir()
        failing.mkdir()
        harness(folder=library)
        scenario = "scenarios/limit_reached_pending_write.yaml"
        harness("--source", "scripted", "--loop", args.loop, "--provider", "anthropic", scenario,
                folder=failing)  # fmt: skip
        profile = Path(work) / "profile"
        page = (library / "index.html").as_uri()
        screenshot(args.chromium, page, args.out / "report.png", profile)
        page = f"{(failing / 'index.html').as_uri()}#focus={anchor(FAILING_CELL)}"
        screenshot(args.chromium, page, args.out / "report-transcript.png", profile)


if __name__ == "__main__":
    main()
