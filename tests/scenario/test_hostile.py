"""Hostile scenario files (a scenario in a pull request is untrusted input to CI): each attack
class of issue 14 is refused with one `ScenarioError` naming the file, line and field, before
anything expands, recurses, fetches or hangs."""

from __future__ import annotations

import gzip
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.errors import ScenarioError
from harness.limits import MAX_ALIAS_VALUES, MAX_SCENARIO_BYTES, MAX_SCENARIO_DEPTH
from harness.scenario import load_scenario
from harness.scenario.tool_schema import argument_errors, schema_problem, search

# One tool `t` whose parameters are PARAMS and one scripted call with ARGS.
TEMPLATE = """\
title: Hostile
rules: [L2]
tools:
  - name: t
    description: A tool.
    effect: read
    parameters: PARAMS
    result: ok
messages:
  - text: Go
    script:
      turns:
        - calls: [{name: t, arguments: ARGS}]
        - answer: Done.
      closing: I reached the step limit. Shall I continue?
    expect: {ending: answer}
"""


def scenario(params: Any, args: Any = None) -> str:
    params = {"type": "object", **params}  # the scenario schema asks for an object
    text = TEMPLATE.replace("PARAMS", yaml.safe_dump(params, default_flow_style=True).strip())
    return text.replace("ARGS", yaml.safe_dump(args or {}, default_flow_style=True).strip())


def load(tmp_path: Path, text: str | bytes) -> ScenarioError:
    path = tmp_path / "hostile.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, "utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert message.startswith(str(path)), message
    assert "\n" not in message, message
    return caught.value


def test_the_template_is_valid(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(scenario({"type": "object"}), "utf-8")
    assert load_scenario(path).tools[0].name == "t"


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Any connection attempt fails the test (a `$ref` must never be fetched)."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the loader tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    yield


# ---- YAML itself: aliases, nesting, size, encoding, surrogates --------------------------------


def billion_laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for n in range(1, levels):
        lines.append(f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]")
    return "\n".join(lines) + f"\ntitle: *a{levels - 1}\n"


DOCUMENT_ATTACKS = [
    ("alias bomb", billion_laughs(), 6, "aliases"),
    ("nesting 1,000 deep (lists)", "title: " + "[" * 1000 + "]" * 1000, 1, "nested deeper"),
    ("nesting 1,000 deep (mappings)", "title: " + "{a: " * 1000 + "1" + "}" * 1000, 1, "deeper"),
    (
        "nesting through an alias",
        "x: &x " + "[" * 30 + "]" * 30 + "\ntitle: " + "[" * 30 + "*x" + "]" * 30,
        2,
        "nested deeper",
    ),
    ("lone surrogate", 'title: "caf\\ud800"\n', 1, "surrogate"),
]


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [pytest.param(t, line, says, id=name) for name, t, line, says in DOCUMENT_ATTACKS],
)
def test_hostile_yaml_is_one_line(tmp_path: Path, text: str, line: int, says: str) -> None:
    error = load(tmp_path, text)
    assert error.line == line
    assert says in error.problem


def test_limits_are_what_the_docs_say() -> None:
    assert MAX_ALIAS_VALUES == 100_000
    assert MAX_SCENARIO_DEPTH == 50
    assert MAX_SCENARIO_BYTES == 1024 * 1024


def test_merge_keys_and_modest_aliases_still_load(tmp_path: Path) -> None:
    text = scenario({"type": "object"}).replace(
        "title: Hostile", "defaults: &d {type: object}\ntitle: Hostile"
    )
    # `defaults:` is not a scenario field: the alias passes the scan and the schema names it.
    error = load(tmp_path, text)
    assert error.field == "defaults"


def test_lone_surrogate_in_a_tool_result_is_caught_by_check(tmp_path: Path) -> None:
    error = load(tmp_path, scenario({"type": "object"}).replace("result: ok", 'result: "\\udc80"'))
    assert error.line == 8
    assert "surrogate (\\udc80)" in error.problem


def test_non_utf8_names_the_line(tmp_path: Path) -> None:
    text = scenario({"type": "object"}).encode().replace(b"A tool.", b"A t\xffol.")
    error = load(tmp_path, text)
    assert (error.field, error.line) == ("(file)", 5)
    assert "not UTF-8" in error.problem


def test_an_oversized_file_is_refused(tmp_path: Path) -> None:
    text = scenario({"type": "object"}) + "#" * MAX_SCENARIO_BYTES
    assert "larger than 1 MiB" in load(tmp_path, text).problem


def test_a_symlink_to_dev_zero_reads_no_more_than_the_limit(tmp_path: Path) -> None:
    link = tmp_path / "zero.yaml"
    os.symlink("/dev/zero", link)
    with pytest.raises(ScenarioError, match="larger than 1 MiB"):
        load_scenario(link)


def test_a_gzip_file_is_not_text(tmp_path: Path) -> None:
    error = load(tmp_path, gzip.compress(scenario({"type": "object"}).encode()))
    assert "not UTF-8" in error.problem


# ---- $ref in a tool's parameters ---------------------------------------------------------------

REF_ATTACKS = [
    ("remote URL", {"$ref": "http://127.0.0.1:9/schema.json"}, "$ref", "points outside"),
    ("file:", {"$ref": "file:///etc/passwd"}, "$ref", "points outside"),
    ("relative file", {"$ref": "other.json#/x"}, "$ref", "points outside"),
    ("unresolvable", {"$ref": "#/$defs/missing"}, "$ref", "refers to nothing"),
    ("nested remote", {"properties": {"a": {"$ref": "https://x.invalid/"}}}, "a.$ref", "outside"),
    ("root loop", {"$ref": "#"}, "$ref", "loop"),
    (
        "defs loop",
        {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}},
        "$ref",
        "loop",
    ),
    ("dynamic ref remote", {"$dynamicRef": "http://x.invalid/#meta"}, "$dynamicRef", "outside"),
    ("not a string", {"$ref": 3}, "$ref", "points outside"),
]


@pytest.mark.parametrize(
    ("params", "field_end", "says"),
    [pytest.param(p, f, s, id=name) for name, p, f, s in REF_ATTACKS],
)
def test_refs_resolve_only_inside_the_document(
    tmp_path: Path, no_network: None, params: dict[str, Any], field_end: str, says: str
) -> None:
    error = load(tmp_path, scenario(params))
    assert error.field.startswith("tools[0].parameters")
    assert error.field.endswith(field_end)
    assert error.line == 7
    assert says in error.problem


def test_a_recursive_schema_that_moves_into_the_value_is_fine(tmp_path: Path) -> None:
    params = {
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/node"}},
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"next": {"$ref": "#/$defs/node"}, "v": {"type": "integer"}},
            }
        },
    }
    path = tmp_path / "ok.yaml"
    path.write_text(scenario(params, {"node": {"next": {"v": 1}}}), "utf-8")
    assert load_scenario(path).tools[0].parameters == params
    bad = argument_errors(params, {"node": {"next": {"v": "x"}}})
    assert [e.message for e in bad] == ["'x' is not of type 'integer'"]


def test_the_validator_never_fetches(no_network: None) -> None:
    # A schema that was never checked: one error, no fetch, no exception.
    [error] = argument_errors({"$ref": "http://127.0.0.1:9/x.json"}, {})
    assert "cannot be applied" in error.message


# ---- pattern: a linear-time engine --------------------------------------------------------------

REDOS = "^(a+)+$"
EVIL = "a" * 50_000 + "!"


def test_redos_pattern_against_a_scripted_argument_answers(tmp_path: Path) -> None:
    params = {"type": "object", "properties": {"s": {"type": "string", "pattern": REDOS}}}
    error = load(tmp_path, scenario(params, {"s": EVIL}))
    assert error.field == "messages[0].script.turns[0].calls[0].arguments"
    assert "does not match" in error.problem


def test_redos_in_pattern_properties_and_additional_properties() -> None:
    params = {"type": "object", "patternProperties": {REDOS: {}}, "additionalProperties": False}
    assert schema_problem(params) is None
    [error] = argument_errors(params, {EVIL: 1})
    assert "do(es) not match any of the regexes" in error.message
    assert argument_errors(params, {"aaa": 1}) == []


@pytest.mark.parametrize(
    ("params", "field_end"),
    [
        ({"properties": {"s": {"pattern": "(?=a)b"}}}, "s.pattern"),
        ({"properties": {"s": {"pattern": "(a)\\1"}}}, "s.pattern"),
        ({"patternProperties": {"(?<=x)y": {}}}, "(?<=x)y"),
        ({"patternProperties": {"a": {}}, "unevaluatedProperties": False}, "unevaluatedProperties"),
        ({"properties": {"s": {"pattern": "(" * 2000 + ")" * 2000}}}, "s.pattern"),
    ],
    ids=["lookahead", "backreference", "lookbehind key", "unevaluated+pattern", "deep groups"],
)
def test_regexes_re2_cannot_run_are_one_line(
    tmp_path: Path, params: dict[str, Any], field_end: str
) -> None:
    error = load(tmp_path, scenario(params))
    assert error.field.startswith("tools[0].parameters.")
    assert error.field.endswith(field_end)


def test_search_tolerates_a_surrogate_in_the_value() -> None:
    assert search("^a", "a\ud800")


# ---- through the CLI: `harness check` -------------------------------------------------------

CLI_ATTACKS = [
    ("alias bomb", billion_laughs()),
    ("deep nesting", "title: " + "[" * 1000 + "]" * 1000),
    ("surrogate in a tool result", scenario({}).replace("result: ok", 'result: "\\ud800"')),
    ("remote $ref", scenario({"$ref": "http://127.0.0.1:9/x.json"})),
    (
        "ReDoS pattern",
        scenario({"properties": {"s": {"type": "string", "pattern": REDOS}}}, {"s": EVIL}),
    ),
    ("a key with a newline", scenario({}).replace("title: Hostile", '"ti\\ntle": Hostile')),
]


@pytest.mark.parametrize("text", [t for _, t in CLI_ATTACKS], ids=[n for n, _ in CLI_ATTACKS])
def test_check_exits_2_with_one_line(
    tmp_path: Path, no_network: None, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    from harness.cli import main

    path = tmp_path / "hostile.yaml"
    path.write_text(text, "utf-8")
    assert main(["check", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"error {path}:")
    assert captured.err.count("\n") == 1, captured.err
    assert "0 valid, 1 invalid" in captured.out
