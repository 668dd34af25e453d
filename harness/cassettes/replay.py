"""Replay: the transport under the capture that answers from a cassette, in recorded order,
without ever opening a socket.

Requests are not matched to recordings (requests to one endpoint look alike); the n-th request
gets the n-th recorded answer, and is then compared with the n-th recorded request for drift.
A stream is served one event per chunk, so the SDK parses it incrementally as it would live.
A request with nothing left to answer gets an error response the SDKs raise on (400, marked
not retryable), and a finding that names the cassette, the call number and the closest
recorded request, as vcrpy's "no match" diagnostic does.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx2

from harness.cassettes.cassette import Cassette, Interaction, RecordedResponse
from harness.cassettes.drift import distance, endpoint, request_drift
from harness.findings import Finding
from harness.scrub import scrub_url

DROPPED_RESPONSE_HEADERS = frozenset({"content-length", "content-encoding", "transfer-encoding"})
MISSING_STATUS = 400  # not retried by any SDK (x-should-retry: false says so too)

RULE_DRIFT = "replay.drift"
RULE_MISSING = "replay.missing_recording"
RULE_UNUSED = "replay.unused_recording"


@dataclass(frozen=True, kw_only=True)
class SentRequest:
    call: int  # 1-based
    method: str
    uri: str
    body: Any  # decoded JSON, or text, or None


@dataclass(frozen=True, kw_only=True)
class Missing:
    call: int
    message: str


class ReplayTransport(httpx2.BaseTransport):
    """Serves `cassette` in order. `hint` is appended to diagnostics (how to re-record)."""

    def __init__(self, cassette: Cassette, hint: str = "") -> None:
        self.cassette = cassette
        self.hint = hint
        self._lock = threading.Lock()
        self._sent: list[SentRequest] = []
        self._missing: list[Missing] = []

    @property
    def sent(self) -> list[SentRequest]:
        with self._lock:
            return list(self._sent)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        sent = self._note(request)
        interactions = self.cassette.interactions
        if sent.call > len(interactions):
            return self._missing_response(sent)
        return _served(interactions[sent.call - 1].response, request)

    def _note(self, request: httpx2.Request) -> SentRequest:
        raw = request.read()
        with self._lock:
            sent = SentRequest(
                call=len(self._sent) + 1,
                method=request.method,
                uri=scrub_url(str(request.url)),  # drift text is printed and saved
                body=_decoded(raw),
            )
            self._sent.append(sent)
        return sent

    def _missing_response(self, sent: SentRequest) -> httpx2.Response:
        message = self.missing_message(sent)
        with self._lock:
            self._missing.append(Missing(call=sent.call, message=message))
        body = {
            "type": "error",
            "error": {
                "type": "harness_replay_error",
                "code": MISSING_STATUS,
                "status": "FAILED_PRECONDITION",
                "message": message,
            },
        }
        return httpx2.Response(
            MISSING_STATUS,
            headers={"content-type": "application/json", "x-should-retry": "false"},
            content=json.dumps(body).encode(),
        )

    def missing_message(self, sent: SentRequest) -> str:
        count = len(self.cassette.interactions)
        text = (
            f"{self.cassette.path}: call {sent.call} ({sent.method} {endpoint(sent.uri)}) has no "
            f"recording left; the cassette holds {count} interaction(s)"
        )
        closest = self._closest(sent)
        if closest is not None:
            drift = request_drift(closest.request, sent.method, sent.uri, sent.body)
            differs = drift.text() if drift is not None else "identical after normalising ids"
            text += (
                f". Closest recorded request: interaction {closest.number} "
                f"({closest.request.method} {endpoint(closest.request.uri)}), differing at: "
                f"{differs}"
            )
        return text + (f". {self.hint}" if self.hint else "")

    def _closest(self, sent: SentRequest) -> Interaction | None:
        if not self.cassette.interactions:
            return None
        return min(
            self.cassette.interactions,
            key=lambda i: distance(i.request, sent.method, sent.uri, sent.body),
        )

    def findings(self) -> list[Finding]:
        """Drift at each served call, every missing recording, and unused interactions."""
        sent, interactions = self.sent, self.cassette.interactions
        missing = {m.call: m for m in self._missing}
        out: list[Finding] = []
        for request in sent:
            if request.call in missing:
                out.append(
                    Finding(
                        rule=RULE_MISSING, call=request.call, message=missing[request.call].message
                    )
                )
                continue
            recorded = interactions[request.call - 1].request
            drift = request_drift(recorded, request.method, request.uri, request.body)
            if drift is not None:
                out.append(
                    Finding(
                        rule=RULE_DRIFT,
                        call=request.call,
                        path=drift.first_path,
                        message=f"{self.cassette.path}: the request differs from the "
                        f"recording (interaction {request.call}): {drift.text()}",
                    )
                )
        unused = interactions[len(sent) :]
        if unused:
            out.append(self._unused_finding(len(sent), unused))
        return out

    def _unused_finding(self, used: int, unused: tuple[Interaction, ...]) -> Finding:
        numbers = (
            str(unused[0].number) if len(unused) == 1 else f"{unused[0].number}–{unused[-1].number}"
        )
        return Finding(
            rule=RULE_UNUSED,
            message=f"{self.cassette.path}: interaction(s) {numbers} of "
            f"{len(self.cassette.interactions)} were never requested: the loop made {used} "
            f"call(s) where the recording has {len(self.cassette.interactions)}"
            + (f". {self.hint}" if self.hint else ""),
        )


def _served(recorded: RecordedResponse, request: httpx2.Request) -> httpx2.Response:
    headers = [
        (name, value)
        for name, values in recorded.headers.items()
        if name.lower() not in DROPPED_RESPONSE_HEADERS
        for value in values
    ]
    chunks = recorded.chunks()
    if recorded.sse is None:  # a plain body: one chunk, its length announced
        chunks = [b"".join(chunks)]
        headers.append(("content-length", str(len(chunks[0]))))
    # A stream, never `content=`: the capture above must see the body go through.
    return httpx2.Response(
        recorded.status,
        headers=headers,
        stream=EventStream(chunks),
        request=request,
        extensions={"reason_phrase": recorded.reason.encode()} if recorded.reason else {},
    )


class EventStream(httpx2.SyncByteStream):
    """A recorded stream, one event per chunk (as the API flushed them)."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks

    def close(self) -> None:
        """Nothing to release: the events are in memory."""


def _decoded(raw: bytes) -> Any:
    if not raw:
        return None
    text = raw.decode("utf-8", "replace")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
