"""Every request gets an HTTP answer: one regression test per hostile request shape that used to
kill the handler thread (the SDK saw a dropped connection and retried), plus the body-size
limit, chunked bodies, idle connections and the last-resort guard. Over real HTTP on
127.0.0.1, the framing written byte by byte where it is the attack."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from harness.emulator import anthropic_messages
from harness.emulator.limits import LISTEN_BACKLOG, Limits
from harness.emulator.server import Emulator
from tests.emulator import anthropic_fixtures as af
from tests.emulator import gemini_fixtures as gf
from tests.emulator import openai_fixtures as of
from tests.emulator.hostile import (
    ONE_TOOL,
    WAIT,
    api_path,
    chunked,
    error_message,
    nested,
    post,
    post_json,
    read_answer,
    with_raw_field,
)

ASK = ONE_TOOL.messages[0].text
FIRST_CALLS: dict[str, Any] = {
    "anthropic": af.request({"role": "user", "content": ASK}),
    "openai-responses": of.responses_request(of.user(ASK)),
    "openai-chat": of.chat_request(of.chat_user(ASK)),
    "gemini": gf.request(gf.user(ASK)),
}
APIS = list(FIRST_CALLS)


@pytest.fixture
def emu() -> Iterator[Emulator]:
    with Emulator([ONE_TOOL]) as emulator:
        yield emulator


@pytest.fixture
def small() -> Iterator[Emulator]:
    """An emulator with a 1 KiB body limit and a tiny log."""
    limits = Limits(body_bytes=1024, log_entries_per_run=3, log_runs=2, log_bytes=4096)
    with Emulator([ONE_TOOL], limits=limits) as emulator:
        yield emulator


@pytest.fixture
def impatient() -> Iterator[Emulator]:
    """An emulator that closes a connection idle for 0.2 s (apart from `small`, whose tests a
    loaded machine could delay that long between connecting and sending)."""
    with Emulator([ONE_TOOL], limits=Limits(idle_timeout=0.2)) as emulator:
        yield emulator


def with_field(api: str, name: str, value: Any) -> dict[str, Any]:
    return {**FIRST_CALLS[api], name: value}


# --- framing: Content-Length and chunked bodies ------------------------------------------------


def test_a_non_integer_content_length_is_a_400_in_the_api_envelope(emu: Emulator) -> None:
    answer = post(emu, api_path(emu, "anthropic"), b"{}", {"content-length": "12abc"})
    assert answer.status == 400
    assert "Content-Length '12abc' is not a number" in error_message("anthropic", answer)


@pytest.mark.parametrize("length", ["9" * 5000, str(10**12)])
def test_a_huge_content_length_is_the_real_413_before_any_body_is_read(
    emu: Emulator, length: str
) -> None:
    answer = post(emu, api_path(emu, "anthropic"), b"", {"content-length": length})
    assert answer.status == 413
    # Cloudflare's body, as seen in anthropics/claude-code#14567: no top-level type, no id.
    assert answer.json() == {
        "error": {"type": "request_too_large", "message": "Request exceeds the maximum size"}
    }


@pytest.mark.parametrize("api", APIS)
def test_a_body_over_the_limit_gets_each_apis_413(small: Emulator, api: str) -> None:
    answer = post(small, api_path(small, api), b"x" * 2000)
    assert answer.status == 413 and answer.headers["connection"] == "close"
    message = error_message(api, answer)
    if api == "gemini":
        assert message == "Maximum request body size 1024 exceeded, actual body size 2000"
        assert answer.json()["error"]["status"] == "Request Entity Too Large"
    elif api != "anthropic":
        assert "2000 bytes" in message and "1024 bytes" in message


def test_the_real_limits_are_32_mib_and_gemini_100_mib() -> None:
    from harness.emulator.apis import wire_api

    mib = 1024 * 1024
    sizes = {api: wire_api(api).max_body_bytes for api in APIS}
    assert sizes == {
        "anthropic": 32 * mib,
        "openai-responses": 32 * mib,
        "openai-chat": 32 * mib,
        "gemini": 100 * mib,
    }


@pytest.mark.parametrize("api", APIS)
def test_a_chunked_body_is_read_and_answered(emu: Emulator, api: str) -> None:
    body = chunked(json.dumps(FIRST_CALLS[api]).encode())
    answer = post(emu, api_path(emu, api), body, {"transfer-encoding": "chunked"})
    assert answer.status == 200, answer.body
    assert emu.log("hostile")[-1].body == FIRST_CALLS[api]


def test_a_chunked_body_over_the_limit_is_a_413(small: Emulator) -> None:
    body = chunked(b"x" * 3000, size=500)
    answer = post(small, api_path(small, "gemini"), body, {"transfer-encoding": "chunked"})
    assert answer.status == 413


@pytest.mark.parametrize(
    ("body", "headers", "expected"),
    [
        (b"zz\r\nab\r\n0\r\n\r\n", {"transfer-encoding": "chunked"}, "bad chunk-size line"),
        (b"5\r\nab", {"transfer-encoding": "chunked"}, "ended early"),
        (b"abc", {"content-length": "5"}, "the body ended after 3 of its 5 bytes"),
        (b"{}", {"transfer-encoding": "gzip"}, "is not supported"),
        (
            b"2\r\n{}\r\n0\r\n\r\n",
            {"transfer-encoding": "chunked", "content-length": "2"},
            "both Transfer-Encoding and Content-Length",
        ),
        (b"{}", {"content-length": "2", "Content-Length": "3"}, "conflicting Content-Length"),
    ],
)
def test_malformed_framing_is_a_clear_400(
    emu: Emulator, body: bytes, headers: dict[str, str], expected: str
) -> None:
    answer = post(emu, api_path(emu, "openai-chat"), body, headers)
    assert answer.status == 400
    assert expected in error_message("openai-chat", answer)
    assert answer.headers["connection"] == "close"  # the rest of the body is not read


def test_a_body_on_a_path_no_api_serves_is_still_answered(emu: Emulator) -> None:
    answer = post(emu, "/nowhere", b"{}", {"content-length": "x"})
    assert answer.status == 400 and "not a number" in answer.json()["error"]["message"]


# --- bodies that used to crash the validators --------------------------------------------------


@pytest.mark.parametrize("api", APIS)
def test_json_nested_a_thousand_deep_is_a_400(emu: Emulator, api: str) -> None:
    answer = post(emu, api_path(emu, api), with_raw_field(FIRST_CALLS[api], "m", nested(1000)))
    assert answer.status == 400
    assert "nests more than 100 levels" in error_message(api, answer)


@pytest.mark.parametrize("api", APIS)
def test_json_just_within_the_depth_limit_is_answered(emu: Emulator, api: str) -> None:
    answer = post(emu, api_path(emu, api), with_raw_field(FIRST_CALLS[api], "m", nested(95)))
    assert answer.status in (200, 400)
    error_message(api, answer) if answer.status == 400 else answer.json()


def deep_schema(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


@pytest.mark.parametrize("levels", [200, 45])
def test_a_gemini_schema_nested_deep_is_answered(emu: Emulator, levels: int) -> None:
    declaration = {"name": "get_workout_history", "description": "d"}
    declaration["parameters"] = deep_schema(levels)  # type: ignore[assignment]
    body = gf.request(gf.user(ASK), tools=[{"functionDeclarations": [declaration]}])
    answer = post_json(emu, "gemini", body)
    assert answer.status in (200, 400)
    if levels == 200:
        assert answer.json()["error"]["status"] == "INVALID_ARGUMENT"


@pytest.mark.parametrize("api", APIS)
def test_an_integer_over_4300_digits_is_a_400(emu: Emulator, api: str) -> None:
    answer = post(emu, api_path(emu, api), with_raw_field(FIRST_CALLS[api], "n", "7" * 5000))
    assert answer.status == 400
    assert "too long to read" in error_message(api, answer)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("tools", [7, "x", 1.5, True, {"a": 1}])
def test_tools_as_a_scalar_is_answered(emu: Emulator, api: str, tools: Any) -> None:
    answer = post_json(emu, api, with_field(api, "tools", tools))
    assert answer.status in (200, 400)
    if answer.status == 400:
        error_message(api, answer)


def test_responses_tools_as_a_scalar_is_openais_invalid_type(emu: Emulator) -> None:
    answer = post_json(emu, "openai-responses", with_field("openai-responses", "tools", 7))
    assert answer.status == 400
    error = answer.json()["error"]
    assert error["message"] == (
        "Invalid type for 'tools': expected an array, but got an integer instead."
    )
    assert error["param"] == "tools" and error["code"] == "invalid_type"


@pytest.mark.parametrize("bad_type", [{}, [], ["function_call"]])
def test_an_unhashable_item_type_is_openais_invalid_type(emu: Emulator, bad_type: Any) -> None:
    body = of.responses_request(of.user(ASK), {"type": bad_type, "call_id": "c"})
    answer = post_json(emu, "openai-responses", body)
    assert answer.status == 400
    assert answer.json()["error"]["param"] == "input[1].type"


def test_an_object_as_tool_use_id_is_anthropics_string_error(emu: Emulator) -> None:
    body = af.request(
        {"role": "user", "content": ASK},
        af.assistant(af.use("toolu_1")),
        af.user({"type": "tool_result", "tool_use_id": {"id": "toolu_1"}, "content": "ok"}),
    )
    answer = post_json(emu, "anthropic", body)
    assert answer.status == 400
    assert error_message("anthropic", answer) == (
        "messages.2.content.0.tool_use_id: Input should be a valid string"
    )


def test_an_object_as_tool_choice_name_is_answered(emu: Emulator) -> None:
    body = af.request({"role": "user", "content": ASK}, tool_choice={"type": "tool", "name": {}})
    answer = post_json(emu, "anthropic", body)
    assert answer.status == 400
    assert "not found in provided tools" in error_message("anthropic", answer)


def test_a_function_call_id_as_an_object_is_answered(emu: Emulator) -> None:
    body = of.responses_request(of.user(ASK), {**of.call(), "call_id": {"x": 1}}, of.output())
    answer = post_json(emu, "openai-responses", body)
    assert answer.status == 400
    assert answer.json()["error"]["param"] == "input[1].call_id"


# --- the guard, connections and the log --------------------------------------------------------


def test_an_unexpected_failure_is_a_500_naming_it_and_logged(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(body: Any, ctx: Any) -> None:
        raise KeyError("planted")

    monkeypatch.setattr(anthropic_messages.API, "validate", boom)
    answer = post_json(emu, "anthropic", FIRST_CALLS["anthropic"])
    assert answer.status == 500
    assert answer.json()["error"]["type"] == "api_error"
    assert "internal error" in error_message("anthropic", answer)
    assert "KeyError" in error_message("anthropic", answer)
    assert emu.log("hostile")[-1].status == 500


def test_an_idle_connection_is_closed_by_the_server(impatient: Emulator) -> None:
    with socket.create_connection(("127.0.0.1", impatient.port), timeout=WAIT) as sock:
        assert sock.recv(1) == b""  # closed by the server (the idle timeout), not our WAIT


def test_a_connection_stays_usable_after_an_answered_error(emu: Emulator) -> None:
    good = json.dumps(FIRST_CALLS["anthropic"]).encode()
    path = api_path(emu, "anthropic")
    with socket.create_connection(("127.0.0.1", emu.port), timeout=WAIT) as sock:
        for body, status in ((b"[[[", 400), (good, 200)):
            head = f"POST {path} HTTP/1.1\r\nhost: x\r\ncontent-length: {len(body)}\r\n\r\n"
            sock.sendall(head.encode() + body)
            answer = read_answer(sock)
            assert answer.status == status and "connection" not in answer.headers


def test_the_listen_backlog_is_sane(emu: Emulator) -> None:
    assert LISTEN_BACKLOG == 128
    assert emu._endpoint._server.request_queue_size == LISTEN_BACKLOG


def test_the_log_is_bounded_per_run_and_in_runs(small: Emulator) -> None:
    for n in range(5):
        post_json(small, "anthropic", FIRST_CALLS["anthropic"], run="a")
        assert len(small.log("a")) == min(n + 1, 3)
    post_json(small, "anthropic", FIRST_CALLS["anthropic"], run="b")
    post_json(small, "anthropic", FIRST_CALLS["anthropic"], run="c")
    assert small.log("a") == []  # the least recently written of three runs, over the cap of 2
    assert len(small.log("b")) == 1 and len(small.log("c")) == 1


def test_the_log_keeps_a_run_within_its_byte_budget(small: Emulator) -> None:
    body = json.dumps(FIRST_CALLS["anthropic"]).encode()
    for _ in range(3):
        post_json(small, "anthropic", FIRST_CALLS["anthropic"], run="a")
    entries = small.log("a")
    assert sum(e.size for e in entries) <= 4096
    assert entries and all(e.size == len(body) for e in entries)
