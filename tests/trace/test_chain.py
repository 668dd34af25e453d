"""Stateful Responses chains resolved: a request continuing a stored response of the same trace
is judged on the conversation the model saw; the statefulness is reported once (L10's provider
rules), not again as broken pairing or a cut active sequence on every later call."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness.commands.audit import audit_cassette
from harness.trace.chain import CHAINED_PATH, resolve_chains
from harness.trace.model import (
    WireCall,
    WireMessage,
    WireRequest,
    WireResponse,
    WireToolCall,
    WireToolResult,
)
from tests.conftest import REALWIRE2

CALL = WireToolCall(id="call_1", name="lookup", arguments={}, path="output[0]")


def call(
    number: int, messages: tuple[WireMessage, ...], previous: str | None, rid: str
) -> WireCall:
    request = WireRequest(
        api="openai-responses",
        model="m",
        stream=False,
        declared_tools=("lookup",),
        tool_choice="auto",
        tool_choice_name=None,
        system="",
        messages=messages,
        previous_response_id=previous,
    )
    response = WireResponse(status=200, calls=(CALL,) if number == 1 else (), text="", id=rid)
    return WireCall(number=number, url="u", request=request, response=response)


USER = WireMessage(role="user", text="capital of PotatoLand?", path="input[0]")
RESULT = WireMessage(
    role="tool",
    results=(
        WireToolResult(
            call_id="call_1", name=None, content="Potatopolis", is_error=False, path="input[0]"
        ),
    ),
    path="input[0]",
)


def test_a_request_continuing_a_stored_response_is_resolved() -> None:
    first = call(1, (USER,), None, "resp_1")
    second = call(2, (RESULT,), "resp_1", "resp_2")
    resolved = resolve_chains([first, second])
    assert resolved[0] == first
    roles = [m.role for m in resolved[1].request.messages]
    assert roles == ["user", "model", "tool"]
    turn = resolved[1].request.messages[1]
    assert turn.path == CHAINED_PATH and turn.calls == (CALL,)


def test_a_request_naming_an_unknown_response_is_left_as_sent() -> None:
    lone = call(2, (RESULT,), "resp_elsewhere", "resp_2")
    assert resolve_chains([lone]) == (lone,)


def test_a_response_never_stored_is_not_continued() -> None:
    """Under `store: false` the API keeps nothing (O4): the request stays as sent, and what
    it lacks is reported."""
    first = call(1, (USER,), None, "resp_1")
    first = replace(first, request=replace(first.request, store=False))
    second = call(2, (RESULT,), "resp_1", "resp_2")
    assert resolve_chains([first, second]) == (first, second)


STATEFUL = (
    sorted((REALWIRE2 / "openai").glob("*previous_response_id*.yaml")) if REALWIRE2.is_dir() else []
)


@pytest.mark.skipif(not STATEFUL, reason=f"no realwire2 folder at {REALWIRE2}")
@pytest.mark.parametrize("path", STATEFUL, ids=[p.name for p in STATEFUL])
def test_recorded_chains_report_the_statefulness_once_and_nothing_it_causes(path: Path) -> None:
    audit = audit_cassette(path)
    rules = [f.rule for f in audit.findings]
    assert "openai.no_previous_response_id" in rules
    assert not {"L5", "L6", "L8"} & set(rules), rules
