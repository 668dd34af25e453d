"""Record then replay: the replayed run sends and receives what the recorded run did, gives
the same trace and the same findings; drift, missing and unused recordings are reported."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.capture import Exchange
from harness.cassettes.build import real_uri
from harness.cassettes.cassette import Cassette, cassette_path
from harness.cassettes.files import dump_cassette, load_cassette, write_atomic
from harness.cassettes.replay import RULE_DRIFT, RULE_MISSING, RULE_UNUSED, ReplayApp
from harness.loop.contract import LoopCall, LoopResult
from harness.loop.reference import reference_loop
from harness.outcome import cell_findings
from harness.runner import cells
from harness.trace.parse import parse_trace
from tests.cassettes.conftest import (
    ROUND_TRIP,
    Library,
    Replayed,
    cell_of,
    record,
    replay,
    scenarios,
)

CELL_IDS = [c.id for c in cells(scenarios(ROUND_TRIP))]


@pytest.fixture(scope="module")
def replayed(library: Library) -> dict[str, Replayed]:
    return replay(library.folder, library.cells)


def _wire(provider: str, exchange: Exchange) -> tuple[Any, ...]:
    return (
        exchange.method,
        real_uri(provider, exchange.url),  # recorded from the emulator, replayed at the API
        exchange.request_body,
        exchange.status,
        exchange.response_body,
        exchange.events,
        exchange.error,
    )


def test_every_provider_and_variant_is_covered() -> None:
    assert {c.split("[")[1] for c in CELL_IDS} >= {
        f"{p}{s}]" for p in ("anthropic", "openai", "gemini") for s in ("", "-stream")
    }


@pytest.mark.parametrize("cell_id", CELL_IDS)
def test_replay_sends_and_receives_what_was_recorded(
    library: Library, replayed: dict[str, Replayed], cell_id: str
) -> None:
    recorded = library.recorded[cell_id].run
    assert recorded is not None
    again = replayed[cell_id]
    assert again.findings == []
    assert again.run.error is None
    provider = again.run.cell.provider
    assert [_wire(provider, e) for e in again.run.exchanges] == [
        _wire(provider, e) for e in recorded.exchanges
    ]
    assert [q.answer for q in again.run.queries] == [q.answer for q in recorded.queries]
    assert again.run.chat == recorded.chat
    assert [(t.name, t.arguments) for t in again.run.tool_runs] == [
        (t.name, t.arguments) for t in recorded.tool_runs
    ]


@pytest.mark.parametrize("cell_id", CELL_IDS)
def test_replay_gives_the_same_trace_and_findings(
    library: Library, replayed: dict[str, Replayed], cell_id: str
) -> None:
    recorded = library.recorded[cell_id].run
    assert recorded is not None
    again = replayed[cell_id].run
    old, new = parse_trace(recorded.exchanges), parse_trace(again.exchanges)
    assert [replace(c, url="") for c in new.calls] == [replace(c, url="") for c in old.calls]
    assert cell_findings(again) == cell_findings(recorded)


def test_a_stream_is_served_one_event_per_chunk(library: Library) -> None:
    cell = cell_of(library, "one_tool_then_answer", "anthropic", True)
    cassette = load_cassette(cassette_path(library.folder, "anthropic", cell.scenario.id, True))
    import json

    from harness.emulator.apis import route
    from harness.endpoint.capture import Recorded
    from harness.endpoint.server import Incoming

    app = ReplayApp(cassette, "anthropic")
    body = json.dumps(cassette.interactions[0].request.body).encode()
    incoming = Incoming(
        method="POST",
        path="/v1/messages",
        query="",
        headers=[],
        body=body,
        route=route("/v1/messages"),
    )
    answer = app.answer(
        incoming, Recorded(seq=1, method="POST", url="", request_headers=[], request_body=body)
    )
    assert answer.streamed
    chunks = list(answer.chunks)
    events = cassette.interactions[0].response.sse
    assert events is not None and len(chunks) == len(events.events) > 5
    assert all(c.endswith(b"\n\n") and c.count(b"\n\n") == 1 for c in chunks)


# Each patch changes one field of the SECOND request the loop sends, through the SDK call the
# adapter makes, in a way that changes what the model reads (the system text); the drift must
# be reported at call 2 and at that field only.
CHANGED_SYSTEM = "Answer in French."


def _anthropic(client: Any, number: int, kwargs: dict[str, Any]) -> None:
    if number == 2:
        kwargs["system"] = CHANGED_SYSTEM


def _openai(client: Any, number: int, kwargs: dict[str, Any]) -> None:
    if number == 2:
        kwargs["instructions"] = CHANGED_SYSTEM


def _gemini(client: Any, number: int, kwargs: dict[str, Any]) -> None:
    if number == 2:
        kwargs["config"] = kwargs["config"].model_copy(
            update={"system_instruction": CHANGED_SYSTEM}
        )


SENT = f"sent {CHANGED_SYSTEM!r}"
PATCHES: dict[str, tuple[str, Callable[[Any, int, dict[str, Any]], None], str, str]] = {
    "anthropic": ("messages.create", _anthropic, "system", SENT),
    "openai": ("responses.create", _openai, "instructions", SENT),
    "gemini": ("models.generate_content", _gemini, "systemInstruction.parts[0].text", SENT),
}


def drifting_loop(provider: str) -> Callable[[LoopCall], LoopResult]:
    attribute, patch, _, _ = PATCHES[provider]

    def loop(call: LoopCall) -> LoopResult:
        resource_name, method_name = attribute.split(".")
        resource = getattr(call.client, resource_name)
        original = getattr(resource, method_name)
        counter = itertools.count(1)

        def patched(*args: Any, **kwargs: Any) -> Any:
            patch(call.client, next(counter), kwargs)
            return original(*args, **kwargs)

        setattr(resource, method_name, patched)
        return reference_loop(call)

    return loop


@pytest.mark.parametrize("provider", ["anthropic", "openai", "gemini"])
def test_one_changed_field_is_drift_at_that_call(library: Library, provider: str) -> None:
    cell = cell_of(library, "one_tool_then_answer", provider, False)
    result = replay(library.folder, [cell], drifting_loop(provider))[cell.id]
    _, _, path, change = PATCHES[provider]
    assert [(f.rule, f.call, f.path) for f in result.findings] == [(RULE_DRIFT, 2, path)]
    message = result.findings[0].message
    assert (
        change in message
        and str(cassette_path(library.folder, provider, cell.scenario.id, False)) in message
    )
    assert result.run.queries[0].error is None  # drift is reported, the replay goes on


# A user's own loop spells the same requests its own way: sampling settings of its choice,
# defaults made explicit. Through the real SDKs, on every call; none of it is drift.
def _anthropic_spelling(client: Any, number: int, kwargs: dict[str, Any]) -> None:
    kwargs["max_tokens"] = 2000
    kwargs.setdefault("tool_choice", {"type": "auto", "disable_parallel_tool_use": False})
    kwargs["system"] = [{"type": "text", "text": kwargs["system"]}]
    for message in kwargs["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                block.setdefault("is_error", False)


def _openai_spelling(client: Any, number: int, kwargs: dict[str, Any]) -> None:
    kwargs.update(max_output_tokens=2000, parallel_tool_calls=True)
    kwargs.setdefault("tool_choice", "auto")


def _gemini_spelling(client: Any, number: int, kwargs: dict[str, Any]) -> None:
    config = kwargs["config"]
    update: dict[str, Any] = {"temperature": 0.7, "max_output_tokens": 2000}
    if config.tool_config is None:
        update["tool_config"] = {"function_calling_config": {"mode": "AUTO"}}
    kwargs["config"] = config.model_copy(update=update)


SPELLINGS = {
    "anthropic": _anthropic_spelling,
    "openai": _openai_spelling,
    "gemini": _gemini_spelling,
}


@pytest.mark.parametrize("provider", ["anthropic", "openai", "gemini"])
def test_a_loop_that_spells_requests_its_own_way_does_not_drift(
    library: Library, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(PATCHES, provider, (PATCHES[provider][0], SPELLINGS[provider], "", ""))
    cell = cell_of(library, "one_tool_then_answer", provider, False)
    result = replay(library.folder, [cell], drifting_loop(provider))[cell.id]
    assert result.findings == [], (result.run.error, result.run.queries[0].error)
    assert len(result.run.exchanges) == 2 and result.run.queries[0].error is None


def _edited(
    lib: Library, tmp_path: Path, provider: str, edit: Callable[[Cassette], Cassette]
) -> Path:
    """A copy of the library's one_tool_then_answer cassette for `provider`, edited."""
    source = cassette_path(lib.folder, provider, "one_tool_then_answer", False)
    target = cassette_path(tmp_path, provider, "one_tool_then_answer", False)
    cassette = edit(load_cassette(source))
    write_atomic(target, dump_cassette(replace(cassette, path=str(target))))
    return target


@pytest.mark.parametrize("provider", ["anthropic", "openai", "gemini"])
def test_missing_recording_names_cassette_call_and_closest(
    library: Library, tmp_path: Path, provider: str
) -> None:
    path = _edited(
        library, tmp_path, provider, lambda c: replace(c, interactions=c.interactions[:1])
    )
    cell = cell_of(library, "one_tool_then_answer", provider, False)
    result = replay(tmp_path, [cell])[cell.id]
    assert [(f.rule, f.call) for f in result.findings] == [(RULE_MISSING, 2)]
    message = result.findings[0].message
    assert str(path) in message and "call 2" in message
    assert "Closest recorded request: interaction 1" in message
    assert "harness record" in message
    # the SDK raised on the error response, and the loop reported it (never as an answer)
    error = result.run.queries[0].error
    assert error is not None and "no recording left" in error


@pytest.mark.parametrize("provider", ["anthropic", "openai", "gemini"])
def test_unused_recordings_are_a_finding(library: Library, tmp_path: Path, provider: str) -> None:
    def extra(c: Cassette) -> Cassette:
        last = c.interactions[-1]
        return replace(c, interactions=(*c.interactions, replace(last, number=last.number + 1)))

    path = _edited(library, tmp_path, provider, extra)
    cell = cell_of(library, "one_tool_then_answer", provider, False)
    result = replay(tmp_path, [cell])[cell.id]
    assert [f.rule for f in result.findings] == [RULE_UNUSED]
    assert str(path) in result.findings[0].message
    assert "interaction(s) 3 of 3 were never requested" in result.findings[0].message


def test_new_model_ids_echoed_back_are_not_drift(library: Library, tmp_path: Path) -> None:
    """A re-recorded answer brings new ids; the loop echoes them; that is not drift."""
    source = cassette_path(library.folder, "anthropic", "one_tool_then_answer", False)
    old_id = load_cassette(source).interactions[0].response.json["content"][1]["id"]
    target = cassette_path(tmp_path, "anthropic", "one_tool_then_answer", False)
    target.parent.mkdir(parents=True)
    text = source.read_text()
    first, rest = text.split("- request:", 2)[1:]
    # only the recorded RESPONSE of call 1 gets the new id; the recorded request 2 keeps the old
    response_part = first.split("  response:", 1)
    first = response_part[0] + "  response:" + response_part[1].replace(old_id, "toolu_NEWID0123")
    target.write_text(text.split("- request:", 1)[0] + "- request:" + first + "- request:" + rest)
    cell = cell_of(library, "one_tool_then_answer", "anthropic", False)
    result = replay(tmp_path, [cell])[cell.id]
    assert result.findings == []
    sent = result.run.exchanges[1].request_body
    assert "toolu_NEWID0123" in str(sent) and old_id not in str(sent)


def test_replay_of_a_different_loop_recording(tmp_path: Path) -> None:
    """Record with one loop, replay with the same: round trip holds for user loops too."""
    chosen = cells(scenarios(["one_tool_then_answer"]), ["openai"], stream=True)
    record(tmp_path, chosen, drifting_loop("openai"))
    result = replay(tmp_path, chosen, drifting_loop("openai"))
    assert result[chosen[0].id].findings == []
