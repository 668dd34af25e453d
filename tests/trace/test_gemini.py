"""Gemini: camelCase and snake_case requests, parts, and chunk merging."""

from __future__ import annotations

from typing import Any

import pytest

from harness.trace.gemini import signature_bytes
from tests.trace.exchanges import URLS, call, problems


def fc(name: str, args: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"functionCall": {"name": name, "args": args, **fields}}


def fr(name: str, response: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"functionResponse": {"name": name, "response": response, **fields}}


def gemini_error(code: int, message: str, status: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}


DECLARATIONS = [{"name": "get_weather"}, {"name": "now"}]
USER = {"role": "user", "parts": [{"text": "Weather in Paris and Oslo?"}]}
MODEL = {
    "role": "model",
    "parts": [
        {"text": "Planning…", "thought": True},
        {"text": "Checking."},
        {**fc("get_weather", {"city": "Paris"}, id="fc-1"), "thoughtSignature": "c2ln"},
        fc("get_weather", {"city": "Oslo"}),
        {"thoughtSignature": "c2lnLTI="},
    ],
}


def request(**fields: Any) -> dict[str, Any]:
    return {"contents": [USER], "tools": [{"functionDeclarations": DECLARATIONS}], **fields}


def config(mode: str, names: list[str] | None = None, snake: bool = False) -> dict[str, Any]:
    calling: dict[str, Any] = {"mode": mode}
    if names is not None:
        calling["allowed_function_names" if snake else "allowedFunctionNames"] = names
    key = "function_calling_config" if snake else "functionCallingConfig"
    return {"tool_config" if snake else "toolConfig": {key: calling}}


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({}, ("unset", None)),
        (config("AUTO"), ("auto", None)),
        (config("ANY"), ("required", None)),
        (config("ANY", ["get_weather", "now"]), ("required", None)),
        (config("ANY", ["now"]), ("named", "now")),
        (config("ANY", ["now"], snake=True), ("named", "now")),
        (config("NONE", snake=True), ("none", None)),
        (config("VALIDATED"), ("auto", None)),
        (config("none"), ("none", None)),
    ],
)
def test_tool_choice_modes(fields: dict[str, Any], expected: tuple[Any, ...]) -> None:
    got = call("gemini", request(**fields))
    assert (got.request.tool_choice, got.request.tool_choice_name) == expected
    assert got.problems == ()


def test_unknown_mode_is_a_problem() -> None:
    got = call("gemini", request(**config("SOMETIMES")))
    assert got.request.tool_choice == "unset"
    assert [p.path for p in got.problems] == ["toolConfig"]


@pytest.mark.parametrize(
    ("fields", "headers", "expected"),
    [
        (
            {"systemInstruction": {"role": "user", "parts": [{"text": "A"}, {"text": "B"}]}},
            {"x-goog-api-client": "google-genai-sdk/3.6.1+afc gl-python/3.12"},
            ("A\nB", True),
        ),
        (
            {"system_instruction": {"parts": [{"text": "Be brief."}]}},
            {"x-goog-api-client": "google-genai-sdk/3.6.1 gl-python/3.12"},
            ("Be brief.", False),
        ),
        ({"systemInstruction": "plain"}, {}, ("plain", False)),
    ],
)
def test_system_and_automatic_function_calling(
    fields: dict[str, Any], headers: dict[str, str], expected: tuple[str, bool]
) -> None:
    got = call("gemini", request(**fields), headers=headers).request
    assert (got.system, got.automatic_function_calling) == expected


def test_model_and_stream_come_from_the_url() -> None:
    got = call("gemini", request()).request
    assert (got.api, got.model, got.stream) == ("gemini", "gemini-3-flash", False)
    assert got.declared_tools == ("get_weather", "now")
    streamed = call("gemini-stream", request()).request
    assert (streamed.model, streamed.stream) == ("gemini-3-flash", True)
    assert URLS["gemini-stream"].endswith("?alt=sse")


def test_model_turn_parts() -> None:
    results = {
        "role": "user",
        "parts": [
            fr("get_weather", {"output": "sunny"}, id="fc-1"),
            fr("get_weather", {"error": "Not executed"}),
            fr("now", {"time": "12:00", "zone": "UTC"}),
        ],
    }
    got = call("gemini", request(contents=[USER, MODEL, results]))
    assert got.problems == ()
    user, model, tool = got.request.messages
    assert (user.role, user.text, user.path) == (
        "user",
        "Weather in Paris and Oslo?",
        "contents[0]",
    )
    assert (model.role, model.text, model.raw) == ("model", "Checking.", MODEL)
    assert [(c.id, c.name, c.arguments, c.signature, c.path) for c in model.calls] == [
        ("fc-1", "get_weather", {"city": "Paris"}, "c2ln", "contents[1].parts[2]"),
        (None, "get_weather", {"city": "Oslo"}, None, "contents[1].parts[3]"),
    ]
    assert [(o.kind, o.token, o.text, o.path) for o in model.opaque] == [
        ("thought", None, "Planning…", "contents[1].parts[0]"),
        ("thought_signature", "c2ln", None, "contents[1].parts[2]"),
        ("thought_signature", "c2lnLTI=", None, "contents[1].parts[4]"),
    ]
    assert [(r.call_id, r.name, r.content, r.is_error) for r in tool.results] == [
        ("fc-1", "get_weather", "sunny", False),
        (None, "get_weather", "Not executed", True),
        (None, "now", '{"time":"12:00","zone":"UTC"}', False),
    ]


def test_snake_case_parts() -> None:
    model = {
        "role": "model",
        "parts": [{"function_call": {"name": "now", "args": {}}, "thought_signature": "c2ln"}],
    }
    results = {"role": "user", "parts": [{"function_response": {"name": "now", "response": {}}}]}
    got = call("gemini", request(contents=[USER, model, results]))
    assert got.problems == ()
    _, model_message, tool = got.request.messages
    assert [(c.name, c.signature) for c in model_message.calls] == [("now", "c2ln")]
    assert [(r.name, r.content) for r in tool.results] == [("now", "{}")]


def test_bad_parts_and_roles_are_problems() -> None:
    contents = [
        {"role": "user", "parts": [{"hologram": {}}, {"text": "a", "inlineData": {}}]},
        {"role": "model", "parts": [{"functionResponse": {"name": "x", "response": {}}}]},
        {"role": "narrator", "parts": []},
    ]
    assert problems(call("gemini", request(contents=contents))) == [
        "request:contents[0].parts[0]: unknown part field(s) hologram",
        "request:contents[0].parts[1]: part holds several data fields: text, inlineData",
        "request:contents[1].parts[0]: functionResponse part in a model content",
        "request:contents[2]: content role 'narrator' is neither user nor model",
    ]


def test_results_after_text_are_not_results_first() -> None:
    parts = [{"text": "here"}, {"functionResponse": {"name": "now", "response": {}}}]
    got = call("gemini", request(contents=[USER, MODEL, {"role": "user", "parts": parts}]))
    assert (got.request.messages[2].role, got.request.messages[2].results_first) == ("tool", False)


# ---- responses -------------------------------------------------------------------------


def chunk(*parts: dict[str, Any], finish: str | None = None, **usage: int) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "usageMetadata": usage, "responseId": "r-1"}


CHUNKS = [
    chunk({"text": "Plan", "thought": True}, promptTokenCount=10, thoughtsTokenCount=3),
    chunk({"text": "ning.", "thought": True}),
    chunk({"text": "The "}, candidatesTokenCount=1),
    chunk({"text": "weather"}, {"text": " is"}),
    chunk({"text": "", "thoughtSignature": "c2ln"}, finish="STOP", candidatesTokenCount=5),
]


def test_json_response() -> None:
    body = {
        "candidates": [{"content": MODEL, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 4, "promptTokensDetails": [{"tokenCount": 4}]},
        "responseId": "r-0",
    }
    got = call("gemini", request(), body).response
    assert (got.id, got.text, got.stop_reason, got.candidates, got.streamed) == (
        "r-0",
        "Checking.",
        "STOP",
        1,
        False,
    )
    assert [c.path for c in got.calls] == [
        "candidates[0].content.parts[2]",
        "candidates[0].content.parts[3]",
    ]
    assert dict(got.usage) == {"promptTokenCount": 4}
    assert got.raw == MODEL


@pytest.mark.parametrize("as_sse", [True, False])
def test_stream_chunks_are_merged(as_sse: bool) -> None:
    if as_sse:
        got = call("gemini-stream", request(), events=[(None, c) for c in CHUNKS])
    else:
        got = call("gemini-stream", request(), CHUNKS)
    response = got.response
    assert got.problems == ()
    assert (response.streamed, response.text, response.stop_reason, response.id) == (
        True,
        "The weather is",
        "STOP",
        "r-1",
    )
    assert response.raw["parts"] == [
        {"text": "Planning.", "thought": True},
        {"text": "The weather"},
        {"text": " is"},  # a part of the same chunk is not merged into its neighbour
        {"text": "", "thoughtSignature": "c2ln"},  # a signature part is kept as it came
    ]
    assert [(o.kind, o.token, o.text) for o in response.opaque] == [
        ("thought", None, "Planning."),
        ("thought_signature", "c2ln", None),
    ]
    assert dict(response.usage) == {
        "promptTokenCount": 10,
        "thoughtsTokenCount": 3,
        "candidatesTokenCount": 5,
    }


def test_stream_keeps_calls_and_empty_text_after_them() -> None:
    call_part = {"functionCall": {"name": "now", "args": {}}, "thoughtSignature": "c2ln"}
    chunks = [chunk(call_part), chunk({"text": ""}, finish="STOP")]
    got = call("gemini-stream", request(), chunks).response
    assert got.raw["parts"] == [call_part, {"text": ""}]
    assert [c.signature for c in got.calls] == ["c2ln"]


def test_several_candidates_are_counted() -> None:
    body = chunk({"text": "a"})
    body["candidates"].append({"content": {"parts": [{"text": "b"}]}, "index": 1})
    got = call("gemini", request(), body).response
    assert (got.candidates, got.text) == (2, "a")


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            400,
            gemini_error(400, "Please ensure …", "INVALID_ARGUMENT"),
            ("Please ensure …", "INVALID_ARGUMENT"),
        ),
        (
            429,
            [gemini_error(429, "Resource exhausted", "RESOURCE_EXHAUSTED")],
            ("Resource exhausted", "RESOURCE_EXHAUSTED"),
        ),
        (
            200,
            [chunk({"text": "a"}), gemini_error(500, "Internal", "INTERNAL")],
            ("Internal", "INTERNAL"),
        ),
    ],
)
def test_errors(status: int, body: Any, expected: tuple[str, str]) -> None:
    got = call("gemini-stream", request(), body, status=status)
    assert (got.response.status, got.response.error, got.response.error_type) == (
        status,
        *expected,
    )


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("+/8=", b"\xfb\xff"),
        ("-_8=", b"\xfb\xff"),
        ("c2ln", b"sig"),
        ("not base64!", None),
        (None, None),
    ],
)
def test_signature_bytes_accepts_both_alphabets(token: str | None, expected: bytes | None) -> None:
    assert signature_bytes(token) == expected
