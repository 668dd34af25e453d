"""The live source's forwarding recorder: requests go on to the upstream with the dummy key
swapped for the real one, answers come back as they arrive (content-encoding undone) and are
recorded whole, 429/5xx are retried with backoff on live refreshes and reported, never seen by
the client; an unreachable upstream is answered, not dropped."""

from __future__ import annotations

import gzip

import httpx2
import pytest

from harness.endpoint.forward import ForwardApp, RetryPolicy
from tests.endpoint.support import serving

DUMMY, REAL = "dummy-key-for-the-loop", "sk-real-key-from-the-environment-0123"


def upstream(*responses: httpx2.Response) -> tuple[httpx2.Client, list[httpx2.Request]]:
    seen: list[httpx2.Request] = []
    queue = list(responses)

    def handler(request: httpx2.Request) -> httpx2.Response:
        request.read()
        seen.append(request)
        return queue.pop(0)

    return httpx2.Client(transport=httpx2.MockTransport(handler)), seen


def forwarder(
    client: httpx2.Client, provider: str = "openai", retry: RetryPolicy | None = None
) -> ForwardApp:
    base = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
    return ForwardApp(
        provider=provider,
        upstream=base[provider],
        real_key=REAL,
        dummy_key=DUMMY,
        client=client,
        retry=retry,
    )


def test_the_dummy_key_is_swapped_wherever_the_client_put_it() -> None:
    client, seen = upstream(httpx2.Response(200, json={"ok": True}))
    with serving(forwarder(client)) as served:
        answer = httpx2.post(
            f"{served.base}/v1/responses?key={DUMMY}",
            json={"a": 1},
            headers={"authorization": f"Bearer {DUMMY}", "x-custom-auth": DUMMY},
        )
    assert answer.status_code == 200 and answer.json() == {"ok": True}
    (sent,) = seen
    assert str(sent.url) == f"https://api.openai.com/v1/responses?key={REAL}"
    assert (
        sent.headers["authorization"] == f"Bearer {REAL}" and sent.headers["x-custom-auth"] == REAL
    )
    assert sent.content == b'{"a":1}'
    (exchange,) = served.run.capture.exchanges()
    assert REAL not in str(exchange) and DUMMY not in str(exchange)  # scrubbed view


def test_retries_use_retry_after_then_backoff_and_are_reported() -> None:
    client, seen = upstream(
        httpx2.Response(429, headers={"retry-after": "0.5"}, json={"error": "slow down"}),
        httpx2.Response(503, json={"error": "busy"}),
        httpx2.Response(200, json={"ok": True}),
    )
    slept: list[float] = []
    reported: list[str] = []
    policy = RetryPolicy(attempts=4, sleep=slept.append, report=reported.append)
    with serving(forwarder(client, retry=policy)) as served:
        response = httpx2.post(f"{served.base}/v1/responses", json={"a": 1})
    assert response.status_code == 200 and response.json() == {"ok": True}
    assert len(seen) == 3 and slept == [0.5, 2.0]
    [record] = served.run.capture.records()
    assert record.status == 200 and record.complete and record.body == b'{"ok":true}'
    assert record.retries == reported
    assert "429" in reported[0] and "retry 1/3 in 0.5s" in reported[0]
    assert "503" in reported[1]


def test_when_retries_run_out_the_last_answer_stands() -> None:
    client, seen = upstream(*(httpx2.Response(529, json={"error": "overloaded"}) for _ in range(2)))
    app = forwarder(client, "anthropic", RetryPolicy(attempts=2, sleep=lambda s: None))
    with serving(app) as served:
        assert httpx2.post(f"{served.base}/v1/messages", json={}).status_code == 529
    assert len(seen) == 2 and served.run.capture.records()[0].status == 529


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_not_retried(status: int) -> None:
    client, seen = upstream(httpx2.Response(status, json={}))
    app = forwarder(client, "anthropic", RetryPolicy(sleep=lambda s: pytest.fail("slept")))
    with serving(app) as served:
        assert httpx2.post(f"{served.base}/v1/messages", json={}).status_code == status
    assert len(seen) == 1


def test_without_a_policy_nothing_is_retried() -> None:
    client, seen = upstream(httpx2.Response(429, json={}))
    with serving(forwarder(client, "anthropic")) as served:
        assert httpx2.post(f"{served.base}/v1/messages", json={}).status_code == 429
    assert len(seen) == 1


def test_gzip_streams_are_relayed_and_kept_decoded() -> None:
    sse = b'event: ping\ndata: {"type":"ping"}\n\n'
    client, _ = upstream(
        httpx2.Response(
            200,
            headers={"content-encoding": "gzip", "content-type": "text/event-stream"},
            content=gzip.compress(sse),
        )
    )
    with serving(forwarder(client, "anthropic")) as served:
        assert httpx2.post(f"{served.base}/v1/messages", json={}).content == sse
    [record] = served.run.capture.records()
    assert record.body == sse and record.complete
    assert served.run.capture.exchanges()[0].events is not None


def test_an_unreachable_upstream_is_answered_and_never_taken_for_whole() -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused")

    client = httpx2.Client(transport=httpx2.MockTransport(refuse))
    with serving(forwarder(client, "anthropic")) as served:
        answer = httpx2.post(f"{served.base}/v1/messages", json={})
    assert answer.status_code == 502 and "could not be reached" in answer.text
    [record] = served.run.capture.records()
    assert not record.complete and "ConnectError" in (record.error or "")
