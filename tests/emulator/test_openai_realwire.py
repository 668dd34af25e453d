"""Both OpenAI emulators against real recorded exchanges (`realwire/openai/`,
`realwire2/openai/`): every request the real API answered 200 is accepted (a request chained by
`previous_response_id` after its file's earlier responses were stored, as the real API kept
them), each recorded 4xx is rejected with the recorded message and envelope, and what we render
for such a request has the fields the real reply had."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from harness.cassettes.read import RecordedExchange, read_cassette
from harness.emulator.openai_chat import API as CHAT
from harness.emulator.openai_common import OpenAiErrors
from harness.emulator.openai_responses import API as RESPONSES
from harness.emulator.openai_store import responses_of
from harness.emulator.wire import Context, Step
from harness.scenario.model import ScriptedCall, ScriptedTurn
from tests.conftest import REALWIRE_BATCHES, realwire_files
from tests.emulator.openai_fixtures import ctx

FILES = realwire_files("openai")
needs_realwire = pytest.mark.skipif(
    not FILES, reason=f"no realwire recordings under {[str(b) for b in REALWIRE_BATCHES]}"
)
EARLIER: dict[str, list[RecordedExchange]] = {}


def exchanges(ok: bool) -> list[tuple[str, RecordedExchange]]:
    out = []
    for path in FILES:
        recorded = read_cassette(path)
        for ex in recorded:
            EARLIER[f"{path.stem}#{ex.index + 1}"] = recorded[: ex.index]
            if (ex.status == 200) == ok:
                out.append((f"{path.stem}#{ex.index + 1}", ex))
    return out


def recorded_output(ex: RecordedExchange) -> tuple[str, list[Any]]:
    """The recorded response's id and output items (from `response.completed` if streamed)."""
    body = ex.response_json
    if body is None:
        done = [e for e in _sse_events(ex.response_text) if e["type"] == "response.completed"]
        body = done[-1]["response"]
    return body["id"], body["output"]


def api_for(ex: RecordedExchange) -> Any:
    if ex.uri.endswith("/v1/responses"):
        return RESPONSES
    assert ex.uri.endswith("/v1/chat/completions"), ex.uri
    return CHAT


def names(pairs: list[tuple[str, RecordedExchange]]) -> list[str]:
    return [name for name, _ in pairs]


class Emulator:
    """Stands for the emulator that owns a run's store (any object with a weak reference)."""


def stateful_ctx(name: str, ex: RecordedExchange) -> Context:
    """The emulator's context for `ex` with the run's store holding what the real API kept
    before it: every earlier 200 Responses reply of its file made under `store` true or unset."""
    owner = Emulator()
    responses = responses_of(owner, "realwire")
    for earlier in EARLIER[name]:
        body = earlier.request_json
        if earlier.status != 200 or api_for(earlier) is not RESPONSES:
            continue
        if body.get("store", True) is False:
            continue
        response_id, output = recorded_output(earlier)
        raw = body["input"]
        sent = [{"role": "user", "content": raw}] if isinstance(raw, str) else raw
        responses.keep(response_id, body.get("previous_response_id"), sent, output)
    base = ctx(model=ex.request_json["model"])
    return replace(base, run="realwire", store_owner=owner)


ACCEPTED = exchanges(True)
REJECTED = exchanges(False)


@needs_realwire
def test_both_apis_and_a_rejection_are_recorded() -> None:
    apis = {api_for(ex).name for _, ex in ACCEPTED}
    assert apis == {"openai-responses", "openai-chat"}
    assert REJECTED


@needs_realwire
@pytest.mark.parametrize(("name", "ex"), ACCEPTED, ids=names(ACCEPTED))
def test_recorded_200_requests_are_accepted(name: str, ex: RecordedExchange) -> None:
    api = api_for(ex)
    assert api.validate(ex.request_json, stateful_ctx(name, ex)) is None
    api.position(ex.request_json)  # reads every recorded shape


@needs_realwire
@pytest.mark.parametrize(("name", "ex"), REJECTED, ids=names(REJECTED))
def test_recorded_4xx_requests_get_the_recorded_error(name: str, ex: RecordedExchange) -> None:
    api: OpenAiErrors = api_for(ex)
    err = api_for(ex).validate(ex.request_json, stateful_ctx(name, ex))
    assert err is not None, f"the real API answered {ex.status}"
    assert err.status == ex.status
    ours = json.loads(b"".join(api.error(err).chunks))
    assert ours == ex.response_json


def _recorded_turn(ex: RecordedExchange) -> ScriptedTurn:
    """A scripted turn of the same kind as the recorded reply: calls, or a text answer."""
    if ex.response_json is not None:
        body = ex.response_json
        wanted = (
            [i["type"] for i in body["output"]]
            if "output" in body
            else [body["choices"][0]["finish_reason"]]
        )
    else:
        events = _sse_events(ex.response_text)
        wanted = [json.dumps(e.get("item", {}).get("type")) for e in events] + [
            c.get("finish_reason") for e in events for c in e.get("choices", [])
        ]
    calls = (ScriptedCall(name="lookup", arguments={"key": "start"}),)
    said = any(w in ("message", '"message"') for w in wanted)
    if any(w in ("function_call", '"function_call"', "tool_calls") for w in wanted):
        # interim text before the calls (gpt-5.5's `phase: commentary` message)
        return ScriptedTurn(text="Let me look that up." if said else "", calls=calls)
    return ScriptedTurn(text="Here is the answer.")


def _rendered(ex: RecordedExchange, stream: bool) -> bytes:
    model = ex.request_json["model"]
    step = Step(turn=_recorded_turn(ex), user_index=0, turn_index=0)
    reply = api_for(ex).render(step, ex.request_json, ctx(model=model, stream=stream))
    return b"".join(reply.chunks)


JSON_REPLIES = [(n, ex) for n, ex in ACCEPTED if ex.response_json is not None]
STREAMED = [(n, ex) for n, ex in ACCEPTED if ex.response_json is None]


@needs_realwire
@pytest.mark.parametrize(("name", "ex"), JSON_REPLIES, ids=names(JSON_REPLIES))
def test_rendered_json_has_the_recorded_fields(name: str, ex: RecordedExchange) -> None:
    real, ours = ex.response_json, json.loads(_rendered(ex, stream=False))
    assert set(real) <= set(ours), f"missing: {set(real) - set(ours)}"
    if api_for(ex) is RESPONSES:
        for item in real["output"]:
            same = [o for o in ours["output"] if o["type"] == item["type"]]
            if same and item["type"] != "reasoning":  # recorded summaries vary
                assert set(item) - {"phase"} <= set(same[0]), item["type"]
        assert set(real["usage"]) == set(ours["usage"])
    else:
        real_message = real["choices"][0]["message"]
        assert set(real_message) <= set(ours["choices"][0]["message"])
        assert set(real["usage"]) == set(ours["usage"])


def _sse_events(text: str) -> list[dict[str, Any]]:
    events = []
    for block in text.split("\n\n"):
        data = [line[len("data: ") :] for line in block.split("\n") if line.startswith("data: ")]
        if data and data[0] != "[DONE]":
            events.append(json.loads(data[0]))
    return events


def _fields_by_kind(events: list[dict[str, Any]], chat: bool) -> dict[str, set[str]]:
    fields: dict[str, set[str]] = {}
    for event in events:
        kind = ("usage" if not event["choices"] else "delta") if chat else event["type"]
        fields.setdefault(kind, set()).update(event)
    return fields


@needs_realwire
@pytest.mark.parametrize(("name", "ex"), STREAMED, ids=names(STREAMED))
def test_rendered_stream_has_the_recorded_events_and_fields(
    name: str, ex: RecordedExchange
) -> None:
    chat = api_for(ex) is CHAT
    real = _fields_by_kind(_sse_events(ex.response_text), chat)
    ours = _fields_by_kind(_sse_events(_rendered(ex, stream=True).decode()), chat)
    for kind, fields in real.items():
        assert kind in ours, f"we never send {kind}"
        assert fields == ours[kind], f"{kind}: {fields ^ ours[kind]}"
    if chat:
        assert _rendered(ex, stream=True).endswith(b"data: [DONE]\n\n")
