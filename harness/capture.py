"""The captured exchange: one HTTP request and its response as they went over the wire in this
run — JSON decoded, SSE kept as its events, secrets removed. Capture itself happens at the
endpoint (`harness.endpoint`), where every client must pass; this module is the neutral view
the trace parsers, checks and results read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx2

from harness.scrub import kept_request_headers, kept_response_headers, scrub_url

if TYPE_CHECKING:
    from harness.endpoint.capture import Recorded


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


def exchange_from_record(record: Recorded) -> Exchange:
    """The scrubbed, decoded view of one exchange the endpoint recorded."""
    headers = record.response_headers
    content_type = dict((k.lower(), v) for k, v in headers).get("content-type", "")
    text = _decoded_text(record.status, headers, record.body)
    events = parse_sse(text) if "text/event-stream" in content_type else None
    ended = record.ended if record.ended is not None else record.started
    return Exchange(
        seq=record.seq,
        method=record.method,
        url=scrub_url(record.url),
        request_headers=kept_request_headers(record.request_headers),
        request_body=_json_or_text(record.request_body.decode("utf-8", "replace")),
        status=record.status,
        response_headers=kept_response_headers(headers),
        response_body=None if events is not None else _json_or_text(text),
        events=None if events is None else tuple(events),
        error=_transport_error(record, events),
        started=record.started,
        elapsed=ended - record.started,
    )


def _transport_error(record: Recorded, events: list[SseEvent] | None) -> str | None:
    """Why the reply is not whole, or None. A stream whose terminal event went out is whole by
    its protocol, whoever closed the connection after it (a client that stops reading at
    `message_stop` or `[DONE]`): the trace layer knows each provider's terminal event."""
    if record.complete:
        return None
    if events and record.status is not None and record.status < 400:
        from harness.trace.parse import stream_completed

        if stream_completed(scrub_url(record.url), tuple(events)):
            return None
    return record.error or "no reply was sent"


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
