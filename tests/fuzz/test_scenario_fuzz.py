"""Fuzz the scenario loader (`harness check`, and every run's first step): library scenarios
with one node replaced by a hostile value, a line's value replaced by a hand-made attack, or a
few bytes mutated. Every example loads or raises one `ScenarioError` line naming the file."""

from __future__ import annotations

import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ScenarioError
from harness.scenario import load_scenario
from tests.conftest import SCENARIOS
from tests.fuzz.hostile import FUZZ, byte_mutated, dump_yaml, one_line, spliced, structural

LIBRARY = sorted(SCENARIOS.glob("*.yaml"))
TEXTS = {p.stem: p.read_text("utf-8") for p in LIBRARY}
FOLDER = Path(tempfile.mkdtemp(prefix="harness-fuzz-scenario-"))
load_scenario(LIBRARY[0])  # warm up (schemas, RE2), so no example pays for it


@pytest.fixture(autouse=True, scope="module")
def no_network() -> Iterator[None]:
    """A `$ref` (or anything else) reaching for the network fails the example."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the scenario loader tried to open a connection")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", refuse)
        patch.setattr(socket, "create_connection", refuse)
        yield


def check(content: str | bytes) -> None:
    path = FOLDER / "fuzzed.yaml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, "utf-8", errors="surrogatepass")
    try:
        load_scenario(path)
    except ScenarioError as exc:
        one_line(str(exc), path)


names = st.sampled_from(sorted(TEXTS))


@FUZZ
@given(st.data())
def test_one_node_replaced(data: st.DataObject) -> None:
    document = yaml.safe_load(TEXTS[data.draw(names)])
    check(dump_yaml(data.draw(structural(document))))


@FUZZ
@given(st.data())
def test_one_value_replaced_by_an_attack(data: st.DataObject) -> None:
    check(data.draw(spliced(TEXTS[data.draw(names)])))


@FUZZ
@given(st.data())
def test_bytes_mutated(data: st.DataObject) -> None:
    check(data.draw(byte_mutated(TEXTS[data.draw(names)].encode())))


HOSTILE_SCHEMAS = st.sampled_from(
    [
        {"type": "object", "$ref": "http://127.0.0.1:9/x.json"},
        {"type": "object", "$ref": "#"},
        {"type": "object", "properties": {"exercise": {"type": "string", "pattern": "^(a+)+$"}}},
        {"type": "object", "patternProperties": {"^(a+)+$": {}}, "additionalProperties": False},
        {"type": "object", "properties": {"exercise": {"$ref": "#/$defs/x"}}},
        {"type": "object", "$defs": {"a": {"$ref": "#/$defs/a"}}, "anyOf": [{"$ref": "#/$defs/a"}]},
    ]
)
HOSTILE_ARGUMENTS = st.sampled_from(
    [{"exercise": "a" * 30 + "!"}, {"a" * 30 + "!": 1}, {"exercise": "\ud800"}, {}]
)


@FUZZ
@given(st.data())
def test_tool_schemas_and_arguments(data: st.DataObject) -> None:
    """Hostile `parameters` on every tool and hostile arguments on every scripted call."""
    document = yaml.safe_load(TEXTS["one_tool_then_answer"])
    for tool in document["tools"]:
        tool["parameters"] = data.draw(HOSTILE_SCHEMAS)
    for message in document["messages"]:
        for turn in message["script"]["turns"]:
            for call in turn.get("calls", []):
                call["arguments"] = data.draw(HOSTILE_ARGUMENTS)
    check(dump_yaml(document))
