"""The Anthropic emulator against real recorded exchanges (`realwire/anthropic/`,
`realwire2/anthropic/`): it accepts what the real API answered 200, rejects each recorded 4xx
with the recorded message, and renders the shapes the real API sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cassettes.read import RecordedExchange, read_cassette
from harness.emulator.anthropic_messages import API
from harness.emulator.wire import Reply, Step
from harness.scenario.model import ScriptedCall, ScriptedTurn
from tests.conftest import REALWIRE_BATCHES, realwire_files
from tests.emulator.anthropic_fixtures import ctx

FILES = realwire_files("anthropic")
needs_realwire = pytest.mark.skipif(
    not FILES, reason=f"no realwire recordings under {[str(b) for b in REALWIRE_BATCHES]}"
)


def exchanges(status: int | None = None) -> list[tuple[str, RecordedExchange]]:
    out = []
    for path in FILES:
        for ex in read_cassette(path):
            if status is None or (ex.status == 200) == (status == 200):
                out.append((f"{path.stem}#{ex.index + 1}", ex))
    return out


def ids(pairs: list[tuple[str, RecordedExchange]]) -> list[str]:
    return [name for name, _ in pairs]


ACCEPTED = exchanges(200)
REJECTED = exchanges(400)


@needs_realwire
@pytest.mark.parametrize(("name", "ex"), ACCEPTED, ids=ids(ACCEPTED))
def test_recorded_200_requests_are_accepted(name: str, ex: RecordedExchange) -> None:
    assert "/v1/messages" in ex.uri  # some carry ?beta=true; the route ignores the query
    assert API.validate(ex.request_json, ctx(model=ex.request_json["model"])) is None


@needs_realwire
@pytest.mark.parametrize(("name", "ex"), REJECTED, ids=ids(REJECTED))
def test_recorded_4xx_requests_get_the_recorded_error(name: str, ex: RecordedExchange) -> None:
    err = API.validate(ex.request_json, ctx(model=ex.request_json["model"]))
    assert err is not None, f"the real API answered {ex.status}"
    recorded = ex.response_json
    assert err.status == ex.status
    assert err.kind == recorded["error"]["type"]
    assert err.message == recorded["error"]["message"]
    ours = json.loads(b"".join(API.error(err).chunks))
    # type, error, request_id (the 2025-05 recording's older envelope has no request_id)
    assert set(recorded) <= set(ours) == {"type", "error", "request_id"}
    if "request_id" in recorded:
        assert ours["request_id"].startswith("req_011C") and len(ours["request_id"]) == len(
            recorded["request_id"]
        )


@needs_realwire
def test_realwire_holds_both_kinds() -> None:
    assert ACCEPTED and REJECTED


@needs_realwire
@pytest.mark.parametrize(("name", "ex"), ACCEPTED, ids=ids(ACCEPTED))
def test_position_of_recorded_requests(name: str, ex: RecordedExchange) -> None:
    messages = ex.request_json["messages"]
    pos = API.position(ex.request_json)
    # the last user message that holds no tool result starts the query
    last = max(
        n
        for n, m in enumerate(messages)
        if m["role"] == "user"
        and (isinstance(m["content"], str) or m["content"][0]["type"] != "tool_result")
    )
    content = messages[last]["content"]
    expected = content if isinstance(content, str) else content[0]["text"]
    assert pos.user_text == expected
    assert pos.model_turns == sum(1 for m in messages[last:] if m["role"] == "assistant")
    choice = ex.request_json.get("tool_choice") or {}
    no_tools = not ex.request_json.get("tools")
    assert pos.tools_forbidden == (no_tools or choice.get("type") == "none")


def recorded_json_responses() -> list[tuple[str, RecordedExchange]]:
    return [(n, ex) for n, ex in ACCEPTED if ex.response_json is not None]


def recorded_streams() -> list[tuple[str, RecordedExchange]]:
    return [(n, ex) for n, ex in ACCEPTED if ex.response_json is None]


def our_reply(recorded_blocks: list[dict[str, Any]], stream: bool, ex: RecordedExchange) -> Reply:
    """Our rendering of a turn with the recorded turn's text and calls, for its request (whose
    test string, if any, makes the thinking redacted as on the real API). Server-tool blocks
    are the server's, not the script's: the recorded turn is compared without them."""
    thinks = any(b["type"] in ("thinking", "redacted_thinking") for b in recorded_blocks)
    texts = [b["text"] for b in recorded_blocks if b["type"] == "text"]
    calls = tuple(
        ScriptedCall(name=b["name"], arguments=b["input"])
        for b in recorded_blocks
        if b["type"] == "tool_use"
    )
    turn = ScriptedTurn(text="".join(texts) or ("" if calls else "ok"), calls=calls)
    step = Step(turn=turn, user_index=0, turn_index=0)
    return API.render(step, ex.request_json, ctx(stream, thinks))


@needs_realwire
@pytest.mark.parametrize(
    ("name", "ex"), recorded_json_responses(), ids=ids(recorded_json_responses())
)
def test_message_json_has_the_recorded_shape(name: str, ex: RecordedExchange) -> None:
    recorded = ex.response_json
    ours = json.loads(b"".join(our_reply(recorded["content"], False, ex).chunks))
    assert set(recorded) <= set(ours)
    assert set(recorded["usage"]) <= set(ours["usage"]) | OLDER_USAGE
    scripted = [b for b in recorded["content"] if b["type"] not in SERVER_BLOCKS]
    assert [b["type"] for b in ours["content"]] == merged([b["type"] for b in scripted])
    for mine in ours["content"]:
        theirs = next(b for b in scripted if b["type"] == mine["type"])
        assert set(theirs) - {"citations"} <= set(mine)
    assert ours["stop_reason"] == recorded["stop_reason"]


# A web search turn: the server's own call and result, answered by the API itself.
SERVER_BLOCKS = {"server_tool_use", "web_search_tool_result"}
# The 2025-05 recording's usage counted the server tool's requests (ours has no server tools).
OLDER_USAGE = {"server_tool_use"}


def merged(kinds: list[str]) -> list[str]:
    """Block types with runs of one type as one: the model splits its text (around citations)
    and its redacted thinking into as many blocks as it likes; we render one of each."""
    return [
        k
        for n, k in enumerate(kinds)
        if n == 0 or kinds[n - 1] != k or k not in ("text", "redacted_thinking")
    ]


def sse(text: str) -> list[dict[str, Any]]:
    events = []
    for frame in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in frame.strip().split("\n"))
        data = json.loads(lines["data"])
        assert data["type"] == lines["event"]
        events.append(data)
    return events


def grammar(events: list[dict[str, Any]]) -> list[str]:
    """Event names with runs of deltas collapsed and pings dropped (they may come anywhere)."""
    out: list[str] = []
    for e in events:
        name = e["type"]
        if name == "content_block_delta":
            name = f"delta:{e['delta']['type']}"
        if name == "content_block_start" and e["content_block"]["type"] == "redacted_thinking":
            name = "content_block_start:redacted_thinking"
        if name != "ping" and (not out or out[-1] != name):
            out.append(name)
    return _runs_of_redacted_as_one(out)


def _runs_of_redacted_as_one(names: list[str]) -> list[str]:
    """The API sends as many redacted_thinking blocks as it likes (realwire2: two); we send
    one. Each is a start and a stop, so two in a row read as one."""
    pair = ["content_block_start:redacted_thinking", "content_block_stop"]
    out: list[str] = []
    for name in names:
        out.append(name)
        if out[-4:] == pair * 2:
            del out[-2:]
    return out


@needs_realwire
@pytest.mark.parametrize(("name", "ex"), recorded_streams(), ids=ids(recorded_streams()))
def test_stream_has_the_recorded_shape(name: str, ex: RecordedExchange) -> None:
    theirs = sse(ex.response_text)
    blocks = [e["content_block"] for e in theirs if e["type"] == "content_block_start"]
    for e in theirs:  # rebuild the recorded blocks' text and input from their deltas
        delta = e.get("delta", {})
        if delta.get("type") == "text_delta":
            blocks[e["index"]]["text"] += delta["text"]
        if delta.get("type") == "input_json_delta" and delta["partial_json"]:
            blocks[e["index"]].setdefault("json", "")
            blocks[e["index"]]["json"] += delta["partial_json"]
    for block in blocks:
        if block["type"] == "tool_use" and "json" in block:
            block["input"] = json.loads(block.pop("json"))
    reply = our_reply(blocks, True, ex)
    ours = [json.loads(c.decode().split("\n")[1][len("data: ") :]) for c in reply.chunks]
    assert grammar(ours) == grammar(theirs)
    assert set(theirs[0]["message"]) - {"stop_details"} <= set(ours[0]["message"])
    assert set(theirs[0]["message"]["usage"]) <= set(ours[0]["message"]["usage"])
    their_delta, our_delta = theirs[-2], ours[-2]
    assert their_delta["delta"]["stop_reason"] == our_delta["delta"]["stop_reason"]
    assert set(their_delta["usage"]) <= set(our_delta["usage"])
    their_starts = [e["content_block"] for e in theirs if e["type"] == "content_block_start"]
    our_starts = [e["content_block"] for e in ours if e["type"] == "content_block_start"]
    for mine in our_starts:
        recorded = next(b for b in their_starts if b["type"] == mine["type"])
        assert set(recorded) <= set(mine)


def test_error_envelope_matches_the_recorded_400_shape() -> None:
    """Also without realwire: the envelope's keys and order as the stock-vcrpy recordings keep."""
    err = API.validate({"model": "m", "messages": [{"role": "user", "content": "hi"}]}, ctx())
    assert err is not None
    assert list(json.loads(b"".join(API.error(err).chunks))) == ["type", "error", "request_id"]


def test_files_list_is_a_path_list() -> None:
    assert all(isinstance(p, Path) for p in FILES)
