"""The endpoint reached without a socket: an httpx transport for the harness's own sync clients
(`LoopCall.client`) that hands a request straight to the run it names, for runs whose app
answers from memory (a replay).

Everything but the socket is the HTTP path's own code, on both sides:
- the request is checked as the client's HTTP/1.1 layer (h11, under httpcore) checks it before
  sending, and as the server would refuse it (more headers or longer lines than `http.server`
  reads); anything either would refuse goes over HTTP, to fail there as it would anyway;
- the endpoint's routing, capture (`Endpoint.answer`) and reply head (`record_head`,
  `head_lines`, `head_bytes`) are the server's functions;
- the reply's exact bytes (head and framed body) are read back by h11 as the client's would
  be, so status, reason, headers and body reach the SDK as they would over HTTP (whitespace
  trimmed, a 204's body dropped, a bad head refused).
What it saves is the loopback exchange itself: the socket, the server's request parsing and two
GIL handoffs between threads per model call (benchmarks/replay_overhead.py). Tests replay the
whole library both ways and compare every record, trace and finding, and compare odd requests
and replies as the client sees them (tests/endpoint/test_local.py).

One difference remains, by nature: over HTTP a client that stops reading a reply larger than
the loopback socket's buffers (megabytes) leaves it recorded as incomplete; here the reply was
handed over whole.

Anything not served here — another host, no API at the path, no open run, a body over the API's
limit, a method the server does not serve, an app that does not answer from memory (the
emulator's faults, a live relay) — goes over HTTP to the endpoint, so every refusal keeps a
single implementation.
"""

from __future__ import annotations

from collections.abc import Iterator

import h11
import httpx2

from harness.endpoint.server import (
    METHODS,
    Answer,
    Endpoint,
    Run,
    Target,
    broke_off,
    framed_body,
    head_bytes,
    head_lines,
    record_head,
    target_of,
)

# What `http.server` reads of a request (http.client's _MAXHEADERS and _MAXLINE): more is
# refused there (431, 414), so such a request goes over HTTP to be refused.
SERVER_MAX_HEADERS = 100
SERVER_MAX_LINE = 65536
# The limit on a reply head that the client's h11 is given: httpcore2's
# HTTP11Connection.MAX_INCOMPLETE_EVENT_SIZE (h11's own default is 16 KiB).
CLIENT_MAX_HEAD = 100 * 1024


class LocalTransport(httpx2.BaseTransport):
    def __init__(self, endpoint: Endpoint, network: httpx2.BaseTransport) -> None:
        self._endpoint = endpoint
        self._network = network  # for everything not served here

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        run, target = self._local_run(request)
        if run is None or target is None:
            return self._network.handle_request(request)
        body = request.read()
        if len(body) > self._endpoint.body_limit(target) or not _sendable(request, body):
            return self._network.handle_request(request)  # refused there, as for anyone
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw]
        record, answer = self._endpoint.answer(
            run,
            target.incoming(headers, body),
            request.headers.get("host"),
            request.url.raw_path.decode("ascii"),
        )
        sent = record_head(answer, record)
        chunks = _in_memory(answer)
        if chunks is None:
            problem = (
                "harness endpoint: internal error: an app that answers from memory gave a cut "
                "answer or one that failed while it was read; please report it as a bug"
            )
            run.capture.end(record, problem)
            raise httpx2.RemoteProtocolError(problem, request=request)
        length = None if answer.streamed else sum(len(c) for c in chunks)
        try:
            head = head_bytes(answer.status, answer.reason, head_lines(sent, length))
        except Exception as exc:  # as the server's write: nothing went out, the line dropped
            run.capture.end(record, broke_off(0, exc))
            raise httpx2.RemoteProtocolError(
                "Server disconnected without sending a response.", request=request
            ) from None
        record.body = b"".join(chunks)
        run.capture.end(record)
        return _read_back(head + framed_body(chunks, answer.streamed), request)

    def _local_run(self, request: httpx2.Request) -> tuple[Run | None, Target | None]:
        url = request.url
        if (url.scheme, url.host, url.port) != ("http", "127.0.0.1", self._endpoint.port):
            return None, None
        if request.method not in METHODS:
            return None, None
        target = target_of(request.method, url.raw_path.decode("ascii"))
        if target is None:
            return None, None
        run = self._endpoint.resolve_target(target)
        if isinstance(run, str) or not getattr(run.app, "answers_from_memory", False):
            return None, None
        return run, target


def _sendable(request: httpx2.Request, body: bytes) -> bool:
    """Whether the client's h11 would send `request` and the server read it whole."""
    raw = request.headers.raw
    if len(raw) > SERVER_MAX_HEADERS or len(request.url.raw_path) > SERVER_MAX_LINE - 20:
        return False
    if any(len(k) + len(v) + 4 > SERVER_MAX_LINE for k, v in raw):
        return False
    try:
        h11.Request(method=request.method, target=request.url.raw_path, headers=raw)
    except h11.LocalProtocolError:
        return False
    lengths = request.headers.get_list("content-length")
    return not lengths or lengths == [str(len(body))]


def _in_memory(answer: Answer) -> list[bytes] | None:
    """The answer's chunks as the server writes them (empty ones dropped); None when the app
    broke its promise (a cut answer, chunks that fail when read)."""
    if answer.cut:
        return None
    try:
        return [c for c in answer.chunks if c]
    except Exception:
        return None


def _read_back(wire: bytes, request: httpx2.Request) -> httpx2.Response:
    """The reply as the client's h11 reads `wire` (the bytes the server would have sent)."""
    reader = h11.Connection(h11.CLIENT, max_incomplete_event_size=CLIENT_MAX_HEAD)
    reader.send(h11.Request(method=request.method, target="/", headers=[("host", "endpoint")]))
    reader.send(h11.EndOfMessage())
    reader.receive_data(wire)
    reader.receive_data(b"")  # the whole reply is here; a framing short of it is an error
    head: h11.Response | None = None
    chunks: list[bytes] = []
    try:
        while True:
            event = reader.next_event()
            if isinstance(event, h11.Response):
                head = event
            elif isinstance(event, h11.Data):
                chunks.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage) or event is h11.PAUSED:
                break
            elif isinstance(event, h11.ConnectionClosed) or event is h11.NEED_DATA:
                raise h11.RemoteProtocolError("the reply ended before its framing did")
    except h11.RemoteProtocolError as exc:
        raise httpx2.RemoteProtocolError(str(exc), request=request) from None
    if head is None:  # h11 yields the head before any data or end; never met
        raise httpx2.RemoteProtocolError("the reply had no head", request=request)
    return httpx2.Response(
        head.status_code,
        headers=list(head.headers.raw_items()),
        stream=_Chunks(chunks),
        extensions={"http_version": b"HTTP/1.1", "reason_phrase": bytes(head.reason)},
    )


class _Chunks(httpx2.SyncByteStream):
    """The body one chunk at a time (a stream: one event per chunk, as the server frames it)."""

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks
