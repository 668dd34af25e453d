"""The contract's JSON Schemas (harness/exec/schemas): valid Draft 2020-12, the same message
definition in both, good documents accepted and bad ones refused at their path; a query built
from a real cell validates and its chat reads back unchanged."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from harness.exec.documents import (
    answer_document,
    message_to_json,
    messages_from_json,
    problems,
    query_document,
)
from harness.loop.contract import LoopCall, LoopResult
from harness.scenario.loader import load_scenario
from harness.tools import ToolRecorder
from tests.conftest import SCENARIOS


def schema(name: str) -> dict[str, Any]:
    text = resources.files("harness.exec").joinpath(f"schemas/{name}.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@pytest.mark.parametrize("name", ["query", "answer"])
def test_the_schemas_are_draft_2020_12(name: str) -> None:
    doc = schema(name)
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(doc)


def test_both_documents_define_a_message_alike() -> None:
    query, answer = schema("query")["$defs"], schema("answer")["$defs"]
    assert {k: v for k, v in query.items() if k != "tool"} == answer


def a_call(scenario_id: str = "long_history_cut_inside_chain") -> LoopCall:
    scenario = load_scenario(SCENARIOS / f"{scenario_id}.yaml")
    return LoopCall(
        provider="gemini",
        client=None,
        model="gemini-x",
        system=scenario.system,
        history=scenario.history,
        message=scenario.messages[0].text,
        tools=ToolRecorder(scenario, lambda: 0).specs(),
        max_rounds=scenario.max_rounds,
        stream=True,
        request_size_limit=3000,
        base_url="http://127.0.0.1:1/s/x/r/1",
        api_key="dummy",
    )


def test_a_query_from_a_cell_validates_and_its_history_reads_back() -> None:
    call = a_call()
    query = query_document(call, tools_url="http://t/tools/", mcp_url="http://t/mcp")
    assert problems("query", query) == []
    assert any(m["role"] == "tool" for m in query["history"])  # a saved chain is in it
    assert messages_from_json(query["history"]) == call.history
    json.dumps(query)  # plain JSON all the way down


def test_an_answer_round_trips() -> None:
    call = a_call()
    result = LoopResult(answer="Done.", chat=call.history, error=None)
    document = answer_document(result)
    assert problems("answer", document) == []
    assert messages_from_json(document["chat"]) == call.history


GOOD_CHAT = [
    {"role": "user", "text": "hi"},
    {"role": "assistant", "text": "", "tool_calls": [{"id": "a", "name": "t", "arguments": {}}]},
    {"role": "tool", "call_id": "a", "name": "t", "content": "1", "is_error": False},
    {"role": "assistant", "text": "one", "tool_calls": []},
]


@pytest.mark.parametrize(
    ("document", "where"),
    [
        ({"answer": "x", "chat": []}, "$"),  # error missing
        ({"answer": 1, "chat": [], "error": None}, "$.answer"),
        ({"answer": "x", "chat": [], "error": 3}, "$.error"),
        ({"answer": "x", "chat": [], "error": None, "extra": 1}, "$"),
        ({"answer": "x", "chat": [{"role": "system", "text": "s"}], "error": None}, "$.chat[0]"),
        ({"answer": "x", "chat": [{"role": "user"}], "error": None}, "$.chat[0]"),
        (
            {"answer": "x", "chat": [{"role": "assistant", "text": "t"}], "error": None},
            "$.chat[0]",
        ),
        (
            {
                "answer": "x",
                "chat": [{"role": "tool", "call_id": "a", "name": "t", "content": "1"}],
                "error": None,
            },
            "$.chat[0]",
        ),
        ([], "$"),
        ("text", "$"),
    ],
)
def test_a_bad_answer_is_refused_at_its_path(document: object, where: str) -> None:
    found = problems("answer", document)
    assert found, document
    assert found[0].startswith(f"{where}:"), found


def test_good_answers_pass() -> None:
    assert problems("answer", {"answer": "one", "chat": GOOD_CHAT, "error": None}) == []
    assert problems("answer", {"answer": "", "chat": GOOD_CHAT[:1], "error": "429"}) == []


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"contract": "harness.loop/2"}, "$.contract"),
        ({"provider": "mistral"}, "$.provider"),
        ({"max_rounds": -1}, "$.max_rounds"),
        ({"request_size_limit": "big"}, "$.request_size_limit"),
        ({"tools": [{"name": "t"}]}, "$.tools[0]"),
        ({"history": [{"role": "tool", "text": "x"}]}, "$.history[0]"),
    ],
)
def test_a_bad_query_is_refused_at_its_path(change: dict[str, Any], where: str) -> None:
    query = query_document(a_call(), tools_url="http://t/tools/", mcp_url="http://t/mcp")
    found = problems("query", {**query, **change})
    assert found and found[0].startswith(f"{where}:"), found


def test_messages_map_to_the_chat_types() -> None:
    chat = messages_from_json(GOOD_CHAT)
    assert [message_to_json(m) for m in chat] == GOOD_CHAT
