"""Fuzz the emulator's request handling in process, over real HTTP on 127.0.0.1: mutated bodies
(valid first calls with parts replaced by hostile JSON values, deep nesting, huge numbers, bytes
that are not JSON) posted to every API route. Every request must get a well-formed HTTP answer:
a success, or an error whose body is JSON, never a dropped connection; within the hypothesis
deadline (bounded time per input)."""

from __future__ import annotations

import copy
import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.emulator.server import Emulator
from tests.emulator import anthropic_fixtures as af
from tests.emulator import gemini_fixtures as gf
from tests.emulator import openai_fixtures as of
from tests.emulator.hostile import ONE_TOOL, PATHS, WAIT, api_path

ASK = ONE_TOOL.messages[0].text
SEEDS: dict[str, list[Any]] = {
    "anthropic": [
        af.request({"role": "user", "content": ASK}),
        af.request(
            {"role": "user", "content": ASK},
            af.assistant(af.use("toolu_1")),
            af.user(af.result("toolu_1")),
            tool_choice={"type": "auto"},
        ),
    ],
    "openai-responses": [
        of.responses_request(of.user(ASK)),
        of.responses_request(of.user(ASK), of.call(), of.output(), tool_choice="none"),
    ],
    "openai-chat": [
        of.chat_request(of.chat_user(ASK)),
        of.chat_request(of.chat_user(ASK), of.chat_assistant("call_1"), of.chat_tool()),
    ],
    "gemini": [gf.request(gf.user(ASK)), gf.round_two()],
}
FIELD_NAMES = [
    "type",
    "role",
    "id",
    "name",
    "content",
    "tools",
    "parts",
    "tool_choice",
    "call_id",
    "tool_use_id",
    "tool_call_id",
    "input",
    "messages",
    "contents",
    "functionCall",
    "functionResponse",
    "stream",
    "model",
    "toolConfig",
    "mode",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(
        [
            "tool_use",
            "tool_result",
            "function_call",
            "function_call_output",
            "function",
            "none",
            "NONE",
            "any",
            "user",
            "assistant",
            "model",
            "tool",
        ]
    ),
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(FIELD_NAMES) | st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from paths(child, (*prefix, index))


@st.composite
def mutated_bodies(draw: st.DrawFn, api: str) -> bytes:
    body = copy.deepcopy(draw(st.sampled_from(SEEDS[api])))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        where = draw(st.sampled_from(list(paths(body))[1:]))
        parent = body
        for key in where[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "delete" and isinstance(parent, dict):
            del parent[where[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(FIELD_NAMES))] = draw(json_values)
        else:
            parent[where[-1]] = draw(json_values)
    raw = json.dumps(body).encode()
    tail = draw(st.sampled_from(["", "deep", "number", "cut", "bytes"]))
    if tail == "deep":
        depth = draw(st.integers(min_value=90, max_value=1500))
        return raw[:-1] + b', "x": ' + b"[" * depth + b"]" * depth + b"}"
    if tail == "number":
        return raw[:-1] + b', "n": ' + b"9" * draw(st.integers(4000, 6000)) + b"}"
    if tail == "cut":
        return raw[: draw(st.integers(min_value=0, max_value=len(raw)))]
    if tail == "bytes":
        return draw(st.binary(max_size=64))
    return raw


@pytest.fixture(scope="module")
def emu() -> Iterator[Emulator]:
    with Emulator([ONE_TOOL]) as emulator:
        yield emulator


def answer_to(emu: Emulator, api: str, raw: bytes, stream: bool) -> tuple[int, str, bytes]:
    path = api_path(emu, api, "fuzz")
    if api == "gemini" and stream:
        path = path.replace(":generateContent", ":streamGenerateContent") + "?alt=sse"
    connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=WAIT)
    try:
        connection.request("POST", path, raw, {"content-type": "application/json"})
        response = connection.getresponse()
        return response.status, response.getheader("content-type") or "", response.read()
    finally:
        connection.close()


FUZZ = settings(
    max_examples=40,
    deadline=5000,  # ms per input: a hang or a blow-up fails the test
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=True,
)


@pytest.mark.parametrize("api", list(PATHS))
@FUZZ
@given(data=st.data())
def test_every_mutated_request_gets_a_well_formed_answer(
    emu: Emulator, api: str, data: st.DataObject
) -> None:
    raw = data.draw(mutated_bodies(api))
    stream = data.draw(st.booleans())
    status, content_type, body = answer_to(emu, api, raw, stream)
    if status == 200:
        return  # a success: JSON or a stream, checked by the API's own tests
    assert 400 <= status < 600, status
    assert content_type.startswith("application/json"), (status, content_type)
    payload = json.loads(body)
    error = payload[0]["error"] if isinstance(payload, list) else payload["error"]
    assert isinstance(error["message"], str) and error["message"]
