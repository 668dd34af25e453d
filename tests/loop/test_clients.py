"""The clients a loop is handed (`harness.loop.clients`): every cell's sync client shares one
connection pool, which a loop closing its own client does not close under the others."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx2

from harness.endpoint.capture import Recorded
from harness.endpoint.server import Answer, Incoming
from harness.loop.clients import http_clients, shared_ssl_context
from tests.endpoint.support import serving


class _Threads:
    """Answers a small stream, noting the endpoint thread (one per connection) that served."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    def answer(self, incoming: Incoming, record: Recorded) -> Answer:
        self.seen.append(threading.get_ident())
        events = [f"data: {n}\n\n".encode() for n in range(3)]
        return Answer(
            status=200,
            headers=[("content-type", "text/event-stream")],
            chunks=events,
            streamed=True,
        )


def test_cells_reuse_one_connection_to_the_endpoint() -> None:
    app = _Threads()
    with serving(app) as served:
        for _ in range(3):  # three cells, each with the clients it is handed
            sync, _async = http_clients()
            sync.post(f"{served.base}/v1/messages", content=b"{}").read()
        own = httpx2.Client(verify=shared_ssl_context())  # a client of the loop's own
        own.post(f"{served.base}/v1/messages", content=b"{}").read()
        own.close()
    assert app.seen[0] == app.seen[1] == app.seen[2] != app.seen[3]


class _Held:
    """A stream whose rest, for a request whose body is `hold`, is written once `go` is set."""

    def __init__(self) -> None:
        self.go = threading.Event()

    def answer(self, incoming: Incoming, record: Recorded) -> Answer:
        def events() -> Iterator[bytes]:
            yield b"data: 0\n\n"
            if incoming.body == b"hold":
                self.go.wait(10)
            yield b"data: 1\n\n"

        return Answer(
            status=200,
            headers=[("content-type", "text/event-stream")],
            chunks=events(),
            streamed=True,
        )


def test_a_loop_closing_its_client_leaves_other_cells_requests_whole() -> None:
    app = _Held()
    with serving(app) as served:
        first, _ = http_clients()
        second, _ = http_clients()
        first.post(f"{served.base}/v1/messages", content=b"{}").read()
        with second.stream("POST", f"{served.base}/v1/messages", content=b"hold") as streamed:
            first.close()  # another cell's loop is done with its client
            app.go.set()
            assert streamed.read() == b"data: 0\n\ndata: 1\n\n"
