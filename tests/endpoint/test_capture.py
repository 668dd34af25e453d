"""Capture at the endpoint: every exchange in arrival order, as received and as answered,
secrets removed, SDK-internal extra requests (retries, Gemini's automatic function calling)
included, replies the client walked away from and replies that never completed marked."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from harness.capture import parse_sse
from harness.emulator.server import Emulator
from harness.endpoint.capture import Recorded
from harness.endpoint.server import Answer, Incoming
from harness.loop.clients import make_clients
from harness.scenario import Scenario, load_scenario
from harness.scrub import find_key, scrub_url
from tests.conftest import SCENARIOS
from tests.endpoint.support import serving

ONE_TOOL = load_scenario(SCENARIOS / "one_tool_then_answer.yaml")
TOOLS = [
    {
        "name": "get_workout_history",
        "description": "d",
        "input_schema": {"type": "object", "properties": {}},
    }
]
FAKE_KEY = "sk-ant-api03-FAKEFAKEFAKEFAKEFAKEFAKEFAKE"


def make_client(provider: Any, *, api_key: str, base_url: str, max_retries: int = 2) -> Any:
    return make_clients(provider, base_url=base_url, api_key=api_key, max_retries=max_retries).sync


def _ask(client: object, stream: bool = False) -> object:
    messages = [{"role": "user", "content": ONE_TOOL.messages[0].text}]
    if stream:
        with client.messages.stream(
            model="m",
            max_tokens=64,
            messages=messages,  # type: ignore[attr-defined]
            tools=TOOLS,
        ) as s:
            return s.get_final_message()
    return client.messages.create(model="m", max_tokens=64, messages=messages, tools=TOOLS)  # type: ignore[attr-defined]


def test_json_exchange_is_captured_decoded_and_without_secrets(
    emulator: Emulator, run_id: str
) -> None:
    client = make_client(
        "anthropic",
        api_key=FAKE_KEY,
        base_url=emulator.base_urls(ONE_TOOL.id, run_id)["anthropic"],
        max_retries=0,
    )
    _ask(client)
    (exchange,) = emulator.exchanges(run_id)
    assert exchange.status == 200 and exchange.error is None and not exchange.streamed
    assert exchange.request_body["messages"][0]["content"] == ONE_TOOL.messages[0].text
    assert exchange.response_body["stop_reason"] == "tool_use"
    dumped = json.dumps([exchange.request_headers, exchange.response_headers, exchange.url])
    assert FAKE_KEY not in dumped and "authorization" not in exchange.request_headers


def test_streamed_exchange_keeps_its_events_and_the_sdk_still_streams(
    emulator: Emulator, run_id: str
) -> None:
    client = make_client(
        "anthropic",
        api_key="k",
        base_url=emulator.base_urls(ONE_TOOL.id, run_id)["anthropic"],
        max_retries=0,
    )
    message = _ask(client, stream=True)
    assert message.stop_reason == "tool_use"  # type: ignore[attr-defined]
    (exchange,) = emulator.exchanges(run_id)
    assert exchange.streamed and exchange.response_body is None
    names = [e.event for e in exchange.events or ()]
    assert names[0] == "message_start" and names[-1] == "message_stop"
    assert all(isinstance(e.data, dict) for e in exchange.events or ())


def test_sdk_retries_are_captured_as_separate_exchanges(tmp_path: Path) -> None:
    text = (
        (SCENARIOS / "one_tool_then_answer.yaml")
        .read_text()
        .replace(
            "        - text: Let me look at your history.\n",
            "        - text: Let me look at your history.\n"
            "          fault: {kind: server_error, times: 1}\n",
        )
    )
    (tmp_path / "retry.yaml").write_text(text)
    scenario = load_scenario(tmp_path / "retry.yaml")
    with Emulator([scenario]) as emu:
        client = make_client(
            "anthropic",
            api_key="k",
            base_url=emu.base_urls("retry", "r")["anthropic"],
            max_retries=1,
        )
        _ask(client)
        exchanges = emu.exchanges("r")
    assert [e.status for e in exchanges] == [500, 200]
    assert exchanges[1].request_headers.get("x-stainless-retry-count") == "1"
    assert [e.error for e in exchanges] == [None, None]


def _rate_limited_once(tmp_path: Path) -> Scenario:
    text = (
        (SCENARIOS / "one_tool_then_answer.yaml")
        .read_text()
        .replace(
            "        - text: Let me look at your history.\n",
            "        - text: Let me look at your history.\n"
            "          fault: {kind: rate_limit, retry_after: 0, times: 1}\n",
        )
    )
    (tmp_path / "gemini_rate_limit.yaml").write_text(text)
    return load_scenario(tmp_path / "gemini_rate_limit.yaml")


@pytest.mark.parametrize("max_retries", [2, 0])
def test_gemini_retries_a_rate_limit_as_the_other_sdks_do(
    emulator: Emulator, run_id: str, tmp_path: Path, max_retries: int
) -> None:
    from google.genai import errors

    scenario = _rate_limited_once(tmp_path)
    emulator.add(scenario)
    client = make_client(
        "gemini",
        api_key="k",
        base_url=emulator.base_urls(scenario.id, run_id)["gemini"],
        max_retries=max_retries,
    )

    def ask() -> Any:
        return client.models.generate_content(
            model="gemini-2.5-flash",
            contents=scenario.messages[0].text,
            config={
                "tools": [{"function_declarations": [{"name": "get_workout_history"}]}],
                "automatic_function_calling": {"disable": True},
            },
        )

    if max_retries == 0:
        with pytest.raises(errors.ClientError):
            ask()
        assert [e.status for e in emulator.exchanges(run_id)] == [429]
        return
    reply = ask()
    assert [c.name for c in reply.function_calls or []] == ["get_workout_history"]
    assert [e.status for e in emulator.exchanges(run_id)] == [429, 200]


BIG_CHUNK = b"data: " + b"x" * 65_536 + b"\n\n"
BIG_COUNT = 400


class _Big:
    """An app whose streamed answer is far larger than the socket buffers, so a client that
    stops reading makes the endpoint's writes fail: chunks as they come (a generator, as a live
    relay's), or all held in memory (a list, as a replay's: written in one send)."""

    def __init__(self, in_memory: bool = False) -> None:
        self.in_memory = in_memory

    def answer(self, incoming: Incoming, record: Recorded) -> Answer:
        chunks = (BIG_CHUNK for _ in range(BIG_COUNT))
        return Answer(
            status=200,
            headers=[("content-type", "text/event-stream")],
            chunks=list(chunks) if self.in_memory else chunks,
            streamed=True,
        )


@pytest.mark.parametrize("in_memory", [False, True], ids=["as-they-come", "in-memory"])
def test_a_reply_the_client_walked_away_from_is_not_recorded_as_whole(in_memory: bool) -> None:
    with serving(_Big(in_memory)) as served:
        port = served.endpoint.port
        with socket.create_connection(("127.0.0.1", port)) as sock:
            path = "/s/s/r/r/v1/messages"
            sock.sendall(
                f"POST {path} HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{{}}".encode()
            )
            sock.recv(1024)  # the headers and a little of the body, then gone
        served.run.capture.settle()
        (exchange,) = served.run.capture.exchanges()
        (record,) = served.run.capture.records()
    assert exchange.status == 200
    assert exchange.error is not None and "closed the connection" in exchange.error
    # The body kept is the chunks that went out whole, and not all of them.
    assert record.body == BIG_CHUNK * (len(record.body) // len(BIG_CHUNK))
    assert len(record.body) < len(BIG_CHUNK) * BIG_COUNT
    assert f"after {len(record.body)} bytes" in exchange.error


class _Stuck:
    def __init__(self) -> None:
        self.asked = threading.Event()  # the request is recorded: the app runs after `begin`
        self.release = threading.Event()
        self.record: Recorded | None = None

    def answer(self, incoming: Incoming, record: Recorded) -> Answer:
        self.record = record
        self.asked.set()
        self.release.wait(60)
        return Answer(status=200, headers=[("content-type", "application/json")], chunks=[b"{}"])


def test_an_exchange_that_never_completes_is_marked_so_and_stays_so() -> None:
    """Settled while its app still works, an exchange is never completed; the reply the
    server's thread writes afterwards changes nothing a reader of the capture sees."""
    app = _Stuck()
    with (
        serving(app) as served,
        socket.create_connection(("127.0.0.1", served.endpoint.port), timeout=60) as sock,
    ):
        sock.sendall(
            b"POST /s/s/r/r/v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}"
        )
        assert app.asked.wait(60)
        served.run.capture.settle(timeout=0.05)
        (exchange,) = served.run.capture.exchanges()
        app.release.set()
        assert sock.recv(12) == b"HTTP/1.1 200"  # the server's thread has written the head
    assert exchange.status is None and "never completed" in (exchange.error or "")
    assert app.record is not None and app.record.status == 200  # the thread's own record
    (record,) = served.run.capture.records()
    assert record.status is None and record.body == b"" and not record.complete
    assert served.run.capture.exchanges() == [exchange]


def test_gemini_automatic_function_calling_extra_request_is_captured(
    emulator: Emulator, run_id: str
) -> None:
    from google.genai import types

    client = make_client(
        "gemini",
        api_key="k",
        base_url=emulator.base_urls(ONE_TOOL.id, run_id)["gemini"],
    )

    def get_workout_history(exercise: str) -> str:
        """The user's logged workouts for one exercise."""
        return "3x5 @ 80 kg"

    client.models.generate_content(
        model="gemini-2.5-flash",
        contents=ONE_TOOL.messages[0].text,
        config=types.GenerateContentConfig(tools=[get_workout_history]),
    )
    exchanges = emulator.exchanges(run_id)
    assert len(exchanges) == 2  # the SDK ran the tool and called again by itself
    assert "afc" in exchanges[0].request_headers.get("x-goog-api-client", "")


@pytest.mark.parametrize(
    ("text", "events"),
    [
        ('event: a\ndata: {"x": 1}\n\nevent: b\ndata: 2\n\n', [("a", {"x": 1}), ("b", 2)]),
        ('data: {"y": 1}\r\n\r\ndata: [DONE]\r\n\r\n', [(None, {"y": 1}), (None, "[DONE]")]),
        (": comment only\n\n", []),
    ],
)
def test_parse_sse(text: str, events: list[tuple[str | None, object]]) -> None:
    assert [(e.event, e.data) for e in parse_sse(text)] == events


def test_scrub_url_and_key_scan() -> None:
    assert scrub_url("https://h/p?alt=sse&key=SECRET") == "https://h/p?alt=sse"
    assert find_key("x sk-ant-api03-abcdefghijklmnopqrstuvwxyz x") is not None
    assert find_key("Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345") is not None
    assert find_key("a plain sentence about keys and tokens") is None


@pytest.mark.parametrize(
    "text",
    [
        "a task-oriented-conversation-flow-design",
        "risk-adjusted-returns-over-the-long-term",
        "the disk-0123456789-abcdefghij-backup",
        "tokens: bearer of bad news, truly terrible",
    ],
)
def test_key_scan_ignores_ordinary_words(text: str) -> None:
    assert find_key(text) is None
