"""The reference loop keeps every rule: zero findings (expectations and rules together) on
every scenario × provider × stream variant of the library, through the scripted source."""

from __future__ import annotations

import pytest

from harness.outcome import cell_findings, cell_verdicts
from harness.scenario.model import Provider
from tests.checks.support import LIBRARY, Runs, explain

CELLS = [
    pytest.param(s.id, p, stream, id=f"{s.id}-{p}{'-stream' if stream else ''}")
    for s in LIBRARY.values()
    for p in s.providers
    for stream in s.streaming
]


@pytest.mark.parametrize(("scenario", "provider", "stream"), CELLS)
def test_reference_loop_has_zero_findings(
    runs: Runs, scenario: str, provider: Provider, stream: bool
) -> None:
    run = runs.get(scenario, provider, stream)
    found = cell_findings(run)
    assert not found, explain(found)
    verdicts = cell_verdicts(run, found)
    assert "fail" not in verdicts.values()
    assert verdicts["L15"] == "pass" and verdicts["wire.parse"] == "pass"


def test_the_library_covers_every_provider_and_both_stream_variants() -> None:
    assert len(CELLS) >= 80
    assert {(p, s) for _, p, s in (c.values for c in CELLS)} == {
        (p, s) for p in ("anthropic", "openai", "gemini") for s in (False, True)
    }


def test_cell_findings_combine_expectations_and_rules(runs: Runs) -> None:
    """A run whose answer is not the model's: the rule (L2) and the expectation agree."""
    from dataclasses import replace

    run = runs.get("one_tool_then_answer", "anthropic")
    query = replace(run.queries[0], answer="Done.")
    broken = replace(run, queries=(query,))
    found = cell_findings(broken)
    assert {f.rule for f in found} == {"L2"}
