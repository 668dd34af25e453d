"""Scenarios no loop can pass are rejected by `harness check`: a closing text the L14 check
would fail, an empty answer or closing, a scripted call no `cases:` entry answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ScenarioError
from harness.scenario import load_scenario
from tests.scenario.test_loader import VALID, write

CLOSING = "closing: I hit my step limit before saving your goal. Shall I continue?"
EXPECT_CLOSING = "closing: {asks_to_continue: true, must_not_contain: [goal saved]}"
LOOKUP_RESULTS = 'results: ["bench 80 kg"]'


def edit(*pairs: tuple[str, str]) -> str:
    text = VALID
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


BAD = [
    (
        "closing neither asks nor invites to continue",
        edit((CLOSING, "closing: I hit my step limit before saving your goal.")),
        32,
        "messages[0].script.closing",
        "does not ask whether to continue",
    ),
    (
        # L14 requires asking unless the expectation says false: unset counts as required.
        "closing does not ask, expectation unset",
        edit(
            (CLOSING, "closing: I hit my step limit before saving your goal."),
            (EXPECT_CLOSING, "closing: {must_not_contain: [goal saved]}"),
        ),
        32,
        "messages[0].script.closing",
        "does not ask whether to continue",
    ),
    (
        "closing does not explain the limit",
        edit((CLOSING, "closing: Shall I continue and save your goal?")),
        32,
        "messages[0].script.closing",
        "does not explain the step limit",
    ),
    (
        "closing holds a must_not_contain phrase",
        edit((CLOSING, "closing: I hit my step limit, but the goal saved fine. Shall I continue?")),
        32,
        "messages[0].script.closing",
        "'goal saved'",
    ),
    (
        "closing claims the pending write",
        edit((CLOSING, "closing: I saved your goal but hit my step limit. Shall I continue?")),
        32,
        "messages[0].script.closing",
        "claims a write that was not executed",
    ),
    (
        "empty closing",
        edit((CLOSING, 'closing: ""')),
        32,
        "messages[0].script.closing",
        "must hold some text",
    ),
    (
        "whitespace-only closing",
        edit((CLOSING, 'closing: "  \\n\\t"')),
        32,
        "messages[0].script.closing",
        "must hold some text",
    ),
    (
        "empty answer",
        edit(
            (
                "        - calls: [{name: save_goal, arguments: {goal: 100 kg}}]",
                '        - answer: ""',
            )
        ),
        31,
        "messages[0].script.turns[1].answer",
        "must hold some text",
    ),
    (
        "whitespace-only answer",
        edit(
            (
                "        - calls: [{name: save_goal, arguments: {goal: 100 kg}}]",
                "        - answer: ' '",
            )
        ),
        31,
        "messages[0].script.turns[1].answer",
        "must hold some text",
    ),
    (
        "executed call matches no case",
        edit((LOOKUP_RESULTS, "cases: [{when: {exercise: squat}, result: 120 kg}]")),
        30,
        "messages[0].script.turns[0].calls[0].arguments",
        "no case of tool 'get_history' (tools[0].cases) matches",
    ),
    (
        "pending call matches no case",
        edit(("    result: saved", "    cases: [{when: {goal: 90 kg}, result: saved}]")),
        31,
        "messages[0].script.turns[1].calls[0].arguments",
        "no case of tool 'save_goal' (tools[1].cases) matches",
    ),
]


@pytest.mark.parametrize(
    ("text", "line", "field", "problem"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_unpassable_scenarios_name_file_line_and_field(
    tmp_path: Path, text: str, line: int, field: str, problem: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    err = caught.value
    assert (err.file, err.line, err.field) == (str(path), line, field), str(err)
    assert problem in err.problem, str(err)


GOOD = [
    (
        "asking not expected",
        edit(
            (CLOSING, "closing: I hit my step limit before saving your goal."),
            (EXPECT_CLOSING, "closing: {asks_to_continue: false}"),
        ),
    ),
    (
        "explaining not expected",
        edit(
            (CLOSING, "closing: Shall I continue and save your goal?"),
            (EXPECT_CLOSING, "closing: {explains_limit: false}"),
        ),
    ),
    (
        "an invitation instead of a question",
        edit((CLOSING, "closing: I hit my step limit. Let me know if I should continue.")),
    ),
    (
        "the scenario's own phrases",
        edit(
            (CLOSING, "closing: Budget gone. Want more?"),
            ("messages:\n", "closing_phrases: {asks_to_continue: [want more]}\nmessages:\n"),
        ),
    ),
    (
        "a claim about a read when no write is pending",
        edit(
            ("    effect: write", "    effect: read"),
            (EXPECT_CLOSING, "closing: {asks_to_continue: true}"),
            (CLOSING, "closing: I have saved nothing; the step limit was hit. Shall I continue?"),
        ),
    ),
    (
        "an answer ending: the closing text is never the answer",
        edit(
            ("max_rounds: 1", "max_rounds: 5"),
            (
                "        - calls: [{name: save_goal, arguments: {goal: 100 kg}}]",
                "        - calls: [{name: save_goal, arguments: {goal: 100 kg}}]\n"
                "        - answer: Saved.",
            ),
            (
                "      ending: step_limit\n      not_run: [save_goal]\n      " + EXPECT_CLOSING,
                "      ending: answer",
            ),
            (CLOSING, "closing: Done."),
        ),
    ),
    (
        "calls matching a case (other arguments free)",
        edit(
            (LOOKUP_RESULTS, "cases: [{when: {}, result: 1}, {when: {exercise: bench}, result: 2}]")
        ),
    ),
]


@pytest.mark.parametrize("text", [g[1] for g in GOOD], ids=[g[0] for g in GOOD])
def test_passable_scenarios_load(tmp_path: Path, text: str) -> None:
    load_scenario(write(tmp_path, text))
