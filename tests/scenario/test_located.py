"""YAML beyond the basics: tags are rejected and merge keys are supported, every problem as one
`ScenarioError` naming file, line and field (never a PyYAML traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ScenarioError
from harness.scenario import load_scenario
from tests.scenario.test_loader import VALID, write


def replace(old: str, new: str) -> str:
    assert old in VALID, old
    return VALID.replace(old, new, 1)


SAVE_GOAL_PARAMETERS = (
    "    parameters: {type: object, properties: {goal: {type: string}}, required: [goal]}"
)

BAD = [
    (
        "python object tag on a mapping",
        replace("models: {", "models: !!python/object:os.system {"),
        7,
        "models",
        "unsupported YAML tag",
    ),
    (
        "python name tag on a scalar",
        replace("system: You are a coach.", "system: !!python/name:os.system x"),
        3,
        "system",
        "unsupported YAML tag",
    ),
    ("custom tag", replace("max_rounds: 1", "max_rounds: !cost 1"), 4, "max_rounds", "tag"),
    (
        "set tag",
        replace("providers: [anthropic, gemini]", "providers: !!set {anthropic: null}"),
        6,
        "providers",
        "unsupported YAML tag",
    ),
    (
        "explicit tag on a value that does not fit it",
        replace("max_rounds: 1", "max_rounds: !!int many"),
        4,
        "max_rounds",
        "not a valid",
    ),
    (
        "bool tag on a non-boolean",
        replace("streaming: false", "streaming: !!bool maybe"),
        5,
        "streaming",
        "not a valid",
    ),
    (
        "bad base64 under a binary tag",
        replace("system: You are a coach.", 'system: !!binary "%%%"'),
        3,
        "system",
        "tag",
    ),
    (
        "alias inside its own anchor",
        replace("models: {anthropic: claude-test}", "models: &m {anthropic: *m}"),
        7,
        "models.anthropic",
        "cycle",
    ),
    (
        "merge key with a text value",
        replace("    result: saved", "    <<: saved"),
        24,
        "tools[1]",
        "merge key",
    ),
    (
        "merge of a mapping into itself",
        replace("models: {anthropic: claude-test}", "models: &m {<<: *m}"),
        7,
        "models",
        "cycle",
    ),
    (
        # The merged field is written on line 7 (the anchor): that is where the error points.
        "merged field that does not belong",
        replace("models: {", "models: &m {").replace(
            "    result: saved", "    result: saved\n    <<: *m"
        ),
        7,
        "tools[1].anthropic",
        "unknown key anthropic",
    ),
    (
        "duplicate key written next to a merge",
        replace("    result: saved", "    result: saved\n    <<: {effect: read}\n    result: no"),
        26,
        "tools[1].result",
        "duplicate key",
    ),
]


@pytest.mark.parametrize(
    ("text", "line", "field", "problem"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_bad_yaml_names_file_line_and_field(
    tmp_path: Path, text: str, line: int, field: str, problem: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    err = caught.value
    assert (err.file, err.line, err.field) == (str(path), line, field), str(err)
    assert problem in err.problem, str(err)


def test_merge_keys_merge_with_written_keys_winning(tmp_path: Path) -> None:
    text = replace(
        "    parameters: {type: object, properties: {exercise",
        "    parameters: &params {type: object, properties: {exercise",
    )
    text = text.replace(
        SAVE_GOAL_PARAMETERS,
        "    parameters:\n"
        "      <<: *params\n"
        "      properties: {goal: {type: string}}\n"
        "      required: [goal]",
    )
    text = text.replace(
        "models: {anthropic: claude-test}",
        "models: {<<: [{anthropic: claude-a}, {anthropic: claude-b, openai: gpt-b}], gemini: g}",
    )
    s = load_scenario(write(tmp_path, text))
    assert s.tools[1].parameters == {
        "type": "object",
        "properties": {"goal": {"type": "string"}},
        "required": ["goal"],
    }
    assert s.tools[0].parameters["properties"] == {"exercise": {"type": "string"}}
    # Among merged mappings the first wins; a key written in the mapping wins over both.
    assert dict(s.models) == {"anthropic": "claude-a", "openai": "gpt-b", "gemini": "g"}


def test_plain_tags_are_accepted(tmp_path: Path) -> None:
    text = replace("system: You are a coach.", "system: !!str You are a coach.")
    text = text.replace("max_rounds: 1", "max_rounds: !!int 1")
    s = load_scenario(write(tmp_path, text))
    assert (s.system, s.max_rounds) == ("You are a coach.", 1)
