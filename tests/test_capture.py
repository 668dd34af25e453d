"""Client-side capture: every exchange in order, as sent and received, secrets removed,
SDK-internal extra requests included."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from harness.capture import Capture, parse_sse
from harness.emulator.server import Emulator
from harness.providers import make_client
from harness.scenario import Scenario, load_scenario
from harness.scrub import find_key, scrub_url
from tests.conftest import SCENARIOS

ONE_TOOL = load_scenario(SCENARIOS / "one_tool_then_answer.yaml")
TOOLS = [
    {
        "name": "get_workout_history",
        "description": "d",
        "input_schema": {"type": "object", "properties": {}},
    }
]
FAKE_KEY = "sk-ant-api03-FAKEFAKEFAKEFAKEFAKEFAKEFAKE"


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
    capture = Capture()
    client = make_client(
        "anthropic",
        api_key=FAKE_KEY,
        base_url=emulator.base_urls(ONE_TOOL.id, run_id)["anthropic"],
        http_client=capture.http_client(),
        max_retries=0,
    )
    _ask(client)
    (exchange,) = capture.exchanges
    assert exchange.status == 200 and exchange.error is None and not exchange.streamed
    assert exchange.request_body["messages"][0]["content"] == ONE_TOOL.messages[0].text
    assert exchange.response_body["stop_reason"] == "tool_use"
    dumped = json.dumps([exchange.request_headers, exchange.response_headers, exchange.url])
    assert FAKE_KEY not in dumped and "authorization" not in exchange.request_headers


def test_streamed_exchange_keeps_its_events_and_the_sdk_still_streams(
    emulator: Emulator, run_id: str
) -> None:
    capture = Capture()
    client = make_client(
        "anthropic",
        api_key="k",
        base_url=emulator.base_urls(ONE_TOOL.id, run_id)["anthropic"],
        http_client=capture.http_client(),
        max_retries=0,
    )
    message = _ask(client, stream=True)
    assert message.stop_reason == "tool_use"  # type: ignore[attr-defined]
    (exchange,) = capture.exchanges
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
        capture = Capture()
        client = make_client(
            "anthropic",
            api_key="k",
            base_url=emu.base_urls("retry", "r")["anthropic"],
            http_client=capture.http_client(),
            max_retries=1,
        )
        _ask(client)
    assert [e.status for e in capture.exchanges] == [500, 200]
    assert capture.exchanges[1].request_headers.get("x-stainless-retry-count") == "1"
    # anthropic 2.14 reads the 500 before it retries, so both arrived whole.
    assert [e.error for e in capture.exchanges] == [None, None]


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
    capture = Capture()
    client = make_client(
        "gemini",
        api_key="k",
        base_url=emulator.base_urls(scenario.id, run_id)["gemini"],
        http_client=capture.http_client(),
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
        assert [e.status for e in capture.exchanges] == [429]
        return
    reply = ask()
    assert [c.name for c in reply.function_calls or []] == ["get_workout_history"]
    assert [e.status for e in capture.exchanges] == [429, 200]


class _Chunks(httpx2.SyncByteStream):
    def __iter__(self) -> Iterator[bytes]:
        yield b'{"a": '
        yield b"1}"


def _streaming(request: httpx2.Request) -> httpx2.Response:
    return httpx2.Response(200, headers={"content-type": "application/json"}, stream=_Chunks())


class _StreamingTransport(httpx2.BaseTransport):
    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        return _streaming(request)


def test_a_response_closed_before_its_end_is_not_recorded_as_whole() -> None:
    capture = Capture()
    client = capture.http_client(inner=_StreamingTransport())
    with client.stream("GET", "http://x/half") as response:
        next(response.iter_raw())
    with client.stream("GET", "http://x/whole") as response:
        response.read()
    half, whole = capture.exchanges
    assert half.error == "closed by the client after 6 bytes, before the end"
    assert half.response_body == '{"a": '
    assert whole.error is None and whole.response_body == {"a": 1}


def test_gemini_automatic_function_calling_extra_request_is_captured(
    emulator: Emulator, run_id: str
) -> None:
    from google.genai import types

    capture = Capture()
    client = make_client(
        "gemini",
        api_key="k",
        base_url=emulator.base_urls(ONE_TOOL.id, run_id)["gemini"],
        http_client=capture.http_client(),
    )

    def get_workout_history(exercise: str) -> str:
        """The user's logged workouts for one exercise."""
        return "3x5 @ 80 kg"

    client.models.generate_content(
        model="gemini-2.5-flash",
        contents=ONE_TOOL.messages[0].text,
        config=types.GenerateContentConfig(tools=[get_workout_history]),
    )
    assert len(capture.exchanges) == 2  # the SDK ran the tool and called again by itself
    assert "afc" in capture.exchanges[0].request_headers.get("x-goog-api-client", "")


def test_transport_errors_are_captured_not_lost() -> None:
    capture = Capture()
    client = capture.http_client()
    with pytest.raises(httpx2.ConnectError):
        client.post(
            "http://127.0.0.1:9/v1/messages?key=AIzaSyFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKE",
            json={"a": 1},
        )
    (exchange,) = capture.exchanges
    assert exchange.status is None and exchange.error and "ConnectError" in exchange.error
    assert "key=" not in exchange.url and exchange.request_body == {"a": 1}


def test_gzip_bodies_are_decoded() -> None:
    body = json.dumps({"ok": True}).encode()

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200,
            headers={"content-encoding": "gzip", "content-type": "application/json"},
            content=gzip.compress(body),
        )

    capture = Capture()
    client = capture.http_client(inner=httpx2.MockTransport(handler))
    assert client.get("http://x/y").json() == {"ok": True}
    assert capture.exchanges[0].response_body == {"ok": True}


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
