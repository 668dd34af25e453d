"""Replay: the app behind the endpoint that answers a cell from its cassette, in recorded order,
without ever opening a socket to anywhere else.

Requests are not matched to recordings (requests to one endpoint look alike); the n-th request
gets the n-th recorded answer, and is then compared with the n-th recorded request for drift.
A stream is served one event per chunk, so the client parses it incrementally as it would live.
A request with nothing left to answer gets an error response the SDKs raise on (400, marked
not retryable), and a finding that names the cassette, the call number and the closest
recorded request, as vcrpy's "no match" diagnostic does.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

from harness.cassettes.build import real_uri
from harness.cassettes.cassette import Cassette, Interaction, RecordedResponse
from harness.cassettes.drift import distance, endpoint, project_ignore, request_drift
from harness.cassettes.reform import (
    GEMINI_JSON_ACTION,
    GEMINI_STREAM_ACTION,
    STREAM_FIELDS,
    asked_stream,
    mismatched,
    reformed,
)
from harness.endpoint.capture import Recorded
from harness.endpoint.server import Answer, Incoming
from harness.findings import Finding

MISSING_STATUS = 400  # not retried by any SDK (x-should-retry: false says so too)

RULE_DRIFT = "replay.drift"
RULE_MISSING = "replay.missing_recording"
RULE_UNUSED = "replay.unused_recording"
# A request asked for the other form than the recording holds (a loop that never streams on
# a stream cell, or the reverse): answered in the form asked, rebuilt from the recording.
RULE_STREAM_MISMATCH = "replay.stream_mismatch"


@dataclass(frozen=True, kw_only=True)
class SentRequest:
    call: int  # 1-based
    method: str
    uri: str
    body: Any  # decoded JSON, or text, or None
    asked_stream: bool | None = None


@dataclass(frozen=True, kw_only=True)
class Missing:
    call: int
    message: str


class ReplayApp:
    """Serves `cassette` in order to one cell's run at the endpoint. `hint` is appended to
    diagnostics (how to re-record)."""

    # Every answer is a list of chunks in memory, never cut: the harness's own clients may be
    # served in-process (harness/endpoint/local.py).
    answers_from_memory = True

    def __init__(self, cassette: Cassette, provider: str, hint: str = "") -> None:
        self.cassette = cassette
        self.provider = provider
        self.hint = hint
        self.ignore = project_ignore()  # the project's drift_ignore, read once per cell
        self._lock = threading.Lock()
        self._sent: list[SentRequest] = []
        self._missing: list[Missing] = []
        self._reformed: list[SentRequest] = []  # answered in the other form than recorded

    @property
    def sent(self) -> list[SentRequest]:
        with self._lock:
            return list(self._sent)

    def answer(self, incoming: Incoming, record: Recorded) -> Answer:
        sent = self._note(incoming)
        interactions = self.cassette.interactions
        if sent.call > len(interactions):
            return self._missing_response(sent)
        recorded = interactions[sent.call - 1].response
        api = incoming.route.api if incoming.route is not None else None
        if api is not None and mismatched(api, sent.asked_stream, recorded):
            with self._lock:
                self._reformed.append(sent)
            return reformed(api, recorded, _served(recorded).headers)
        return _served(recorded)

    def _note(self, incoming: Incoming) -> SentRequest:
        # Compared with the recording as the real API's URL (credentials already dropped):
        # the cassette names the real API, the loop spoke to the endpoint.
        path = incoming.path + (f"?{incoming.query}" if incoming.query else "")
        with self._lock:
            sent = SentRequest(
                call=len(self._sent) + 1,
                method=incoming.method,
                uri=real_uri(self.provider, path),
                body=_decoded(incoming.body),
                asked_stream=asked_stream(incoming),
            )
            self._sent.append(sent)
        return sent

    def _missing_response(self, sent: SentRequest) -> Answer:
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
        return Answer(
            status=MISSING_STATUS,
            headers=[("content-type", "application/json"), ("x-should-retry", "false")],
            chunks=[json.dumps(body).encode()],
        )

    def missing_message(self, sent: SentRequest) -> str:
        count = len(self.cassette.interactions)
        text = (
            f"{self.cassette.path}: call {sent.call} ({sent.method} {endpoint(sent.uri)}) has no "
            f"recording left; the cassette holds {count} interaction(s)"
        )
        closest = self._closest(sent)
        if closest is not None:
            drift = request_drift(closest.request, sent.method, sent.uri, sent.body, self.ignore)
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
            key=lambda i: distance(i.request, sent.method, sent.uri, sent.body, self.ignore),
        )

    def findings(self) -> list[Finding]:
        """Drift at each served call, every missing recording, and unused interactions."""
        sent, interactions = self.sent, self.cassette.interactions
        missing = {m.call: m for m in self._missing}
        with self._lock:
            reformed = list(self._reformed)
        out: list[Finding] = [self._mismatch_finding(reformed)] if reformed else []
        for request in sent:
            if request.call in missing:
                out.append(
                    Finding(
                        rule=RULE_MISSING, call=request.call, message=missing[request.call].message
                    )
                )
                continue
            recorded = interactions[request.call - 1].request
            uri, body = request.uri, request.body
            if request in reformed:  # the form asked is this notice's, not drift
                uri, body = _in_recorded_form(recorded.uri, recorded.body, uri, body)
            drift = request_drift(recorded, request.method, uri, body, self.ignore)
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

    def _mismatch_finding(self, reformed: list[SentRequest]) -> Finding:
        """One notice for the cell, naming the calls: the loop ignores `stream`."""
        asked = "a stream" if reformed[0].asked_stream else "JSON (no stream)"
        held = "JSON" if reformed[0].asked_stream else "a stream"
        calls = ", ".join(str(r.call) for r in reformed)
        return Finding(
            rule=RULE_STREAM_MISMATCH,
            call=reformed[0].call,
            message=f"{self.cassette.path}: call(s) {calls} asked for {asked} where the "
            f"recording holds {held}; the replay answered in the form asked, rebuilt from the "
            "recording. The loop does not follow `call.stream` on this cell",
        )

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


def _served(recorded: RecordedResponse) -> Answer:
    headers = [(name, value) for name, values in recorded.headers.items() for value in values]
    # A stream goes out one event per chunk (as the API flushed them); a plain body whole,
    # its length announced (the endpoint sets the framing headers itself).
    return Answer(
        status=recorded.status,
        headers=headers,
        chunks=recorded.chunks(),
        streamed=recorded.sse is not None,
        reason=recorded.reason or None,
    )


def _decoded(raw: bytes) -> Any:
    if not raw:
        return None
    text = raw.decode("utf-8", "replace")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _in_recorded_form(
    recorded_uri: str, recorded_body: Any, uri: str, body: Any
) -> tuple[str, Any]:
    """The sent request with its stream switch as recorded (Gemini's action in the path, the
    others' `stream` fields), so drift shows only what else differs."""
    actions = (GEMINI_STREAM_ACTION, GEMINI_JSON_ACTION)
    if any(a in recorded_uri for a in actions) and any(a in uri for a in actions):
        uri = recorded_uri  # the action (and `alt=sse`) is the form asked
    if isinstance(body, dict) and isinstance(recorded_body, dict):
        body = {k: v for k, v in body.items() if k not in STREAM_FIELDS}
        body.update({k: recorded_body[k] for k in STREAM_FIELDS if k in recorded_body})
    return uri, body
