"""The endpoint reached without a socket: an httpx transport for the harness's own sync clients
(`LoopCall.client`) that hands a request straight to the run it names, for runs whose app
answers from memory (a replay).

Everything but the bytes on the wire is the server's own code: the same routing, the same
capture (`Endpoint.answer` records the request as the client built it and the answer as the
app gave it), the same headers and framing choices (`record_head`, `head_lines`). What it saves
is a loopback HTTP exchange per model call: the request serialised and parsed again, and two
thread handoffs (about 1 ms each call; benchmarks/replay_overhead.py). Tests replay the whole
library both ways and compare every record, trace and finding (tests/endpoint/test_local.py).

Anything else — another host, no API at the path, no open run, a body over the API's limit, an
app that does not answer from memory (the emulator's faults, a live relay) — goes over HTTP to
the endpoint as before, so every refusal and error keeps a single implementation.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx2

from harness.endpoint.server import (
    Answer,
    Endpoint,
    Run,
    Target,
    head_lines,
    reason_phrase,
    record_head,
    target_of,
)


class LocalTransport(httpx2.BaseTransport):
    def __init__(self, endpoint: Endpoint, network: httpx2.BaseTransport) -> None:
        self._endpoint = endpoint
        self._network = network  # for everything not served here

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        run, target = self._local_run(request)
        if run is None or target is None:
            return self._network.handle_request(request)
        body = request.read()
        if len(body) > self._endpoint.body_limit(target):
            return self._network.handle_request(request)  # the server's 413, as for anyone
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw]
        host = request.headers.get("host") or f"127.0.0.1:{self._endpoint.port}"
        path = request.url.raw_path.decode("ascii")
        record, answer = self._endpoint.answer(
            run, target.incoming(headers, body), f"http://{host}{path}"
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
        record.body = b"".join(chunks)
        run.capture.end(record)
        length = None if answer.streamed else len(record.body)
        return httpx2.Response(
            answer.status,
            headers=head_lines(sent, length),
            stream=_Chunks(chunks),
            extensions={
                "http_version": b"HTTP/1.1",
                "reason_phrase": reason_phrase(answer.status, answer.reason).encode("latin-1"),
            },
        )

    def _local_run(self, request: httpx2.Request) -> tuple[Run | None, Target | None]:
        url = request.url
        if (url.scheme, url.host, url.port) != ("http", "127.0.0.1", self._endpoint.port):
            return None, None
        target = target_of(request.method, url.raw_path.decode("ascii"))
        if target is None:
            return None, None
        run = self._endpoint.resolve_target(target)
        if isinstance(run, str) or not getattr(run.app, "answers_from_memory", False):
            return None, None
        return run, target

    def close(self) -> None:
        """Nothing to close: the network transport is the cells' shared pool."""


def _in_memory(answer: Answer) -> list[bytes] | None:
    """The answer's chunks as the server writes them (empty ones dropped); None when the app
    broke its promise (a cut answer, chunks that fail when read)."""
    if answer.cut:
        return None
    try:
        return [c for c in answer.chunks if c]
    except Exception:
        return None


class _Chunks(httpx2.SyncByteStream):
    """The body one chunk at a time (a stream: one event per chunk, as the server frames it)."""

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks
