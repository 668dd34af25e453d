"""Client-side capture: every HTTP exchange a loop makes through the SDK clients we hand it,
in order, exactly as sent and received in this run — JSON decoded, SSE kept as its events,
secrets removed. It wraps the httpx2 transport, so SDK-internal extra requests (retries, Gemini
automatic function calling and continuation) are captured too, whatever loop made them.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx2

from harness.scrub import kept_request_headers, kept_response_headers, scrub_url


@dataclass(frozen=True, kw_only=True)
class SseEvent:
    event: str | None
    data: Any  # decoded JSON, or the raw text (`[DONE]`)


@dataclass(frozen=True, kw_only=True)
class Exchange:
    """One HTTP request and its response. `error` is set when no complete response arrived
    (connection refused, stream cut); what did arrive is kept."""

    seq: int
    method: str
    url: str
    request_headers: dict[str, str]
    request_body: Any
    status: int | None
    response_headers: dict[str, str]
    response_body: Any  # decoded JSON, or text when not JSON; None for SSE
    events: tuple[SseEvent, ...] | None  # SSE frames, in order
    error: str | None
    started: float
    elapsed: float

    @property
    def streamed(self) -> bool:
        return self.events is not None


class Capture:
    """Collects exchanges; hand `capture.http_client()` to an SDK client."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._exchanges: list[Exchange] = []
        self._seq = 0

    @property
    def exchanges(self) -> list[Exchange]:
        with self._lock:
            return sorted(self._exchanges, key=lambda e: e.seq)

    def http_client(
        self, inner: httpx2.BaseTransport | None = None, timeout: float = 120.0
    ) -> httpx2.Client:
        return httpx2.Client(transport=CapturingTransport(self, inner), timeout=timeout)

    def next_seq(self) -> int:
        with self._lock:
            self._seq += 1
            return self._seq

    def add(self, exchange: Exchange) -> None:
        with self._lock:
            self._exchanges.append(exchange)


class CapturingTransport(httpx2.BaseTransport):
    def __init__(self, capture: Capture, inner: httpx2.BaseTransport | None = None) -> None:
        self.capture = capture
        self.inner = inner or httpx2.HTTPTransport()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        body = request.read()
        pending = _Pending(self.capture, request, body)
        try:
            response = self.inner.handle_request(request)
        except Exception as exc:
            pending.finish(None, [], b"", f"{type(exc).__name__}: {exc}")
            raise
        if response.is_stream_consumed:
            # An in-memory response (e.g. a mock transport) was read when it was built; its
            # stream will not be iterated again, so record it now.
            pending.finish(response.status_code, _raw_headers(response), response.content, None)
            return response
        stream = response.stream
        assert isinstance(stream, httpx2.SyncByteStream)
        headers = _raw_headers(response)
        response.stream = TeeStream(
            stream, lambda raw, error: pending.finish(response.status_code, headers, raw, error)
        )
        return response

    def close(self) -> None:
        self.inner.close()


class _Pending:
    def __init__(self, capture: Capture, request: httpx2.Request, body: bytes) -> None:
        self.capture = capture
        self.seq = capture.next_seq()
        self.request = request
        self.body = body
        self.started = time.time()
        self.done = False

    def finish(
        self, status: int | None, headers: list[tuple[str, str]], raw: bytes, error: str | None
    ) -> None:
        if self.done:
            return
        self.done = True
        content_type = dict((k.lower(), v) for k, v in headers).get("content-type", "")
        text = _decoded_text(status, headers, raw)
        events = parse_sse(text) if "text/event-stream" in content_type else None
        req_headers = [
            (k.decode("latin-1"), v.decode("latin-1")) for k, v in self.request.headers.raw
        ]
        self.capture.add(
            Exchange(
                seq=self.seq,
                method=self.request.method,
                url=scrub_url(str(self.request.url)),
                request_headers=kept_request_headers(req_headers),
                request_body=_json_or_text(self.body.decode("utf-8", "replace")),
                status=status,
                response_headers=kept_response_headers(headers),
                response_body=None if events is not None else _json_or_text(text),
                events=None if events is None else tuple(events),
                error=error,
                started=self.started,
                elapsed=time.time() - self.started,
            )
        )


class TeeStream(httpx2.SyncByteStream):
    """Passes the body through untouched (so the SDK really streams) while keeping a copy, and
    calls `done(raw, error)` once: when the body ends (`error` None), when reading it fails, or
    when the client closes it before the end — an SDK that retries a 429 closes the response
    unread, and those bytes are not a whole response. Shared by the capture and the recording
    tap."""

    def __init__(
        self, inner: httpx2.SyncByteStream, done: Callable[[bytes, str | None], None]
    ) -> None:
        self.inner, self.done = inner, done
        self.buffer = bytearray()
        self.finished = False

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self.inner:
                self.buffer.extend(chunk)
                yield chunk
        except Exception as exc:
            self._finish(f"{type(exc).__name__}: {exc}")
            raise
        self._finish(None)

    def close(self) -> None:
        self._finish(f"closed by the client after {len(self.buffer)} bytes, before the end")
        self.inner.close()

    def _finish(self, error: str | None) -> None:
        if self.finished:
            return
        self.finished = True
        self.done(bytes(self.buffer), error)


def _raw_headers(response: httpx2.Response) -> list[tuple[str, str]]:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers.raw]


def _decoded_text(status: int | None, headers: list[tuple[str, str]], raw: bytes) -> str:
    """The body as text, undoing content-encoding (gzip, deflate, br, zstd) like the client."""
    if not raw:
        return ""
    try:
        decoded = httpx2.Response(status or 200, headers=headers, content=raw).content
    except (httpx2.DecodingError, ValueError):
        decoded = raw
    return decoded.decode("utf-8", "replace")


def _json_or_text(text: str) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_sse(text: str) -> list[SseEvent]:
    """Split an SSE body into events (`\\n\\n` or `\\r\\n\\r\\n` separated, as providers differ)."""
    events: list[SseEvent] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name: str | None = None
        data_lines: list[str] = []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data_lines.append(line[5:].removeprefix(" "))
        if name is None and not data_lines:
            continue
        events.append(SseEvent(event=name, data=_json_or_text("\n".join(data_lines).rstrip())))
    return events
