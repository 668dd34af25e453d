"""The endpoint's HTTP server: one threaded server on 127.0.0.1 for every source. It routes
each request to a run, records it as it arrives, asks the run's app for the answer and records
the answer as it is written.

Routing. `http://127.0.0.1:PORT/s/<scenario>/r/<run>/<API path>` names its run (what cells and
`harness emulate` hand out). A request without that prefix (`/v1/messages`, …) goes to the one
run currently open for the provider its API path belongs to — how a client built at import time
from the SDKs' variables reaches the cell that is running; with none or several open it gets a
clear 409.

Every request gets an HTTP answer: bodies are read bounded (`http_body`), anything that goes
wrong in an app is answered as a 500 in the API's envelope, never a dropped connection.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import urlsplit

from harness.emulator.apis import PROVIDER_OF_API, Route, route, wire_api
from harness.emulator.http_body import BodyProblem, read_body
from harness.emulator.limits import LISTEN_BACKLOG, UNROUTED_BODY_BYTES, Limits
from harness.endpoint.capture import Recorded, RunCapture
from harness.errors import EmulatorError

# A run id is one URL path segment of unreserved characters; not only dots (`..` would be
# resolved away by the client), and short enough to read in a log.
RUN_ID = r"(?!\.+/)[A-Za-z0-9_.~-]{1,128}"
RUN_ID_TEXT = "1-128 letters, digits and _ . ~ - (not only dots)"
PREFIX = re.compile(rf"^/s/(?P<sid>[a-z0-9][a-z0-9_]*)/r/(?P<run>{RUN_ID})(?P<rest>/.*)$")


@dataclass(frozen=True, kw_only=True)
class Incoming:
    """A request as an app sees it: the API path without the run prefix."""

    method: str
    path: str  # /v1/messages, /v1beta/models/m:streamGenerateContent, …
    query: str  # raw query string
    headers: list[tuple[str, str]]
    body: bytes
    route: Route | None  # None: no model-call API (a run's app decides what to answer)


@dataclass(frozen=True, kw_only=True)
class Answer:
    """What an app answers. A streamed answer is written chunk by chunk (chunked transfer), as
    the chunks come; `cut` writes about half of it and drops the connection (a fault)."""

    status: int
    headers: list[tuple[str, str]]
    chunks: Iterable[bytes]
    streamed: bool = False
    reason: str | None = None
    cut: bool = False


class App(Protocol):
    def answer(self, incoming: Incoming, record: Recorded) -> Answer: ...


@dataclass(frozen=True, kw_only=True)
class Target:
    """Where a request goes: the run its prefix names (if any) and the API path after it."""

    method: str
    scenario_id: str | None
    run_id: str | None
    path: str  # the API path, without the run prefix
    query: str
    route: Route | None

    @property
    def prefixed(self) -> bool:
        return self.run_id is not None

    def incoming(self, headers: list[tuple[str, str]], body: bytes) -> Incoming:
        return Incoming(
            method=self.method,
            path=self.path,
            query=self.query,
            headers=headers,
            body=body,
            route=self.route,
        )


def target_of(method: str, request_target: str) -> Target | None:
    """Where `method request_target` goes; None when no API is there (neither under a run
    prefix nor a model-call path)."""
    url = urlsplit(request_target)
    match = PREFIX.match(url.path)
    rest = match["rest"] if match else url.path
    api_route = route(rest) if method == "POST" else None
    if match is None and api_route is None:
        return None
    return Target(
        method=method,
        scenario_id=match["sid"] if match else None,
        run_id=match["run"] if match else None,
        path=rest,
        query=url.query,
        route=api_route,
    )


@dataclass(kw_only=True)
class Run:
    """One run at the endpoint: its app, and what reached it."""

    id: str
    scenario_id: str
    app: App
    provider: str | None = None  # set: unprefixed requests for this provider may come here
    capture: RunCapture = field(default_factory=RunCapture)
    made: bool = False  # made on demand by the resolver (not opened by a caller)


# (scenario id, run id) -> a run made on demand, or why there is none
Resolver = Callable[[str, str], "Run | str"]


class Endpoint:
    """`with Endpoint() as ep: ep.open(run); ep.base_urls(run)`."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        limits: Limits | None = None,
        resolver: Resolver | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self._lock = threading.Lock()
        self._runs: dict[tuple[str, str], Run] = {}  # (scenario id, run id)
        self._resolver = resolver
        try:
            self._server = _Server((host, port), _Handler)
        except OSError as exc:
            raise EmulatorError(
                f"cannot listen on {host}:{port}: {exc.strerror}; "
                "choose another --port or 0 for any free port"
            ) from None
        self._server.endpoint = self
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Endpoint:
        if self._thread is None:
            _quick_switches(+1)
            self._thread = threading.Thread(
                target=self._serve, name="harness-endpoint", daemon=True
            )
            self._thread.start()
        return self

    def _serve(self) -> None:
        with _own_thread():
            self._server.serve_forever(poll_interval=0.05)

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
            _quick_switches(-1)
        self._server.server_close()

    def __enter__(self) -> Endpoint:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def open(self, run: Run) -> Run:
        if not valid_run_id(run.id):
            raise EmulatorError(f"run id {run.id[:60]!r} is not valid: use {RUN_ID_TEXT}")
        with self._lock:
            self._runs[(run.scenario_id, run.id)] = run
        return run

    def close(self, run_id: str) -> None:
        with self._lock:
            for key in [k for k in self._runs if k[1] == run_id]:
                del self._runs[key]

    def run(self, run_id: str, scenario_id: str | None = None) -> Run | None:
        """The run with this id (of this scenario, when given; else the newest)."""
        with self._lock:
            found = [r for (sid, rid), r in self._runs.items() if rid == run_id]
            if scenario_id is not None:
                found = [r for r in found if r.scenario_id == scenario_id]
            return found[-1] if found else None

    def _evict_made_runs(self) -> None:
        """Runs made on demand (`harness emulate`'s) are kept for the `capture_runs` newest;
        runs opened by a caller stay until it closes them."""
        made = [r for r in self._runs.values() if r.made]
        for old in made[: max(0, len(made) - self.limits.capture_runs)]:
            del self._runs[(old.scenario_id, old.id)]

    def base_urls(self, scenario_id: str, run_id: str) -> dict[str, str]:
        """Base URLs per SDK: Anthropic and Gemini without `/v1`, OpenAI with it."""
        return base_urls(f"{self.root}/s/{scenario_id}/r/{run_id}")

    def body_limit(self, target: Target) -> int:
        """The most request body bytes read for `target`: the API's own limit."""
        if self.limits.body_bytes:
            return self.limits.body_bytes
        return wire_api(target.route.api).max_body_bytes if target.route else UNROUTED_BODY_BYTES

    def resolve_target(self, target: Target) -> Run | str:
        provider = PROVIDER_OF_API[target.route.api] if target.route else ""
        return self.resolve(target.scenario_id, target.run_id, provider)

    def answer(
        self, run: Run, incoming: Incoming, host: str | None, request_target: str
    ) -> tuple[Recorded, Answer]:
        """Record the request as it arrived (its URL from its Host header and request target)
        and ask the run's app for the answer; anything that goes wrong in the app is answered
        as a 500 in the API's envelope."""
        url = f"http://{host or f'127.0.0.1:{self.port}'}{request_target}"
        record = run.capture.begin(incoming.method, url, incoming.headers, incoming.body)
        try:
            answer = run.app.answer(incoming, record)
        except Exception as exc:  # the point: no request goes unanswered
            message = f"harness endpoint: internal error: {type(exc).__name__}: {str(exc)[:200]}"
            answer = error_answer(incoming.route, message, 500)
        return record, answer

    def resolve(self, scenario_id: str | None, run_id: str | None, provider: str) -> Run | str:
        """The run a request belongs to, or why there is none (a message for the client)."""
        if run_id is not None and scenario_id is not None:
            with self._lock:
                found = self._runs.get((scenario_id, run_id))
            if found is None and self._resolver is not None:
                made = self._resolver(scenario_id, run_id)
                if isinstance(made, str):
                    return made
                with self._lock:
                    found = self._runs.setdefault((scenario_id, run_id), made)
                    self._evict_made_runs()
            if found is None:
                return (
                    f"no run {run_id!r} of scenario {scenario_id!r} is open at this endpoint "
                    "(it has ended, or never began)"
                )
            return found
        with self._lock:
            open_runs = [r for r in self._runs.values() if r.provider == provider]
        if len(open_runs) == 1:
            return open_runs[0]
        return (
            f"{len(open_runs)} runs for {provider} are open, so a request without a run prefix "
            "cannot be placed; use the base URL the harness handed the loop "
            "(LoopCall.base_url or LoopCall.env, …/s/<scenario>/r/<run>)"
        )


# The loop's thread and the endpoint's hand each exchange back and forth; with CPython's
# default 5 ms switch interval a thread that wants the GIL back can wait that long each time
# (measured: the library's replay 3.2 s at 5 ms, 2.1 s at 0.2 ms). While an endpoint serves,
# the interval is shortened; the previous value comes back when the last endpoint stops.
SWITCH_INTERVAL = 0.0002
_switching = {"endpoints": 0, "saved": 0.0}
_switching_lock = threading.Lock()


def _quick_switches(change: int) -> None:
    with _switching_lock:
        if _switching["endpoints"] == 0 and change > 0:
            _switching["saved"] = sys.getswitchinterval()
            sys.setswitchinterval(min(SWITCH_INTERVAL, _switching["saved"]))
        _switching["endpoints"] += change
        if _switching["endpoints"] == 0:
            sys.setswitchinterval(_switching["saved"])


# The threads endpoints run: the accept loops and one per connection. They answer model calls
# and never run a scenario's tool, which lets the tool recorder tell when no other thread could
# start a tool run while one is running (`harness.tools.could_overlap`).
_own_threads: set[int] = set()
_own_threads_lock = threading.Lock()


@contextlib.contextmanager
def _own_thread() -> Iterator[None]:
    ident = threading.get_ident()
    with _own_threads_lock:
        _own_threads.add(ident)
    try:
        yield
    finally:
        with _own_threads_lock:
            _own_threads.discard(ident)


def endpoint_threads() -> frozenset[int]:
    """The ids of the threads endpoints are running now."""
    with _own_threads_lock:
        return frozenset(_own_threads)


def valid_run_id(run: str) -> bool:
    return PREFIX.match(f"/s/x/r/{run}/") is not None


def error_answer(api_route: Route | None, message: str, status: int) -> Answer:
    """An error in the API's own envelope (a plain JSON error off the model-call paths)."""
    if api_route is None:
        body = json.dumps({"error": {"message": message, "type": "harness_error"}}).encode()
        return Answer(status=status, headers=[("content-type", "application/json")], chunks=[body])
    api = wire_api(api_route.api)
    reply = api.error(api.rejected(message, status))
    return Answer(status=reply.status, headers=list(reply.headers.items()), chunks=reply.chunks)


def base_urls(base: str) -> dict[str, str]:
    return {"anthropic": base, "openai": f"{base}/v1", "gemini": base}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = LISTEN_BACKLOG
    endpoint: Endpoint

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        with _own_thread():
            super().process_request_thread(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (or a stream cut on purpose) is not an error worth a
        traceback on stderr; anything else still gets the stdlib's report."""
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; without TCP_NODELAY the client's delayed
    # ACK stalls every response by ~40 ms (architecture.md, measured floors).
    disable_nagle_algorithm = True
    server: _Server

    def setup(self) -> None:
        super().setup()
        # A per-connection socket timeout: an idle or half-open connection ends instead of
        # holding its thread (the stdlib's handle_one_request closes on TimeoutError).
        self.connection.settimeout(self.server.endpoint.limits.idle_timeout)

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the stdlib's per-request stderr line; the capture keeps every request."""

    def do_POST(self) -> None:
        self._handle("POST")

    def do_GET(self) -> None:
        self._handle("GET")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def _handle(self, method: str) -> None:
        """Route, read the body bounded, serve. A path under a run prefix goes to the run's
        app even when it is no model call (replay and live serve what the client asked for;
        the emulator answers 404)."""
        endpoint = self.server.endpoint
        target = target_of(method, self.path)
        if target is None:
            self._read_and_refuse(
                404,
                f"no API at {urlsplit(self.path).path}; use the base URLs the harness prints "
                "or hands the loop (…/s/<scenario>/r/<run>)",
            )
            return
        limit = endpoint.body_limit(target)
        raw = read_body(self.headers, self.rfile, limit)
        if isinstance(raw, BodyProblem):
            self._refuse_body(target.route, raw, limit)
            return
        found = endpoint.resolve_target(target)
        if isinstance(found, str):
            self._send_plain(404 if target.prefixed else 409, found)
            return
        incoming = target.incoming(list(self.headers.items()), raw)
        record, answer = endpoint.answer(found, incoming, self.headers.get("host"), self.path)
        found.capture.end(record, self._write(answer, record))

    def _write(self, answer: Answer, record: Recorded) -> str | None:
        """Write `answer`, keeping what went out in `record`; the problem, or None when whole.

        Chunks already in memory (a list or tuple: a replay's, the emulator's) go out with the
        head in one write, still framed one chunk per event: each write wakes the client's
        thread, which has to take the GIL back from this one, and that handoff — not the bytes —
        is what a loopback exchange costs. Chunks from an iterator (a live relay) are written as
        they come."""
        headers = record_head(answer, record)
        body = bytearray()
        in_memory = isinstance(answer.chunks, (list, tuple))
        chunks: Iterator[bytes] = iter(answer.chunks)
        try:
            length = None
            if not answer.streamed:
                whole = b"".join(chunks)
                chunks, length = iter([whole]), len(whole)
            head = head_bytes(answer.status, answer.reason, head_lines(headers, length))
            if answer.cut:
                return self._write_cut(head, list(chunks), body, record, answer.streamed)
            if in_memory:
                self._write_at_once(head, [c for c in chunks if c], body, answer.streamed)
            else:
                self._write_as_they_come(head, chunks, body, answer.streamed)
        except _Unsent as exc:
            self.close_connection = True
            record.body = bytes(body)
            return (
                f"the client closed the connection after {len(body)} bytes of the reply, "
                f"before its end ({type(exc.__cause__).__name__})"
            )
        except Exception as exc:  # an app's chunk source failed mid-reply (live upstream)
            self.close_connection = True
            record.body = bytes(body)
            return broke_off(len(body), exc)
        finally:
            close = getattr(answer.chunks, "close", None)
            if callable(close):
                with contextlib.suppress(Exception):
                    close()
        record.body = bytes(body)
        return None

    def _write_at_once(
        self, head: bytes, chunks: list[bytes], body: bytearray, streamed: bool
    ) -> None:
        """Head and every chunk in one send; `body` gets each chunk whose frame went out."""
        try:
            self._send(head + framed_body(chunks, streamed))
        except _Unsent as exc:
            end = len(head)
            for chunk in chunks:
                end += len(_framed(chunk)) if streamed else len(chunk)
                if end > exc.sent:
                    break
                body += chunk
            raise
        for chunk in chunks:
            body += chunk

    def _write_as_they_come(
        self, head: bytes, chunks: Iterator[bytes], body: bytearray, streamed: bool
    ) -> None:
        self._send(head)
        for chunk in chunks:
            if chunk:  # kept once written: a chunk whose write failed never went out
                self._send(_framed(chunk) if streamed else chunk)
                body += chunk
        if streamed:
            self._send(_LAST_CHUNK)

    def _write_cut(
        self, head: bytes, chunks: list[bytes], body: bytearray, record: Recorded, streamed: bool
    ) -> str:
        """About half the reply, ending inside a chunk, then the connection dropped."""
        keep = max(1, len(chunks) // 2)
        last = chunks[keep - 1] if chunks else b""
        sent = [*chunks[: keep - 1], last[: max(1, len(last) // 2)]]
        self._send(b"".join([head, *(_framed(c) if streamed else c for c in sent)]))
        body += b"".join(sent)
        record.body = bytes(body)
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
        return f"the stream was cut after {len(body)} bytes (fault: stream_cut)"

    def _send(self, data: bytes) -> None:
        """All of `data`, or `_Unsent` saying how much of it the socket took first."""
        view, sent = memoryview(data), 0
        try:
            while sent < len(data):
                sent += self.connection.send(view[sent:])
        except OSError as exc:
            raise _Unsent(sent) from exc

    def _refuse_body(self, api_route: Route | None, problem: BodyProblem, limit: int) -> None:
        """A body over the limit or badly framed: the API's 413 or a 400, then close (how much
        of the body is still unread is unknown)."""
        self.close_connection = True
        if api_route is None:
            self._send_plain(413 if problem.too_large else 400, problem.message)
            return
        api = wire_api(api_route.api)
        error = (
            api.too_large(limit, problem.size)
            if problem.too_large
            else api.rejected(problem.message)
        )
        reply = api.error(error)
        self._send_bytes(reply.status, list(reply.headers.items()), b"".join(reply.chunks))

    def _read_and_refuse(self, status: int, text: str) -> None:
        """Answer a request no API serves, after reading its body (the connection stays
        usable), or the body's own problem when it cannot be read."""
        raw = read_body(self.headers, self.rfile, UNROUTED_BODY_BYTES)
        if isinstance(raw, BodyProblem):
            self.close_connection = True
            self._send_plain(413 if raw.too_large else 400, raw.message)
            return
        self._send_plain(status, text)

    def _send_plain(self, status: int, text: str) -> None:
        body = json.dumps(
            {"error": {"message": f"harness endpoint: {text}", "type": "not_found"}}
        ).encode()
        self._send_bytes(status, [("content-type", "application/json")], body)

    def _send_bytes(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        """A whole reply in one send; a refusal that closes the connection says so, so that
        no keep-alive client sends its next request on it."""
        lines = head_lines(without_framing(headers), len(body))
        if self.close_connection:
            lines.append(("Connection", "close"))
        head = head_bytes(status, None, lines)
        try:
            self._send(head + body)
        except _Unsent:
            self.close_connection = True


# Set by the server for the body it writes; an app's own values would lie about the framing.
FRAMING_HEADERS = frozenset(
    {"content-length", "transfer-encoding", "connection", "content-encoding"}
)
SERVER_HEADER = f"{BaseHTTPRequestHandler.server_version} {BaseHTTPRequestHandler.sys_version}"


def record_head(answer: Answer, record: Recorded) -> list[tuple[str, str]]:
    """Note the answer's status and headers in `record`; the headers that go out with it (the
    endpoint frames the body itself, so the app's framing headers are dropped)."""
    record.status, record.reason = answer.status, answer.reason or ""
    headers = without_framing(answer.headers)
    record.response_headers = headers
    return headers


def without_framing(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in headers if k.lower() not in FRAMING_HEADERS]


def head_lines(headers: list[tuple[str, str]], length: int | None) -> list[tuple[str, str]]:
    """Every header of the reply as `send_response` spells it (Server, Date first), framed by
    `length` or, when None, chunked."""
    framing = (
        ("transfer-encoding", "chunked") if length is None else ("content-length", str(length))
    )
    return [("Server", SERVER_HEADER), ("Date", formatdate(usegmt=True)), *headers, framing]


def reason_phrase(status: int, reason: str | None) -> str:
    if reason is not None:
        return reason
    known = BaseHTTPRequestHandler.responses.get(status)
    return known[0] if known else ""


def head_bytes(status: int, reason: str | None, headers: list[tuple[str, str]]) -> bytes:
    """The status line and `headers` (from `head_lines`) as they go out (latin-1; a value
    outside it raises UnicodeEncodeError, and the reply breaks off)."""
    lines = [
        f"HTTP/1.1 {status} {reason_phrase(status, reason)}",
        *(f"{name}: {value}" for name, value in headers),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "strict")


def framed_body(chunks: list[bytes], streamed: bool) -> bytes:
    """The body as it goes out after the head: chunked (one chunk each) or as it is."""
    if not streamed:
        return b"".join(chunks)
    return b"".join([*(_framed(c) for c in chunks), _LAST_CHUNK])


def broke_off(sent: int, exc: Exception) -> str:
    return f"the reply broke off after {sent} bytes: {type(exc).__name__}: {exc}"


# The methods the endpoint serves (the handler's do_*); any other gets the stdlib's 501.
METHODS = frozenset(name.removeprefix("do_") for name in dir(_Handler) if name.startswith("do_"))

_LAST_CHUNK = b"0\r\n\r\n"


class _Unsent(Exception):
    """A write the client did not take whole (it went away): `sent` bytes of it went out."""

    def __init__(self, sent: int) -> None:
        super().__init__(f"{sent} bytes sent")
        self.sent = sent


def _framed(chunk: bytes) -> bytes:
    return f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
