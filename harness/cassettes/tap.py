"""The recording tap: the transport under the capture while recording. It keeps each exchange's
bytes exactly (the capture keeps decoded views), so a cassette can rebuild what the API sent,
and on live runs it retries 429 and 5xx answers with backoff before the SDK sees them, so a
cassette never holds a transient failure (and the SDK's own retries never fire)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx2

from harness.capture import TeeStream

# Statuses worth another try on a live refresh: rate limits, server errors and Anthropic's
# overloaded (529: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`).
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504, 529})


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    attempts: int = 4  # tries in all, the first included
    base_delay: float = 1.0  # doubled at each retry unless the API says how long to wait
    max_delay: float = 60.0
    sleep: Callable[[float], None] = time.sleep
    report: Callable[[str], None] = lambda line: None

    def delay(self, retry: int, response: httpx2.Response) -> float:
        """retry-after-ms / retry-after (seconds) when given, else exponential backoff."""
        for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
            value: str | None = response.headers.get(name)
            if value is not None:
                try:
                    return min(self.max_delay, max(0.0, float(value) * scale))
                except ValueError:
                    break  # an HTTP date: fall back to our own backoff
        return min(self.max_delay, self.base_delay * 2.0 ** (retry - 1))


@dataclass(kw_only=True)
class TapRecord:
    """One exchange as the bytes went. `body` is the response body with the transfer's
    content-encoding undone (what the SDK read); `complete` is False when it was cut."""

    method: str
    url: str
    request_headers: list[tuple[str, str]]
    request_body: bytes
    status: int | None = None
    reason: str = ""
    response_headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    complete: bool = False
    error: str | None = None
    retries: list[str] = field(default_factory=list)


class TapTransport(httpx2.BaseTransport):
    def __init__(self, inner: httpx2.BaseTransport, retry: RetryPolicy | None = None) -> None:
        self.inner = inner
        self.retry = retry
        self._lock = threading.Lock()
        self._records: list[TapRecord] = []

    @property
    def records(self) -> list[TapRecord]:
        with self._lock:
            return list(self._records)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        record = TapRecord(
            method=request.method,
            url=str(request.url),
            request_headers=[
                (k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw
            ],
            request_body=request.read(),
        )
        with self._lock:
            self._records.append(record)
        try:
            response = self._send(request, record)
        except Exception as exc:
            record.error = f"{type(exc).__name__}: {exc}"
            raise
        record.status = response.status_code
        record.reason = response.reason_phrase
        record.response_headers = [
            (k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers.raw
        ]
        if response.is_stream_consumed:  # an in-memory response (a mock transport): read already
            record.body, record.complete = response.content, True
            return response
        stream = response.stream
        assert isinstance(stream, httpx2.SyncByteStream)
        response.stream = TeeStream(stream, lambda raw, error: _finish(record, raw, error))
        return response

    def _send(self, request: httpx2.Request, record: TapRecord) -> httpx2.Response:
        tries = self.retry.attempts if self.retry is not None else 1
        for attempt in range(1, tries + 1):
            response = self.inner.handle_request(request)
            if self.retry is None or attempt == tries or response.status_code not in RETRY_STATUSES:
                return response
            response.read()
            response.close()
            wait = self.retry.delay(attempt, response)
            line = (
                f"{request.method} {request.url.path}: {response.status_code} "
                f"{response.reason_phrase}; retry {attempt}/{tries - 1} in {wait:.1f}s"
            )
            record.retries.append(line)
            self.retry.report(line)
            self.retry.sleep(wait)
        raise AssertionError("unreachable: the last attempt returns")

    def close(self) -> None:
        self.inner.close()


def _finish(record: TapRecord, raw: bytes, error: str | None) -> None:
    """Keep the body with its content-encoding undone; `complete` only when it ended whole."""
    if error is not None and record.error is None:
        record.error = error
    record.complete = record.error is None
    try:
        decoded = httpx2.Response(
            record.status or 200, headers=record.response_headers, content=raw
        ).content
    except (httpx2.DecodingError, ValueError) as exc:
        record.error = f"cannot decode the body: {exc}"
        record.complete = False
        decoded = raw
    record.body = decoded
