"""The endpoint's routing and bounds: a run prefix names the run; a request without one goes
to the single run open for its provider (409 when there is none or several); runs made on
demand and their captures are bounded; any method under a run prefix reaches the run's app."""

from __future__ import annotations

import httpx2
import pytest

from harness.emulator.limits import Limits
from harness.endpoint.capture import Recorded, RunCapture
from harness.endpoint.server import Answer, Endpoint, Incoming, Run, _framed, _Handler, _Unsent

BODY = {"model": "m", "max_tokens": 1, "messages": []}


class Named:
    def __init__(self, name: str) -> None:
        self.name = name

    def answer(self, incoming: Incoming, record: Recorded) -> Answer:
        text = f'{{"run": "{self.name}", "method": "{incoming.method}", "path": "{incoming.path}"}}'
        return Answer(
            status=200, headers=[("content-type", "application/json")], chunks=[text.encode()]
        )


def test_a_prefix_names_its_run_and_no_prefix_goes_to_the_one_open_run() -> None:
    with Endpoint() as ep:
        ep.open(Run(id="a", scenario_id="s", app=Named("a"), provider="anthropic"))
        ep.open(Run(id="b", scenario_id="s", app=Named("b"), provider="openai"))
        assert httpx2.post(f"{ep.root}/s/s/r/b/v1/messages", json=BODY).json()["run"] == "b"
        assert httpx2.post(f"{ep.root}/v1/messages", json=BODY).json()["run"] == "a"
        assert httpx2.post(f"{ep.root}/v1/responses", json=BODY).json()["run"] == "b"
        assert httpx2.post(f"{ep.root}/s/s/r/zz/v1/messages", json=BODY).status_code == 404


def test_no_prefix_with_no_or_several_runs_open_is_a_clear_409() -> None:
    with Endpoint() as ep:
        none = httpx2.post(f"{ep.root}/v1/messages", json=BODY)
        assert none.status_code == 409 and "0 runs for anthropic" in none.text
        for run in ("a", "b"):
            ep.open(Run(id=run, scenario_id="s", app=Named(run), provider="anthropic"))
        several = httpx2.post(f"{ep.root}/v1/messages", json=BODY)
        assert several.status_code == 409 and "LoopCall.base_url" in several.text
        ep.close("a")
        assert httpx2.post(f"{ep.root}/v1/messages", json=BODY).json()["run"] == "b"


def test_any_method_and_path_under_a_prefix_reaches_the_app() -> None:
    with Endpoint() as ep:
        ep.open(Run(id="a", scenario_id="s", app=Named("a")))
        got = httpx2.get(f"{ep.root}/s/s/r/a/v1/models").json()
        assert got == {"run": "a", "method": "GET", "path": "/v1/models"}
        assert httpx2.get(f"{ep.root}/v1/models").status_code == 404  # no prefix, no API


def test_runs_made_on_demand_are_bounded() -> None:
    made: list[str] = []

    def make(scenario_id: str, run_id: str) -> Run | str:
        made.append(run_id)
        return Run(id=run_id, scenario_id=scenario_id, app=Named(run_id), made=True)

    with Endpoint(limits=Limits(capture_runs=2), resolver=make) as ep:
        for run in ("a", "b", "c"):
            httpx2.post(f"{ep.root}/s/s/r/{run}/v1/messages", json=BODY)
        assert made == ["a", "b", "c"]
        assert ep.run("a") is None and ep.run("b") is not None and ep.run("c") is not None


def test_a_bounded_capture_keeps_the_newest_exchanges_and_counts_them_all() -> None:
    capture = RunCapture(keep=2)
    for n in range(5):
        capture.end(capture.begin("POST", f"http://h/{n}", [], b""))
    assert capture.arrivals() == 5
    assert [r.url for r in capture.records()] == ["http://h/3", "http://h/4"]


@pytest.mark.parametrize("streamed", [True, False], ids=["chunked", "sized"])
def test_a_reply_cut_short_by_the_client_keeps_only_the_chunks_that_went_out_whole(
    streamed: bool,
) -> None:
    """The one-send write: when the socket took only part of it, the record's body holds
    the chunks whose frames were sent in full, and not the one cut through."""
    chunks = [b"first", b"second", b"third"]
    head = b"HTTP/1.1 200 OK\r\n\r\n"
    framed = [_framed(c) if streamed else c for c in chunks]
    for sent, kept in [
        (len(head) - 1, b""),
        (len(head) + len(framed[0]), b"first"),
        (len(head) + len(framed[0]) + len(framed[1]) - 1, b"first"),
        (len(head) + len(framed[0]) + len(framed[1]), b"firstsecond"),
    ]:
        handler = _Handler.__new__(_Handler)

        def refuse(data: bytes, sent: int = sent) -> None:
            raise _Unsent(sent)

        handler._send = refuse  # type: ignore[method-assign]
        body = bytearray()
        with pytest.raises(_Unsent):
            handler._write_at_once(head, chunks, body, streamed)
        assert bytes(body) == kept, (sent, kept)
