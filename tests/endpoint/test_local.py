"""The in-process path to the endpoint (harness/endpoint/local.py) yields what the loopback HTTP
path yields: the whole library replayed both ways gives the same records, traces, answers and
findings. What it does not serve (another host, no API, no run, a body over the limit, an app
that streams as it goes) goes over HTTP and gets the server's own answer."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx2
import pytest

from harness.cassettes.replay import ReplayApp
from harness.cassettes.source import CassetteSource
from harness.emulator.limits import Limits
from harness.endpoint.capture import Recorded
from harness.endpoint.local import LocalTransport
from harness.endpoint.server import Answer, Endpoint, Incoming, Run, endpoint_threads
from harness.loop.clients import shared_transport
from harness.loop.reference import reference_loop
from harness.outcome import cell_findings
from harness.runner import CellRun, cells, run_cell
from tests.conftest import ROOT, library
from tests.endpoint.support import Served, serving

CELLS = cells(library())


# Per replay answer: whether an endpoint thread gave it (it came over HTTP).
ANSWERED_OVER_HTTP: dict[bool, list[bool]] = {True: [], False: []}


def replayed(in_process: bool) -> dict[str, tuple[CellRun, list[Any]]]:
    source = CassetteSource(
        [(c.scenario, c.provider, c.stream) for c in CELLS], ROOT / "cassettes", in_process
    )
    answer = ReplayApp.answer

    def noted(app: ReplayApp, incoming: Incoming, record: Recorded) -> Answer:
        ANSWERED_OVER_HTTP[in_process].append(threading.get_ident() in endpoint_threads())
        return answer(app, incoming, record)

    ReplayApp.answer = noted  # type: ignore[method-assign,assignment]
    try:
        out = {}
        for number, cell in enumerate(CELLS, 1):
            run = run_cell(cell, source, reference_loop, f"local{number}")
            own = source.findings(cell.scenario, cell.provider, cell.stream)
            out[cell.id] = (run, own)
        return out
    finally:
        ReplayApp.answer = answer  # type: ignore[method-assign]
        source.close()


@pytest.fixture(scope="module")
def both_ways() -> tuple[dict[str, Any], dict[str, Any]]:
    return replayed(in_process=True), replayed(in_process=False)


def test_the_two_replays_took_the_two_paths(
    both_ways: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    """Every answer of the in-process replay was given on the loop's thread, every one of the
    other over HTTP, by an endpoint thread: the comparison below compares the two paths."""
    local, http = ANSWERED_OVER_HTTP[True], ANSWERED_OVER_HTTP[False]
    assert len(local) == len(http) > len(CELLS)
    assert not any(local) and all(http)


def record_view(record: Recorded) -> tuple[Any, ...]:
    """A record without its clock readings."""
    return (
        record.seq,
        record.method,
        record.url.split("/s/", 1)[1],  # the port differs between the two endpoints
        [(k, "<port>" if k.lower() == "host" else v) for k, v in record.request_headers],
        record.request_body,
        record.status,
        record.reason,
        record.response_headers,
        record.body,
        record.complete,
        record.error,
        record.retries,
    )


def exchange_view(exchange: Any) -> Any:
    return replace(exchange, url=exchange.url.split("/s/", 1)[1], started=0.0, elapsed=0.0)


def test_the_library_replays_the_same_in_process_and_over_http(
    both_ways: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    local, http = both_ways
    assert local.keys() == http.keys() and len(local) == len(CELLS)
    for cell_id, (run, own) in local.items():
        other, other_own = http[cell_id]
        assert [record_view(r) for r in run.records] == [record_view(r) for r in other.records], (
            cell_id
        )
        assert [exchange_view(e) for e in run.exchanges] == [
            exchange_view(e) for e in other.exchanges
        ], cell_id
        assert [(q.answer, q.error) for q in run.queries] == [
            (q.answer, q.error) for q in other.queries
        ], cell_id
        assert (run.error, run.error_rule) == (other.error, other.error_rule), cell_id
        assert cell_findings(run) + own == cell_findings(other) + other_own, cell_id


def test_the_comparison_covers_streams_errors_and_every_provider(
    both_ways: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    """The identity above is not vacuous: both forms, every provider, and recorded error
    answers (with the SDKs' retries) are among the records compared."""
    local, _ = both_ways
    records = [r for run, _ in local.values() for r in run.records]
    assert any(r.status is not None and r.status >= 400 for r in records)
    assert any(("text/event-stream" in v) for r in records for _, v in r.response_headers)
    assert {run.cell.provider for run, _ in local.values()} == {"anthropic", "openai", "gemini"}
    assert all(r.complete for r in records)


class Answers:
    """An app that says which thread answered (the endpoint's own: it came over HTTP)."""

    answers_from_memory = True

    def __init__(self, answer: Answer) -> None:
        self.reply = answer
        self.over_http: list[bool] = []

    def answer(self, incoming: Incoming, record: Recorded) -> Answer:
        self.over_http.append(threading.get_ident() in endpoint_threads())
        return self.reply


JSON = Answer(status=200, headers=[("content-type", "application/json")], chunks=[b'{"ok": true}'])


def local_client(endpoint: Any, network: httpx2.BaseTransport | None = None) -> httpx2.Client:
    return httpx2.Client(transport=LocalTransport(endpoint, network or shared_transport()))


def test_a_run_whose_app_answers_from_memory_is_served_in_process() -> None:
    app = Answers(JSON)
    with serving(app) as served, local_client(served.endpoint) as client:
        reply = client.post(f"{served.base}/v1/messages", json={"model": "m"})
        assert (reply.status_code, reply.json()) == (200, {"ok": True})
        assert reply.headers["content-length"] == str(len(b'{"ok": true}'))
        assert reply.headers["server"].startswith("BaseHTTP/")
        assert app.over_http == [False]
        (record,) = served.run.capture.records()
        assert (record.status, record.complete, record.body) == (200, True, b'{"ok": true}')


def test_a_streamed_answer_arrives_chunk_by_chunk_in_process() -> None:
    events = [b"event: a\ndata: {}\n\n", b"", b"event: b\ndata: {}\n\n"]
    app = Answers(
        Answer(
            status=200,
            headers=[("content-type", "text/event-stream"), ("content-length", "999")],
            chunks=events,
            streamed=True,
        )
    )
    with serving(app) as served, local_client(served.endpoint) as client:
        with client.stream("POST", f"{served.base}/v1/messages", json={}) as reply:
            assert list(reply.iter_raw()) == [events[0], events[2]]
            assert reply.headers["transfer-encoding"] == "chunked"
            assert "content-length" not in reply.headers  # the app's framing is dropped
        (record,) = served.run.capture.records()
        assert record.body == events[0] + events[2]


def test_an_app_that_does_not_answer_from_memory_is_served_over_http() -> None:
    app = Answers(JSON)
    app.answers_from_memory = False
    with serving(app) as served, local_client(served.endpoint) as client:
        assert client.post(f"{served.base}/v1/messages", json={}).status_code == 200
        assert app.over_http == [True]


def test_what_the_endpoint_does_not_serve_gets_the_servers_own_answer() -> None:
    app = Answers(JSON)
    with Endpoint(limits=Limits(body_bytes=64)) as endpoint, local_client(endpoint) as client:
        run = endpoint.open(Run(id="r", scenario_id="s", app=app, provider="anthropic"))
        no_api = client.post(f"{endpoint.root}/nowhere", json={})
        no_run = client.post(f"{endpoint.root}/s/s/r/gone/v1/messages", json={})
        too_big = client.post(f"{endpoint.root}/s/s/r/r/v1/messages", content=b"x" * 65)
        assert (no_api.status_code, no_run.status_code, too_big.status_code) == (404, 404, 413)
        assert "no API at /nowhere" in no_api.text
        assert "no run 'gone'" in no_run.text
        assert too_big.json()["error"]["type"] == "request_too_large"  # Anthropic's 413
        assert app.over_http == []
        assert run.capture.records() == []


def test_another_host_goes_to_the_network_transport() -> None:
    seen: list[str] = []

    def network(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        return httpx2.Response(204)

    with serving(Answers(JSON)) as served:
        client = local_client(served.endpoint, httpx2.MockTransport(network))
        assert client.get("http://example.invalid/v1/messages").status_code == 204
        assert seen == ["http://example.invalid/v1/messages"]


def test_an_app_failing_in_process_is_answered_as_the_server_does() -> None:
    class Failing:
        answers_from_memory = True

        def answer(self, incoming: Incoming, record: Recorded) -> Answer:
            raise ValueError("boom")

    with serving(Failing()) as served, local_client(served.endpoint) as client:
        reply = client.post(f"{served.base}/v1/messages", json={})
        assert reply.status_code == 500
        assert "internal error: ValueError: boom" in reply.text
        assert reply.json()["type"] == "error"  # Anthropic's envelope


def test_a_broken_promise_is_an_error_on_both_sides_never_a_hung_record() -> None:
    cut = Answer(status=200, headers=[], chunks=[b"a", b"b"], streamed=True, cut=True)
    with serving(Answers(cut)) as served, local_client(served.endpoint) as client:
        with pytest.raises(httpx2.RemoteProtocolError, match="report it as a bug"):
            client.post(f"{served.base}/v1/messages", json={})
        (record,) = served.run.capture.records()
        assert record.ended is not None and not record.complete
        assert "internal error" in (record.error or "")


def test_the_replay_app_answers_from_memory() -> None:
    assert ReplayApp.answers_from_memory is True


def either_way(
    answer: Answer, send: Callable[[httpx2.Client, str], httpx2.Response]
) -> list[tuple[Any, ...]]:
    """What `send` got, and what the endpoint recorded, in-process and over HTTP: for each, the
    reply as the client saw it (but the clock's Date) or the error it raised, and the records
    without their clock readings."""
    out = []
    for in_process in (True, False):
        with serving(Answers(answer)) as served, client_for(served, in_process) as client:
            try:
                reply = send(client, served.base)
                headers = [(k, v) for k, v in reply.headers.multi_items() if k != "date"]
                seen: tuple[Any, ...] = (reply.status_code, reply.reason_phrase, headers)
                seen += (reply.content,)
            except Exception as exc:  # httpx's errors, and h11's own on a bad request body
                seen = ("raised", type(exc).__name__)
            served.run.capture.settle()  # the server's thread may still be ending its record
            out.append((seen, [record_view(r)[3:] for r in served.run.capture.records()]))
    return out


def client_for(served: Served, in_process: bool) -> httpx2.Client:
    return local_client(served.endpoint) if in_process else httpx2.Client()


def post(client: httpx2.Client, base: str) -> httpx2.Response:
    return client.post(f"{base}/v1/messages", json={"model": "m"})


EVENTS = [b"event: a\ndata: {}\n\n", b"event: b\ndata: {}\n\n"]
REPLIES = {
    "json": JSON,
    "stream": Answer(
        status=200,
        headers=[("content-type", "text/event-stream"), ("request-id", "req_1")],
        chunks=EVENTS,
        streamed=True,
    ),
    "reason": Answer(
        status=429,
        headers=[("content-type", "application/json"), ("retry-after", "0")],
        chunks=[b'{"type": "error"}'],
        reason="Too Many Requests, slow down",
    ),
    "unknown_status": Answer(status=529, headers=[("transfer-encoding", "gzip")], chunks=[b"{}"]),
    "latin1_header": Answer(status=200, headers=[("x-org", "Société")], chunks=[b"{}"]),
    "header_outside_latin1": Answer(status=200, headers=[("x-org", "日本")], chunks=[b"{}"]),
    "reason_outside_latin1": Answer(status=200, headers=[], chunks=[b"{}"], reason="OK 日本"),
    "spaced_header": Answer(status=200, headers=[("x-a", "  v  ")], chunks=[b"{}"]),
    "no_content_with_a_body": Answer(status=204, headers=[], chunks=[b"{}"]),
    "broken_head": Answer(status=200, headers=[("x-a", "v\r\nbroken")], chunks=[b"{}"]),
}


@pytest.mark.parametrize("name", list(REPLIES))
def test_the_client_sees_the_same_reply_either_way(name: str) -> None:
    """Status, reason, every header and the body bytes, or the same error; the same records
    (a head the server cannot write breaks off the same way)."""
    local, http = either_way(REPLIES[name], post)
    assert local == http


def test_a_head_outside_latin1_breaks_off_on_both_paths() -> None:
    """Not vacuous: the comparison above covers a reply that fails."""
    (seen, records), _ = either_way(REPLIES["header_outside_latin1"], post)
    assert seen == ("raised", "RemoteProtocolError")
    assert all("UnicodeEncodeError" in (r[-2] or "") for r in records)


def sending(**kwargs: Any) -> Callable[[httpx2.Client, str], httpx2.Response]:
    method = kwargs.pop("method", "POST")
    return lambda client, base: client.request(method, f"{base}/v1/messages", **kwargs)


REQUESTS = {
    "header_ending_in_a_newline": sending(json={}, headers={"x-bad": "v\n"}),
    "header_with_a_trailing_space": sending(json={}, headers={"x-bad": "v "}),
    "wrong_content_length": sending(content=b"abc", headers={"content-length": "5"}),
    "too_many_headers": sending(json={}, headers={f"x-{n}": "v" for n in range(101)}),
    "header_line_too_long": sending(json={}, headers={"x-long": "v" * 70_000}),
    "head": sending(method="HEAD"),
    "options": sending(method="OPTIONS"),
    "chunked_body": lambda client, base: client.post(
        f"{base}/v1/messages", content=iter([b'{"a"', b": 1}"])
    ),
    "get": sending(method="GET"),
    "percent_encoded_query": sending(json={}, params={"q": "a b/ü"}),
}


@pytest.mark.parametrize("name", list(REQUESTS))
def test_a_request_fares_the_same_either_way(name: str) -> None:
    """A request the client's HTTP layer or the server would refuse is refused the same way
    (it goes over HTTP); the others are answered and recorded alike."""
    local, http = either_way(JSON, REQUESTS[name])
    assert local == http


def test_requests_refused_either_way_are_among_those_compared() -> None:
    """Not vacuous: some of those requests fail before the app, some are answered."""
    refused = {n: either_way(JSON, REQUESTS[n])[0] for n in ("header_ending_in_a_newline", "head")}
    assert refused["header_ending_in_a_newline"] == (("raised", "LocalProtocolError"), [])
    assert refused["head"][0][0] == 501 and refused["head"][1] == []
    (seen, records), _ = either_way(JSON, REQUESTS["chunked_body"])
    assert seen[0] == 200 and records[0][1] == b'{"a": 1}'
