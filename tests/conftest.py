"""Shared fixtures: scenario loading and the in-process emulator on 127.0.0.1."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.emulator.server import Emulator
from harness.runner import CellRun
from harness.scenario import Scenario, load_scenario

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
REALWIRE = Path(os.environ.get("HARNESS_REALWIRE", ROOT.parent / "shared" / "realwire"))
# The second batch (stateful Responses chains, Gemini call ids, redacted thinking, …): the
# same kind of recordings, held to the same guarantees.
REALWIRE2 = Path(os.environ.get("HARNESS_REALWIRE2", ROOT.parent / "shared" / "realwire2"))
REALWIRE_BATCHES = (REALWIRE, REALWIRE2)


def realwire_files(folder: str = "*") -> list[Path]:
    """The recorded cassettes of both batches (`folder`: anthropic, openai or google), each
    batch sorted; a batch that is absent contributes none."""
    return [
        path
        for batch in REALWIRE_BATCHES
        if batch.is_dir()
        for path in sorted(batch.glob(f"{folder}/*.yaml"))
    ]


# SDKs must never reach a real API from the tests, whatever the developer's shell holds.
for _var in (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_BASE_URL",
    "GOOGLE_GEMINI_BASE_URL",
):
    os.environ.pop(_var, None)


REPORTS = ROOT / "reports"


def folder_state(folder: Path) -> dict[str, tuple[int, int, int]]:
    """Each file of `folder` (not recursive) with its inode, size and mtime: an atomic
    rewrite changes the inode, an in-place one the size or mtime."""
    if not folder.is_dir():
        return {}
    return {
        path.name: (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        for path in folder.iterdir()
        for stat in (path.stat(),)
    }


def changed_names(
    before: dict[str, tuple[int, int, int]], after: dict[str, tuple[int, int, int]]
) -> list[str]:
    """The files added, removed or rewritten between two `folder_state`s."""
    return sorted(
        name for name in before.keys() | after.keys() if before.get(name) != after.get(name)
    )


@pytest.fixture(autouse=True)
def _reports_untouched() -> Iterator[None]:
    """No test writes into the repository's reports/: that is the user's last `harness run`
    (the README's two commands in sequence must leave it showing the library run). Tests write
    their reports, results and screenshots under tmp_path."""
    before = folder_state(REPORTS)
    yield
    changed = changed_names(before, folder_state(REPORTS))
    assert not changed, (
        f"the test wrote into the repository's reports/ ({', '.join(changed)}); "
        "pass --results/--html/--junit under tmp_path"
    )


def library() -> list[Scenario]:
    return [load_scenario(p) for p in sorted(SCENARIOS.glob("*.yaml"))]


@pytest.fixture(scope="session")
def emulator() -> Iterator[Emulator]:
    """One emulator for the whole session serving the scenario library; tests add their own
    scenarios with `emulator.add(...)` and isolate themselves with a unique run id."""
    with Emulator(library()) as emu:
        yield emu


@pytest.fixture
def run_id(request: pytest.FixtureRequest) -> str:
    """A run id unique to the test, so logs and fault counters never mix."""
    name = request.node.nodeid.split("::")[-1]
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in name)[:120]


@pytest.fixture(scope="session")
def reference_library_runs() -> list[CellRun]:
    """Every scenario × provider × stream variant of the library through the reference loop
    on the scripted source, run once per session (several test modules read the results)."""
    from harness.runner import REFERENCE_LOOP, cells, load_loop, run_cells
    from harness.sources import ScriptedSource

    scenarios = library()
    source = ScriptedSource(scenarios, {})
    try:
        return list(run_cells(cells(scenarios), source, load_loop(REFERENCE_LOOP)))
    finally:
        source.close()
