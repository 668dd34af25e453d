"""The committed cassettes: one for every scenario × provider × stream variant of the library,
recorded from the scripted source, and each replays cleanly with the reference loop — which is
what lets `harness run` work offline on a fresh clone."""

from __future__ import annotations

import pytest

from harness.cassettes.cassette import cassette_path
from harness.cassettes.files import load_cassette
from harness.runner import cells
from tests.cassettes.conftest import replay
from tests.conftest import ROOT, library

CASSETTES = ROOT / "cassettes"
RERECORD = "re-record them with: harness record --source scripted"


def test_every_cell_of_the_library_has_its_cassette() -> None:
    wanted = {
        cassette_path(CASSETTES, c.provider, c.scenario.id, c.stream) for c in cells(library())
    }
    present = set(CASSETTES.glob("*/*.yaml"))
    assert sorted(map(str, wanted - present)) == [], f"missing cassettes: {RERECORD}"
    assert sorted(map(str, present - wanted)) == [], "cassettes of no scenario: delete them"


def test_committed_cassettes_are_marked_scripted() -> None:
    for path in sorted(CASSETTES.glob("*/*.yaml")):
        meta = load_cassette(path).meta
        assert meta is not None and meta.source == "scripted", path


@pytest.mark.parametrize("provider", ["anthropic", "openai", "gemini"])
def test_the_library_replays_without_drift(provider: str) -> None:
    chosen = cells(library(), [provider])
    replayed = replay(CASSETTES, chosen)
    problems = {
        cell_id: [f.line() for f in r.findings] for cell_id, r in replayed.items() if r.findings
    }
    assert problems == {}, f"the reference loop no longer sends what was recorded; {RERECORD}"
    assert all(r.run.error is None for r in replayed.values())
