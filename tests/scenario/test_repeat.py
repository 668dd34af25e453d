"""Budget-relative scripts: a tool turn marked `repeat: until_limit` is played on every call
until the budget is spent, so one scenario drives any budget; where it may stand."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ScenarioError
from harness.scenario import load_scenario
from harness.scenario.expected import derive_outcome
from harness.scenario.model import Script, ScriptedCall, ScriptedTurn
from tests.scenario.test_loader import write

REPEATING = """\
title: The model keeps asking until the budget is spent
rules: [L3, L11, L12, L14]
system: You are a coach.
max_rounds: {rounds}
tools:
  - name: get_history
    description: Workout history.
    effect: read
    parameters: {{type: object, properties: {{month: {{type: string}}}}, required: [month]}}
    result: "12 sessions"
messages:
  - text: Compare every month you can.
    script:
      turns:
        - text: Let me fetch your history…
          calls: [{{name: get_history, arguments: {{month: "2026-11"}}}}]
          repeat: until_limit
      closing: I reached the step limit for this answer. Shall I continue with more months?
    expect:
      ending: step_limit{rounds_line}
"""


def repeating(rounds: int, rounds_line: str = "") -> str:
    return REPEATING.format(rounds=rounds, rounds_line=rounds_line)


@pytest.mark.parametrize("budget", [1, 10, 50])
def test_a_repeated_turn_follows_the_budget(tmp_path: Path, budget: int) -> None:
    scenario = load_scenario(write(tmp_path, repeating(budget)))
    expect = scenario.messages[0].expect
    assert expect.ending == "step_limit"
    assert expect.rounds == budget
    assert expect.tools == ("get_history",) * budget


def test_rounds_said_explicitly_must_follow_the_budget(tmp_path: Path) -> None:
    load_scenario(write(tmp_path, repeating(10, "\n      rounds: 10")))
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, repeating(10, "\n      rounds: 2")))
    assert ":21: messages[0].expect.rounds: says 2" in str(caught.value)
    assert "repeats until the limit" in str(caught.value)


def test_derive_outcome_plays_the_repeated_turn_up_to_the_limit() -> None:
    read = ScriptedCall(name="read")
    script = Script(
        turns=(
            ScriptedTurn(calls=(ScriptedCall(name="first"),)),
            ScriptedTurn(calls=(read,), repeat="until_limit"),
        ),
        closing="c",
    )
    out = derive_outcome(script, 3)
    assert (out.ending, out.rounds, out.executed) == ("step_limit", 3, ("first", "read", "read"))
    assert out.pending == (read,) and out.turns_played == 2
    unrepeated = derive_outcome(
        Script(turns=(*script.turns[:1], ScriptedTurn(calls=(read,))), closing="c"), 3
    )
    assert unrepeated.problem  # without repeat, two tool turns cannot fill a budget of 3


BAD = [
    (
        "repeat on an answer turn",
        (
            '          calls: [{name: get_history, arguments: {month: "2026-11"}}]\n'
            "          repeat: until_limit\n",
            '          calls: [{name: get_history, arguments: {month: "2026-11"}}]\n'
            "        - answer: Done.\n"
            "          repeat: until_limit\n",
        ),
        "ending: step_limit",
        "ending: answer",
        "messages[0].script.turns[1].repeat",
        "an answer turn cannot repeat",
    ),
    (
        "repeat before another turn",
        (
            "          repeat: until_limit\n",
            "          repeat: until_limit\n        - answer: Done.\n",
        ),
        "ending: step_limit",
        "ending: step_limit",
        "messages[0].script.turns[0].repeat",
        "only the last turn may repeat",
    ),
    (
        "repeat with another mode",
        ("repeat: until_limit", "repeat: forever"),
        "ending: step_limit",
        "ending: step_limit",
        "messages[0].script.turns[0].repeat",
        "until_limit",
    ),
]


@pytest.mark.parametrize(
    ("edit", "old", "new", "field", "problem"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_a_misplaced_repeat_names_file_line_and_field(
    tmp_path: Path, edit: tuple[str, str], old: str, new: str, field: str, problem: str
) -> None:
    text = repeating(3)
    assert edit[0] in text
    text = text.replace(edit[0], edit[1]).replace(old, new)
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:") and f": {field}: " in message, message
    assert problem in message
