"""Drift: volatile values are normalised away; everything the loop decides is compared."""

from __future__ import annotations

from typing import Any

import pytest

from harness.cassettes.cassette import RecordedRequest
from harness.cassettes.drift import distance, json_path, normalise, request_drift

URI = "https://api.anthropic.com/v1/messages"


def recorded(body: Any, uri: str = URI, method: str = "POST") -> RecordedRequest:
    return RecordedRequest(method=method, uri=uri, headers={}, body=body, is_json=True)


def turn(call_id: str, result_id: str, signature: str = "sig-A") -> dict[str, Any]:
    return {
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hm", "signature": signature},
                    {"type": "tool_use", "id": call_id, "name": "f", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": result_id, "content": "ok"}],
            },
        ]
    }


SAME = [
    (
        "new model ids, echoed",
        turn("toolu_01AAAAAA", "toolu_01AAAAAA"),
        turn("toolu_01BBBBBB", "toolu_01BBBBBB"),
    ),
    (
        "new signature",
        turn("toolu_01AAAAAA", "toolu_01AAAAAA", "x"),
        turn("toolu_01AAAAAA", "toolu_01AAAAAA", "y"),
    ),
    (
        "openai items",
        {
            "input": [
                {"type": "reasoning", "id": "rs_1234", "encrypted_content": "gAAA1"},
                {"type": "function_call", "id": "fc_1234", "call_id": "call_1234"},
                {"type": "function_call_output", "call_id": "call_1234"},
            ]
        },
        {
            "input": [
                {"type": "reasoning", "id": "rs_9876", "encrypted_content": "gAAA2"},
                {"type": "function_call", "id": "fc_9876", "call_id": "call_9876"},
                {"type": "function_call_output", "call_id": "call_9876"},
            ]
        },
    ),
    (
        "gemini ids and signatures",
        {
            "contents": [
                {
                    "parts": [
                        {"functionCall": {"id": "0wa5uoee", "name": "f"}, "thoughtSignature": "AAA"}
                    ]
                },
                {"parts": [{"functionResponse": {"id": "0wa5uoee", "name": "f"}}]},
            ]
        },
        {
            "contents": [
                {
                    "parts": [
                        {"functionCall": {"id": "zz99yy88", "name": "f"}, "thoughtSignature": "BBB"}
                    ]
                },
                {"parts": [{"functionResponse": {"id": "zz99yy88", "name": "f"}}]},
            ]
        },
    ),
    ("key order", {"a": 1, "b": 2}, {"b": 2, "a": 1}),
    (
        "timestamps",
        {"created_at": 1700000000, "at": "2026-11-30T10:00:00Z"},
        {"created_at": 1800000000, "at": "2026-12-01T11:00:00Z"},
    ),
]


@pytest.mark.parametrize(("old", "new"), [(o, n) for _, o, n in SAME], ids=[n for n, _, _ in SAME])
def test_volatile_values_are_not_drift(old: Any, new: Any) -> None:
    assert request_drift(recorded(old), "POST", URI, new) is None


DIFFERENT = [
    (
        "result paired with another id",
        turn("toolu_01AAAAAA", "toolu_01AAAAAA"),
        turn("toolu_01AAAAAA", "toolu_01ZZZZZZ"),
        "messages[2].content[0].tool_use_id",
    ),
    ("text changed", {"system": "Be brief."}, {"system": "Be long."}, "system"),
    (
        "tool choice added",
        {"model": "m"},
        {"model": "m", "tool_choice": {"type": "none"}},
        "tool_choice",
    ),
    ("message dropped", {"messages": [1, 2]}, {"messages": [1]}, "messages[1]"),
]


@pytest.mark.parametrize(
    ("old", "new", "path"), [(o, n, p) for _, o, n, p in DIFFERENT], ids=[n for n, *_ in DIFFERENT]
)
def test_decisions_are_drift(old: Any, new: Any, path: str) -> None:
    drift = request_drift(recorded(old), "POST", URI, new)
    assert drift is not None and drift.first_path == path
    assert drift.lines[0].startswith(f"{path}: ")


def test_url_and_method_are_compared_but_not_the_host() -> None:
    body = {"a": 1}
    assert request_drift(recorded(body), "POST", "http://127.0.0.1:5/v1/messages", body) is None
    drift = request_drift(recorded(body), "POST", "https://api.anthropic.com/v1/complete", body)
    assert drift is not None and drift.lines == ("url: recorded /v1/messages, sent /v1/complete",)


def test_long_diffs_are_cut_with_a_count() -> None:
    drift = request_drift(recorded({str(i): i for i in range(21)}), "POST", URI, {"0": 0})
    assert drift is not None and drift.total == 20 and len(drift.lines) == 8
    assert drift.text().endswith("… and 12 more")


def test_normalise_names_ids_by_first_appearance() -> None:
    assert normalise({"x": ["toolu_abcd1234", "toolu_zzzz9999", "toolu_abcd1234"]}) == {
        "x": ["<id 1>", "<id 2>", "<id 1>"]
    }


def test_json_path() -> None:
    assert json_path("root['messages'][1]['content']") == "messages[1].content"
    assert json_path("root") == "(body)"


def test_distance_prefers_the_most_alike() -> None:
    near = recorded({"messages": [1, 2, 3]})
    far = recorded({"messages": [9]})
    sent = {"messages": [1, 2, 4]}
    assert distance(near, "POST", URI, sent) < distance(far, "POST", URI, sent)
