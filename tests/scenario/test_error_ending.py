"""`ending: error`: a step the provider keeps failing past every retry a correct loop makes
(`times` above the SDKs' 2 retries) ends the query in an error; fewer failures are ridden out
by the retries and the script plays on. `harness check` says which ending the script gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ScenarioError
from harness.scenario import load_scenario
from harness.scenario.expected import SDK_RETRIES, derive_outcome
from tests.conftest import SCENARIOS

LIBRARY = (SCENARIOS / "provider_keeps_failing.yaml").read_text()


def variant(tmp_path: Path, times: int, ending: str) -> Path:
    text = LIBRARY.replace("times: 6", f"times: {times}").replace(
        "ending: error", f"ending: {ending}"
    )
    path = tmp_path / "provider_keeps_failing.yaml"
    path.write_text(text)
    return path


def test_the_library_scenario_ends_in_an_error() -> None:
    scenario = load_scenario(SCENARIOS / "provider_keeps_failing.yaml")
    outcome = derive_outcome(scenario.messages[0].script, scenario.max_rounds)
    assert (outcome.ending, outcome.rounds, outcome.executed) == ("error", 0, ())


@pytest.mark.parametrize(
    ("times", "ending"), [(SDK_RETRIES, "answer"), (SDK_RETRIES + 1, "error"), (6, "error")]
)
def test_failures_past_the_retries_end_in_an_error(tmp_path: Path, times: int, ending: str) -> None:
    rounds = {"answer": 0, "error": 0}[ending]
    scenario = load_scenario(variant(tmp_path, times, ending))
    outcome = derive_outcome(scenario.messages[0].script, scenario.max_rounds)
    assert (outcome.ending, outcome.rounds) == (ending, rounds)


@pytest.mark.parametrize(
    ("times", "said", "derived"), [(6, "answer", "error"), (1, "error", "answer")]
)
def test_an_expectation_the_script_contradicts_is_refused(
    tmp_path: Path, times: int, said: str, derived: str
) -> None:
    with pytest.raises(ScenarioError, match=f"says '{said}'.*give '{derived}'"):
        load_scenario(variant(tmp_path, times, said))
