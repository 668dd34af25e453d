"""The Anthropic emulator on what the second realwire batch showed: `redacted_thinking` served
(JSON and streamed) and required back unchanged; the recorded 400 for a server-tool call
followed by text; and two user messages in a row after a tool result, accepted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.emulator.anthropic_messages import API
from harness.emulator.anthropic_validate import (
    REDACTED_DATA_INVALID,
    REDACTED_DATA_REQUIRED,
    REDACTED_MAGIC,
    redacted_data,
)
from harness.emulator.wire import Step
from harness.scenario.model import ScriptedCall, ScriptedTurn
from tests.emulator.anthropic_fixtures import (
    ASK,
    MINTER,
    assistant,
    ctx,
    request,
    result,
    text,
    use,
    user,
)

THINKING = {"type": "enabled", "budget_tokens": 1024}
SECRET_ASK = {"role": "user", "content": REDACTED_MAGIC}
CALL = ScriptedTurn(calls=(ScriptedCall(name="get_weather", arguments={"city": "Paris"}),))


def rendered(body: dict[str, Any], stream: bool) -> list[Any]:
    step = Step(turn=CALL, user_index=0, turn_index=0)
    reply = API.render(step, body, ctx(stream=stream, thinking=True))
    if not stream:
        return [json.loads(b"".join(reply.chunks))]
    return [json.loads(c.decode().split("\n")[1][len("data: ") :]) for c in reply.chunks]


def redacted(where: str = "0/0") -> dict[str, Any]:
    return {"type": "redacted_thinking", "data": redacted_data(MINTER, where)}


def test_the_test_string_gets_redacted_thinking_in_json() -> None:
    [message] = rendered(request(SECRET_ASK, thinking=THINKING), stream=False)
    block = message["content"][0]
    assert list(block) == ["type", "data"] and block["type"] == "redacted_thinking"
    assert [b["type"] for b in message["content"]] == ["redacted_thinking", "tool_use"]


def test_the_test_string_gets_redacted_thinking_streamed_whole_in_its_start() -> None:
    events = rendered(request(SECRET_ASK, thinking=THINKING), stream=True)
    [start] = [e for e in events if e["type"] == "content_block_start" and e["index"] == 0]
    assert start["content_block"]["type"] == "redacted_thinking" and start["content_block"]["data"]
    assert not [e for e in events if e["type"] == "content_block_delta" and e["index"] == 0]


def test_without_the_test_string_thinking_stays_readable() -> None:
    [message] = rendered(request(ASK, thinking=THINKING), stream=False)
    assert message["content"][0]["type"] == "thinking"


def resent(block: dict[str, Any]) -> dict[str, Any]:
    return request(SECRET_ASK, assistant(block, use("toolu_01A")), user(result("toolu_01A")))


def test_redacted_thinking_resent_unchanged_is_accepted() -> None:
    assert API.validate(resent(redacted()), ctx()) is None
    assert API.validate(resent(redacted()), ctx(thinking=True)) is None


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"type": "redacted_thinking", "data": redacted()["data"][:-8] + "AAAAAAAA"}, "invalid"),
        ({"type": "redacted_thinking", "data": ""}, "invalid"),
        ({"type": "redacted_thinking"}, "missing"),
    ],
)
def test_redacted_thinking_changed_or_dropped_data_is_rejected(
    block: dict[str, Any], message: str
) -> None:
    err = API.validate(resent(block), ctx())
    expected = REDACTED_DATA_INVALID if message == "invalid" else REDACTED_DATA_REQUIRED
    assert err is not None and err.message == expected.format(n=1, k=0)


def test_a_foreign_redacted_blob_is_refused_in_this_runs_own_turns() -> None:
    """With the scenario's thinking on, the run's turns were ours: a real API's blob there
    came from another conversation."""
    foreign = {"type": "redacted_thinking", "data": "EvgFCkYIBxgCKkBmxKtCnM3xlr1zpw0Ik4FY"}
    assert API.validate(resent(foreign), ctx()) is None
    err = API.validate(resent(foreign), ctx(thinking=True))
    assert err is not None and err.message == REDACTED_DATA_INVALID.format(n=1, k=0)


SERVER_ID = "srvtoolu_01ALRFK59SkK8D9e1Xj2exhq"


def search_turn(call_id: str, *after: dict[str, Any]) -> dict[str, Any]:
    turn = assistant(text("Let me search."), use(call_id), *after)
    answer = user({**result(call_id, "Unknown tool name"), "is_error": True})
    return request({"role": "user", "content": "What day is today?"}, turn, answer)


def test_a_server_tool_call_followed_by_text_gets_the_recorded_400() -> None:
    err = API.validate(search_turn(SERVER_ID, text("Today is Friday.")), ctx())
    assert err is not None and (err.status, err.rule) == (400, "E2")
    assert err.message == (
        f"messages.1: `tool_use` ids were found without `tool_result` blocks immediately "
        f"after: {SERVER_ID}. Each `tool_use` block must have a corresponding `tool_result` "
        "block in the next message."
    )


@pytest.mark.parametrize(
    "body",
    [
        search_turn("toolu_01A", text("Today is Friday.")),  # reading (a) alone: open
        search_turn(SERVER_ID),  # reading (b) alone: open
    ],
    ids=["text-after-a-client-tool-use", "server-id-without-text-after"],
)
def test_the_readings_the_recording_leaves_open_are_accepted(body: dict[str, Any]) -> None:
    assert API.validate(body, ctx()) is None


def test_an_extra_user_message_after_the_tool_result_is_accepted() -> None:
    """realwire2 `consecutive_user_messages_after_tool_result`: 200, not merged by the client."""
    body = request(
        ASK,
        assistant(use("toolu_01A")),
        user(result("toolu_01A", "8.1")),
        user(text("Some notes the client added.")),
        assistant(text("About 8.1.")),
        user(text("And the risk?")),
    )
    assert API.validate(body, ctx()) is None
    assert API.position(body).user_text == "And the risk?"
