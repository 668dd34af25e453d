"""Scenario loading: valid files load into typed values; every kind of bad input is rejected
naming file, line and field."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.chat import AssistantMessage, ToolMessage, UserMessage
from harness.errors import ScenarioError
from harness.scenario import load_scenario

VALID = """\
title: Budget reached with a pending write
rules: [L3, L11, L12, L14]
system: You are a coach.
max_rounds: 1
streaming: false
providers: [anthropic, gemini]
models: {anthropic: claude-test}
history:
  - {role: user, text: hi}
  - role: assistant
    tool_calls: [{id: h1, name: get_history, arguments: {exercise: squat}}]
  - {role: tool, id: h1, name: get_history, content: "none yet"}
  - {role: assistant, text: No squats yet.}
tools:
  - name: get_history
    description: Workout history.
    effect: read
    parameters: {type: object, properties: {exercise: {type: string}}, required: [exercise]}
    results: ["bench 80 kg"]
  - name: save_goal
    description: Save a goal.
    effect: write
    parameters: {type: object, properties: {goal: {type: string}}, required: [goal]}
    result: saved
messages:
  - text: Set my goal
    script:
      turns:
        - text: Checking.
          calls: [{name: get_history, arguments: {exercise: bench}}]
        - calls: [{name: save_goal, arguments: {goal: 100 kg}}]
      closing: I hit my step limit before saving your goal. Shall I continue?
    expect:
      ending: step_limit
      not_run: [save_goal]
      closing: {asks_to_continue: true, must_not_contain: [goal saved]}
"""


def write(tmp_path: Path, text: str, name: str = "a_scenario.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), "utf-8")
    return path


def test_valid_scenario_loads_into_typed_values(tmp_path: Path) -> None:
    s = load_scenario(write(tmp_path, VALID))
    assert s.id == "a_scenario"
    assert s.max_rounds == 1 and s.streaming == (False,)
    assert s.providers == ("anthropic", "gemini")
    assert isinstance(s.history[0], UserMessage)
    assert isinstance(s.history[1], AssistantMessage) and s.history[1].tool_calls[0].id == "h1"
    assert isinstance(s.history[2], ToolMessage)
    exp = s.messages[0].expect
    assert (exp.ending, exp.rounds, exp.tools) == ("step_limit", 1, ("get_history",))
    assert exp.closing is not None and exp.closing.must_not_contain == ("goal saved",)
    assert s.tool("save_goal") is not None and s.tool("nope") is None


def test_defaults(tmp_path: Path) -> None:
    text = VALID.replace("max_rounds: 1\n", "").replace("streaming: false\n", "")
    text = text.replace("providers: [anthropic, gemini]\n", "")
    text = text.replace("ending: step_limit", "ending: answer").replace(
        "      not_run: [save_goal]\n      closing: {asks_to_continue: true, must_not_contain: "
        "[goal saved]}\n",
        "",
    )
    text = text.replace(
        "        - calls: [{name: save_goal, arguments: {goal: 100 kg}}]\n",
        "        - calls: [{name: save_goal, arguments: {goal: 100 kg}}]\n"
        "        - answer: Saved.\n",
    )
    s = load_scenario(write(tmp_path, text))
    assert s.max_rounds == 10 and s.streaming == (False, True)
    assert s.providers == ("anthropic", "openai", "gemini")
    assert s.messages[0].expect.rounds == 2


def replace(old: str, new: str) -> str:
    assert old in VALID, old
    return VALID.replace(old, new, 1)


BAD = [
    ("unknown top-level key", replace("title:", "colour: red\ntitle:"), 1, "colour"),
    ("wrong type", replace("max_rounds: 1", "max_rounds: many"), 4, "max_rounds"),
    ("unknown provider", replace("[anthropic, gemini]", "[anthropic, mistral]"), 6, "providers[1]"),
    ("bad rule id", replace("[L3, L11, L12, L14]", "[L3, L16]"), 2, "rules[1]"),
    (
        "unknown key in a turn",
        replace("- text: Checking.", "- txt: Checking."),
        29,
        "messages[0].script.turns[0].txt",
    ),
    (
        "undeclared tool",
        replace("name: save_goal, arguments", "name: delete_all, arguments"),
        31,
        "messages[0].script.turns[1].calls[0].name",
    ),
    (
        "arguments fail the schema",
        replace("{exercise: bench}", "{exercise: 5}"),
        30,
        "messages[0].script.turns[0].calls[0].arguments",
    ),
    (
        "missing required argument",
        replace("{exercise: bench}", "{}"),
        30,
        "messages[0].script.turns[0].calls[0].arguments",
    ),
    (
        "expectation disagrees with the script",
        replace("ending: step_limit", "ending: answer"),
        34,
        "messages[0].expect.ending",
    ),
    (
        "rounds disagree",
        replace("ending: step_limit", "ending: step_limit\n      rounds: 3"),
        35,
        "messages[0].expect.rounds",
    ),
    (
        "not_run names a tool the script runs",
        replace("not_run: [save_goal]", "not_run: [get_history]"),
        35,
        "messages[0].expect.not_run[0]",
    ),
    (
        "history result without its call",
        replace("{role: tool, id: h1,", "{role: tool, id: h9,"),
        12,
        "history[2].id",
    ),
    (
        "too few listed results",
        replace('results: ["bench 80 kg"]', "results: []"),
        19,
        "tools[0].results",
    ),
    ("duplicate key", replace("system: You are a coach.", "system: a\nsystem: b"), 4, "system"),
    ("invalid YAML", replace("rules: [L3, L11, L12, L14]", "rules: [L3, L11"), None, "(syntax)"),
]


@pytest.mark.parametrize(("text", "line", "field"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_scenarios_name_file_line_and_field(
    tmp_path: Path, text: str, line: int | None, field: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    err = caught.value
    assert err.file == str(path)
    assert err.field == field, str(err)
    if line is not None:
        assert err.line == line, str(err)
    assert str(err).startswith(f"{path}:")


def test_file_stem_must_be_a_valid_id(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="file stem is the scenario id"):
        load_scenario(write(tmp_path, VALID, name="Bad Name.yaml"))


def test_missing_file_and_empty_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read"):
        load_scenario(tmp_path / "absent.yaml")
    with pytest.raises(ScenarioError, match="empty"):
        load_scenario(write(tmp_path, ""))


def test_library_scenarios_are_valid() -> None:
    from tests.conftest import library

    assert library(), "the scenario library is empty"


# A tool's `result:` / `results:` / `cases:` / `error:` break the shipped JSON Schema in ways
# whose raw jsonschema message would dump the whole tool or name only the first alternative.
TOOL_VALUES = [
    (
        "result and cases both given",
        replace("    result: saved\n", "    result: saved\n    cases: [{when: {}, result: x}]\n"),
        "tools[1].cases",
        "give only one of result, results, cases or error; result is given too",
    ),
    (
        "no result at all",
        replace("    result: saved\n", ""),
        "tools[1]",
        "needs one of result, results, cases or error (what it gives back)",
    ),
    (
        "a null result",
        replace("    result: saved\n", "    result: null\n"),
        "tools[1].result",
        "must be text, a mapping, a list, a number or true/false (got null)",
    ),
    (
        "a date as result",
        replace("    result: saved\n", "    result: 2026-11-30\n"),
        "tools[1].result",
        "must be text, a mapping, a list, a number or true/false (got a date; quote it",
    ),
    (
        "cases as a mapping",
        replace("    result: saved\n", "    cases: {when: {goal: x}, result: saved}\n"),
        "tools[1].cases",
        "must be a list (got a mapping)",
    ),
    (
        "a case's when is no mapping",
        replace("    result: saved\n", "    cases: [{when: 5, result: saved}]\n"),
        "tools[1].cases[0].when",
        "must be a mapping (got a number)",
    ),
]


@pytest.mark.parametrize(
    ("text", "field", "says"), [t[1:] for t in TOOL_VALUES], ids=[t[0] for t in TOOL_VALUES]
)
def test_a_bad_tool_value_is_one_plain_line(
    tmp_path: Path, text: str, field: str, says: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert caught.value.field == field and caught.value.line is not None, message
    assert message == f"{path}:{caught.value.line}: {field}: {caught.value.problem}"
    assert says in message and "\n" not in message
    assert "{" not in caught.value.problem and "is valid under each of" not in message
