"""The emulated Gemini API without HTTP, answers: the response in its three wire forms (JSON,
SSE, JSON array), ids and signatures per script option, faults (429, 500, 503) and bodies that
are not JSON."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import pytest

from harness.emulator import gemini_validate as gv
from harness.emulator.gemini_api import API, INTERNAL, OVERLOADED, RATE_LIMIT
from harness.emulator.gemini_render import split_text
from harness.emulator.wire import ApiError, Context, Step
from harness.scenario.model import ScriptedCall, ScriptedTurn
from tests.emulator.gemini_fixtures import (
    FLASH,
    GEMINI3,
    answers,
    ctx_for,
    request,
    user,
)

PARALLEL = ScriptedTurn(
    text="Let me check both cities for you.",
    calls=(
        ScriptedCall(name="get_weather", arguments={"city": "Paris"}),
        ScriptedCall(name="get_weather", arguments={"city": "Oslo"}),
    ),
)
STEP = Step(turn=PARALLEL, user_index=0, turn_index=0)


def rendered(ctx: Context, step: Step = STEP) -> Any:
    reply = API.render(step, request(user()), ctx)
    return reply, b"".join(reply.chunks)


def test_non_streamed_response_shape() -> None:
    reply, raw = rendered(ctx_for(GEMINI3))
    body = json.loads(raw)
    assert list(body) == ["candidates", "usageMetadata", "modelVersion", "responseId"]
    candidate = body["candidates"][0]
    assert list(candidate) == ["content", "finishReason", "index", "finishMessage"]
    assert (candidate["finishReason"], candidate["index"]) == ("STOP", 0)
    parts = candidate["content"]["parts"]
    assert candidate["content"]["role"] == "model"
    assert parts[0] == {"text": PARALLEL.text}
    assert [p["functionCall"]["args"] for p in parts[1:]] == [{"city": "Paris"}, {"city": "Oslo"}]
    assert all(re.fullmatch(r"[0-9a-z]{8}", p["functionCall"]["id"]) for p in parts[1:])
    assert "thoughtSignature" in parts[1] and "thoughtSignature" not in parts[2]
    base64.b64decode(parts[1]["thoughtSignature"], validate=True)  # standard base64
    usage = body["usageMetadata"]
    assert usage["totalTokenCount"] == (
        usage["promptTokenCount"] + usage["candidatesTokenCount"] + usage["thoughtsTokenCount"]
    )
    assert body["modelVersion"] == GEMINI3
    assert re.fullmatch(r"[A-Za-z0-9_-]{23}", body["responseId"])
    assert raw.startswith(b'{\n  "candidates": [')
    assert reply.headers["content-type"] == "application/json; charset=UTF-8"


def test_ids_and_signatures_follow_script_options() -> None:
    _, raw = rendered(ctx_for(ids=False, signatures=False))
    parts = json.loads(raw)["candidates"][0]["content"]["parts"]
    assert parts[1] == {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}
    assert "id" not in parts[2]["functionCall"]


def test_rendered_round_trips_through_validation() -> None:
    """What the emulator answers, sent back unchanged with its results, is accepted."""
    ctx = ctx_for(GEMINI3)
    _, raw = rendered(ctx)
    content = json.loads(raw)["candidates"][0]["content"]
    ids = [p["functionCall"]["id"] for p in content["parts"][1:]]
    assert API.validate(request(user(), content, answers(*ids)), ctx) is None


def test_sse_stream_frames() -> None:
    reply, raw = rendered(ctx_for(GEMINI3, stream=True, alt="sse"))
    assert reply.streamed and reply.headers["content-type"] == "text/event-stream"
    frames = raw.decode().split("\r\n\r\n")
    assert frames[-1] == ""
    chunks = [json.loads(f.removeprefix("data: ")) for f in frames[:-1]]
    assert all(f.startswith("data: {") for f in frames[:-1])
    parts = [c["candidates"][0]["content"]["parts"] for c in chunks]
    texts = [p[0]["text"] for p in parts if "text" in p[0]]
    assert "".join(texts) == PARALLEL.text and len(texts) >= 3  # a few chunks, then ""
    calls = [p for p in parts if "functionCall" in p[0]]
    assert [len(p) for p in calls] == [1, 1]  # each parallel call whole, in its own chunk
    assert "thoughtSignature" in calls[0][0] and "thoughtSignature" not in calls[1][0]
    last = chunks[-1]["candidates"][0]
    assert (last["finishReason"], last["content"]["parts"]) == ("STOP", [{"text": ""}])
    assert all("finishReason" not in c["candidates"][0] for c in chunks[:-1])
    outputs = [c["usageMetadata"]["candidatesTokenCount"] for c in chunks]
    assert outputs == sorted(outputs)
    assert len({c["responseId"] for c in chunks}) == 1


def test_json_array_stream_pieces() -> None:
    reply, raw = rendered(ctx_for(stream=True))
    assert reply.streamed and reply.headers["content-type"] == "application/json; charset=UTF-8"
    pieces = list(reply.chunks)
    assert pieces[0].startswith(b"[{\n  ") and pieces[-1] == b"\n]"
    assert all(p.startswith(b"\n,\r\n{") for p in pieces[1:-1])
    assert len(json.loads(raw)) == len(pieces) - 1


def test_answer_and_closing_turns() -> None:
    answer = Step(turn=ScriptedTurn(text="Sunny in both."), user_index=0, turn_index=1)
    _, raw = rendered(ctx_for(), answer)
    candidate = json.loads(raw)["candidates"][0]
    assert candidate["content"]["parts"] == [{"text": "Sunny in both."}]
    assert "finishMessage" not in candidate


def test_split_text_keeps_every_character() -> None:
    text = "one two three four five six seven"
    assert "".join(split_text(text)) == text and len(split_text(text)) == 3
    assert split_text("single") == ["single"]


# --- faults and malformed bodies -----------------------------------------------------------


def test_rate_limit_puts_the_delay_in_the_body_not_a_header() -> None:
    err = API.fault("rate_limit", 7.5, ctx_for())
    reply = API.error(err)
    error = json.loads(b"".join(reply.chunks))["error"]
    assert (reply.status, error["status"], err.rule) == (429, "RESOURCE_EXHAUSTED", "rate_limit")
    assert error["message"].startswith(RATE_LIMIT)
    assert error["message"].endswith(f"model: {FLASH}\nPlease retry in 7.5s.")
    kinds = [d["@type"].rsplit(".", 1)[1] for d in error["details"]]
    assert kinds == ["Help", "QuotaFailure", "RetryInfo"]
    assert error["details"][2]["retryDelay"] == "7s"
    assert "retry-after" not in reply.headers


def test_rate_limit_without_delay() -> None:
    error = json.loads(b"".join(API.error(API.fault("rate_limit", None)).chunks))["error"]
    assert error["message"] == RATE_LIMIT
    assert [d["@type"].rsplit(".", 1)[1] for d in error["details"]] == ["Help"]


@pytest.mark.parametrize(
    ("kind", "status", "code", "message"),
    [("server_error", 500, "INTERNAL", INTERNAL), ("overloaded", 503, "UNAVAILABLE", OVERLOADED)],
)
def test_server_faults(kind: Any, status: int, code: str, message: str) -> None:
    reply = API.error(API.fault(kind, None))
    assert reply.status == status
    assert json.loads(b"".join(reply.chunks)) == {
        "error": {"code": status, "message": message, "status": code}
    }


def test_json_array_stream_wraps_errors_in_an_array() -> None:
    err = ApiError(status=400, message=gv.G1, kind="INVALID_ARGUMENT", rule="G1")
    wrapped = json.loads(b"".join(API.error(err, ctx_for(stream=True)).chunks))
    assert wrapped == [{"error": {"code": 400, "message": gv.G1, "status": "INVALID_ARGUMENT"}}]
    sse = json.loads(b"".join(API.error(err, ctx_for(stream=True, alt="sse")).chunks))
    assert isinstance(sse, dict)


def test_malformed_body() -> None:
    raw = b'{"contents": [{"parts": [{"text": "hi"}]}'
    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads(raw)
    exact = API.malformed(str(caught.value), raw)
    assert exact.message == (
        "Invalid JSON payload received. Unexpected end of string. "
        "Expected , or ] after array value.\n\n^"
    )
    assert (exact.status, exact.kind, exact.rule) == (400, "INVALID_ARGUMENT", "malformed_json")
    # From the decoder's detail alone (the server's current call): the reason only.
    assert API.malformed(str(caught.value)).message == (
        "Invalid JSON payload received. Expected , or } after key:value pair."
    )
