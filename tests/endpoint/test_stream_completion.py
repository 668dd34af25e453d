"""Stream completeness by protocol (issue 11): a stream whose terminal event arrived is whole,
whoever closed the connection — a raw client that stops reading right after Anthropic's
`message_delta` / `message_stop`, Chat Completions' `data: [DONE]`, Responses'
`response.completed` or Gemini's chunk with a finishReason; one that leaves before it is not."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator

import pytest

from harness.endpoint.capture import Recorded
from harness.endpoint.server import Answer, Incoming
from tests.endpoint.support import serving

PADDING = b": " + b"x" * 65_536 + b"\n\n"  # an SSE comment: no event, only bytes to write


def named(name: str, data: dict[str, object]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def plain(data: object) -> bytes:
    return f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()


MESSAGE = {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "usage": {}}
ANTHROPIC = [
    named("message_start", {"type": "message_start", "message": MESSAGE}),
    named(
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ),
    named(
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi."}},
    ),
    named("content_block_stop", {"type": "content_block_stop", "index": 0}),
    named(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 2},
        },
    ),
    named("message_stop", {"type": "message_stop"}),
]
CHUNK = {"id": "c1", "object": "chat.completion.chunk", "model": "m"}
CHAT = [
    plain({**CHUNK, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi."}}]}),
    plain({**CHUNK, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    plain("[DONE]"),
]
RESPONSE = {"id": "resp_1", "object": "response", "status": "completed", "output": []}
RESPONSES = [
    named("response.created", {"type": "response.created", "response": RESPONSE}),
    named("response.completed", {"type": "response.completed", "response": RESPONSE}),
]
GEMINI_TEXT = {"content": {"role": "model", "parts": [{"text": "Hi."}]}, "index": 0}
GEMINI = [
    plain({"candidates": [GEMINI_TEXT]}),
    plain({"candidates": [{**GEMINI_TEXT, "finishReason": "STOP"}]}),
]
PATHS = {
    "anthropic": "/v1/messages",
    "openai-chat": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "gemini": "/v1beta/models/m:streamGenerateContent?alt=sse",
}
# (API, its frames, how many frames the client reads before it closes, whole by protocol?)
CASES = [
    ("anthropic", ANTHROPIC, 6, True),  # after message_stop
    ("anthropic", ANTHROPIC, 5, True),  # after message_delta: the message is whole
    ("anthropic", ANTHROPIC, 4, False),  # before message_delta: no stop reason yet
    ("openai-chat", CHAT, 3, True),
    ("openai-chat", CHAT, 2, False),  # finish_reason without [DONE]: the SDK reads on
    ("openai-responses", RESPONSES, 2, True),
    ("openai-responses", RESPONSES, 1, False),
    ("gemini", GEMINI, 2, True),
    ("gemini", GEMINI, 1, False),
]


class _Closing:
    """Streams `frames[:read]`, waits until the client has gone, then far more than the
    socket buffers hold, so the endpoint's writes fail before the rest of the frames."""

    def __init__(self, frames: list[bytes], read: int) -> None:
        self.frames, self.read = frames, read
        self.client_gone = threading.Event()

    def answer(self, incoming: Incoming, record: Recorded) -> Answer:
        return Answer(
            status=200,
            headers=[("content-type", "text/event-stream")],
            chunks=self._chunks(),
            streamed=True,
        )

    def _chunks(self) -> Iterator[bytes]:
        yield from self.frames[: self.read]
        self.client_gone.wait(10)
        for _ in range(400):
            yield PADDING
        yield from self.frames[self.read :]  # never written: the writes above failed


def _read_until(sock: socket.socket, marker: bytes) -> None:
    seen = b""
    while marker not in seen:
        data = sock.recv(65_536)
        assert data, "the endpoint closed first"
        seen += data


@pytest.mark.parametrize(
    ("api", "frames", "read", "whole"),
    CASES,
    ids=[f"{c[0]}-{c[2]}-{'whole' if c[3] else 'cut'}" for c in CASES],
)
def test_a_client_closing_after_the_terminal_event_got_a_whole_reply(
    api: str, frames: list[bytes], read: int, whole: bool
) -> None:
    app = _Closing(frames, read)
    with serving(app) as served:
        with socket.create_connection(("127.0.0.1", served.endpoint.port)) as sock:
            path = f"/s/s/r/r{PATHS[api]}"
            sock.sendall(
                f"POST {path} HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{{}}".encode()
            )
            last = frames[read - 1]
            _read_until(sock, last[-40:])
        app.client_gone.set()
        served.run.capture.settle()
        (exchange,) = served.run.capture.exchanges()
        (record,) = served.run.capture.records()
    assert not record.complete  # the writes after the client left did fail
    assert exchange.events is not None and len(exchange.events) >= read
    if whole:
        assert exchange.error is None
    else:
        assert exchange.error is not None and "closed the connection" in exchange.error
