"""Drift: volatile values are normalised away; everything the loop decides is compared."""

from __future__ import annotations

import os
from pathlib import Path
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


def test_an_identical_request_is_judged_without_normalising(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A replay's usual case is the recorded request sent again: no walk over it is needed.
    Anything else still is (and so a changed request is still drift)."""
    walked: list[Any] = []
    monkeypatch.setattr(
        "harness.cassettes.drift.normalise", lambda body, spelling=None: walked.append(body) or body
    )
    body = turn("toolu_1", "toolu_1")
    assert request_drift(recorded(body), "POST", URI, turn("toolu_1", "toolu_1")) is None
    assert walked == []
    assert request_drift(recorded(body), "POST", URI, turn("toolu_2", "toolu_2")) is not None
    assert len(walked) == 2


def test_two_spellings_of_one_field_are_read_alike_in_any_order() -> None:
    """Both `tool_config` and `toolConfig` in one Gemini body: the same request written in
    another key order is the same request, with or without the identical-request shortcut."""
    one, two = {"mode": "NONE"}, {"mode": "ANY"}
    recorded_body = {**gemini_round(), "tool_config": one, "toolConfig": two}
    sent_body = {**gemini_round(), "toolConfig": two, "tool_config": one}
    assert request_drift(recorded(recorded_body, GEMINI), "POST", GEMINI, sent_body) is None
    # Sent to another host (the same endpoint): not identical, so the full comparison decides.
    local = GEMINI.replace("https://generativelanguage.googleapis.com", "http://127.0.0.1:5")
    assert request_drift(recorded(recorded_body, GEMINI), "POST", local, sent_body) is None


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


# ---- one spelling per API: equivalent requests are not drift ----------------------------------

ANTHROPIC = "https://api.anthropic.com/v1/messages"
RESPONSES = "https://api.openai.com/v1/responses"
CHAT = "https://api.openai.com/v1/chat/completions"
GEMINI = "https://generativelanguage.googleapis.com/v1beta/models/gemini-3-flash:generateContent"


def anthropic_round(**extra: Any) -> dict[str, Any]:
    return {
        "model": "claude-x",
        "max_tokens": 1024,
        "system": "Be brief.",
        "tools": [{"name": "f", "description": "F.", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_01AAAA", "name": "f", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01AAAA", "content": "ok"}
                ],
            },
        ],
        **extra,
    }


def with_block(body: dict[str, Any], message: int, **fields: Any) -> dict[str, Any]:
    """`body` with `fields` added to the first block of message `message`."""
    out = json_copy(body)
    out["messages"][message]["content"][0].update(fields)
    return out


def json_copy(value: Any) -> Any:
    import json

    return json.loads(json.dumps(value))


def responses_round(**extra: Any) -> dict[str, Any]:
    return {
        "model": "gpt-x",
        "store": False,
        "instructions": "Be brief.",
        "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}],
        "input": [
            {"role": "user", "content": "hi"},
            {
                "type": "function_call",
                "id": "fc_1234",
                "call_id": "call_1234",
                "name": "f",
                "arguments": "{}",
            },
            {"type": "function_call_output", "call_id": "call_1234", "output": "ok"},
        ],
        **extra,
    }


def chat_round(**extra: Any) -> dict[str, Any]:
    return {
        "model": "gpt-x",
        "tools": [
            {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
        ],
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "call_1234",
                        "type": "function",
                        "function": {"name": "f", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1234", "content": "ok"},
        ],
        **extra,
    }


def gemini_round(**extra: Any) -> dict[str, Any]:
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {
                "role": "model",
                "parts": [{"functionCall": {"name": "f", "args": {"day_of_week": None}}}],
            },
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "f", "response": {"output": "ok"}}}],
            },
        ],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "tools": [
            {"functionDeclarations": [{"name": "f", "parametersJsonSchema": {"type": "object"}}]}
        ],
        "generationConfig": {},
        **extra,
    }


def snake_gemini() -> dict[str, Any]:
    body = gemini_round()
    body["tools"] = [
        {"function_declarations": [{"name": "f", "parameters_json_schema": {"type": "object"}}]}
    ]
    body["system_instruction"] = {"role": "user", "parts": [{"text": "Be brief."}]}
    del body["systemInstruction"], body["generationConfig"]
    return body


EQUIVALENT = [
    ("anthropic max_tokens", ANTHROPIC, anthropic_round(), anthropic_round(max_tokens=8000)),
    (
        "anthropic sampling",
        ANTHROPIC,
        anthropic_round(),
        anthropic_round(temperature=0.2, top_p=0.9, metadata={"user_id": "u"}),
    ),
    (
        "anthropic tool_choice auto",
        ANTHROPIC,
        anthropic_round(),
        anthropic_round(tool_choice={"type": "auto", "disable_parallel_tool_use": False}),
    ),
    (
        "anthropic is_error false",
        ANTHROPIC,
        anthropic_round(),
        with_block(anthropic_round(), 2, is_error=False),
    ),
    (
        "anthropic result as blocks",
        ANTHROPIC,
        anthropic_round(),
        with_block(anthropic_round(), 2, content=[{"type": "text", "text": "ok"}]),
    ),
    (
        "anthropic system as blocks",
        ANTHROPIC,
        anthropic_round(),
        anthropic_round(
            system=[{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
        ),
    ),
    (
        "anthropic nulls and stream false",
        ANTHROPIC,
        anthropic_round(),
        with_block(anthropic_round(stream=False, thinking={"type": "disabled"}), 1, caller=None),
    ),
    (
        "responses defaults",
        RESPONSES,
        responses_round(),
        responses_round(
            tool_choice="auto", parallel_tool_calls=True, max_output_tokens=500, temperature=1
        ),
    ),
    (
        "responses message item",
        RESPONSES,
        responses_round(),
        responses_round(
            input=[
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "hi"}],
                },
                *responses_round()["input"][1:],
            ]
        ),
    ),
    (
        "responses item status",
        RESPONSES,
        responses_round(),
        responses_round(
            input=[
                *responses_round()["input"][:1],
                {**responses_round()["input"][1], "status": "completed"},
                *responses_round()["input"][2:],
            ]
        ),
    ),
    (
        "chat defaults",
        CHAT,
        chat_round(),
        chat_round(
            tool_choice="auto", parallel_tool_calls=True, n=1, max_completion_tokens=99, seed=3
        ),
    ),
    (
        "chat content parts and nulls",
        CHAT,
        chat_round(),
        chat_round(
            messages=[
                {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
                {"role": "user", "content": "hi"},
                {**chat_round()["messages"][2], "content": None, "refusal": None},
                chat_round()["messages"][3],
            ]
        ),
    ),
    (
        "gemini mode AUTO and sampling",
        GEMINI,
        gemini_round(),
        gemini_round(
            toolConfig={"functionCallingConfig": {"mode": "AUTO"}},
            generationConfig={"temperature": 0.3, "maxOutputTokens": 100},
        ),
    ),
    ("gemini snake_case keys", GEMINI, gemini_round(), snake_gemini()),
]


@pytest.mark.parametrize(
    ("uri", "old", "new"), [(u, o, n) for _, u, o, n in EQUIVALENT], ids=[n for n, *_ in EQUIVALENT]
)
def test_equivalent_spellings_are_not_drift(uri: str, old: Any, new: Any) -> None:
    assert request_drift(recorded(old, uri), "POST", uri, new, ignore=()) is None
    assert request_drift(recorded(new, uri), "POST", uri, old, ignore=()) is None


def gemini_without_result() -> dict[str, Any]:
    body = gemini_round()
    body["contents"] = body["contents"][:2]
    return body


REAL_CHANGES = [
    (
        "anthropic other message",
        ANTHROPIC,
        anthropic_round(),
        with_block(anthropic_round(), 2, content="not ok"),
        "messages[2].content[0].content",
    ),
    (
        "anthropic failed tool",
        ANTHROPIC,
        anthropic_round(),
        with_block(anthropic_round(), 2, is_error=True),
        "messages[2].content[0].is_error",
    ),
    ("anthropic tool dropped", ANTHROPIC, anthropic_round(), anthropic_round(tools=[]), "tools[0]"),
    (
        "anthropic no tools allowed",
        ANTHROPIC,
        anthropic_round(),
        anthropic_round(tool_choice={"type": "none"}),
        "tool_choice",
    ),
    (
        "anthropic parallel off",
        ANTHROPIC,
        anthropic_round(),
        anthropic_round(tool_choice={"type": "auto", "disable_parallel_tool_use": True}),
        "tool_choice",
    ),
    (
        "anthropic result dropped",
        ANTHROPIC,
        anthropic_round(),
        anthropic_round(messages=anthropic_round()["messages"][:2]),
        "messages[2]",
    ),
    (
        "responses result dropped",
        RESPONSES,
        responses_round(),
        responses_round(input=responses_round()["input"][:2]),
        "input[2]",
    ),
    (
        "responses required",
        RESPONSES,
        responses_round(),
        responses_round(tool_choice="required"),
        "tool_choice",
    ),
    (
        "chat tool renamed",
        CHAT,
        chat_round(),
        chat_round(
            tools=[
                {"type": "function", "function": {"name": "g", "parameters": {"type": "object"}}}
            ]
        ),
        "tools[0].function.name",
    ),
    ("gemini result dropped", GEMINI, gemini_round(), gemini_without_result(), "contents[2]"),
    (
        "gemini mode NONE",
        GEMINI,
        gemini_round(),
        gemini_round(toolConfig={"functionCallingConfig": {"mode": "NONE"}}),
        "toolConfig",
    ),
    (
        "gemini argument null kept",
        GEMINI,
        gemini_round(),
        json_copy(gemini_round())
        | {
            "contents": [
                gemini_round()["contents"][0],
                {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
                gemini_round()["contents"][2],
            ]
        },
        "contents[1].parts[0].functionCall.args.day_of_week",
    ),
]


@pytest.mark.parametrize(
    ("uri", "old", "new", "path"),
    [(u, o, n, p) for _, u, o, n, p in REAL_CHANGES],
    ids=[n for n, *_ in REAL_CHANGES],
)
def test_what_the_model_is_shown_or_offered_still_drifts(
    uri: str, old: Any, new: Any, path: str
) -> None:
    drift = request_drift(recorded(old, uri), "POST", uri, new, ignore=())
    assert drift is not None and drift.first_path == path, drift


def test_drift_ignore_leaves_out_the_named_fields_only() -> None:
    old, new = anthropic_round(), anthropic_round(tool_choice={"type": "any"}, system="Other.")
    assert (
        request_drift(recorded(old, ANTHROPIC), "POST", ANTHROPIC, new, ignore=("tool_choice",))
        is not None
    )
    assert (
        request_drift(
            recorded(old, ANTHROPIC), "POST", ANTHROPIC, new, ignore=("tool_choice", "system")
        )
        is None
    )
    # A provider prefix scopes an entry; `*` is any one key.
    assert (
        request_drift(
            recorded(old, ANTHROPIC),
            "POST",
            ANTHROPIC,
            new,
            ignore=("gemini:tool_choice", "system"),
        )
        is not None
    )
    g_old, g_new = gemini_round(), gemini_round(generationConfig={"responseMimeType": "text/plain"})
    assert request_drift(recorded(g_old, GEMINI), "POST", GEMINI, g_new, ignore=()) is not None
    assert (
        request_drift(
            recorded(g_old, GEMINI), "POST", GEMINI, g_new, ignore=("gemini:generation_config.*",)
        )
        is None
    )
    assert (
        request_drift(
            recorded(g_old, GEMINI), "POST", GEMINI, g_new, ignore=("openai:generationConfig",)
        )
        is not None
    )


def test_the_project_drift_ignore_is_read_from_pyproject(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = anthropic_round(), anthropic_round(system="Other.")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.harness]\n")
    assert request_drift(recorded(old, ANTHROPIC), "POST", ANTHROPIC, new) is not None
    (tmp_path / "pyproject.toml").write_text(
        '[tool.harness]\ndrift_ignore = ["anthropic:system"]\n'
    )
    os.utime(tmp_path / "pyproject.toml", ns=(1, 2))  # a new mtime, as an edit gives
    assert request_drift(recorded(old, ANTHROPIC), "POST", ANTHROPIC, new) is None


def test_the_readme_drift_ignore_example_is_read_and_applied() -> None:
    from harness.settings import settings_from, tomllib  # tomli on Python 3.10

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    section = readme.split("### What drift compares", 1)[1].split("\n## ", 1)[0]
    block = section.split("```toml\n", 1)[1].split("```", 1)[0]
    ignore = settings_from(tomllib.loads(block)["tool"]["harness"], "README.md").drift_ignore
    old = anthropic_round()
    new = anthropic_round(tools=[{**old["tools"][0], "description": "Other."}], metadata={"a": 1})
    assert request_drift(recorded(old, ANTHROPIC), "POST", ANTHROPIC, new, ignore=()) is not None
    assert request_drift(recorded(old, ANTHROPIC), "POST", ANTHROPIC, new, ignore=ignore) is None
    g_new = gemini_round(generationConfig={"responseMimeType": "application/json"})
    assert (
        request_drift(recorded(gemini_round(), GEMINI), "POST", GEMINI, g_new, ignore=ignore)
        is None
    )
