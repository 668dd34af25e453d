"""The recording tap: exact bytes kept (content-encoding undone), 429/5xx retried with backoff
on live refreshes and reported, never seen by the SDK."""

from __future__ import annotations

import gzip

import httpx2
import pytest

from harness.cassettes.tap import RetryPolicy, TapTransport


def scripted(*responses: httpx2.Response) -> tuple[httpx2.MockTransport, list[httpx2.Request]]:
    seen: list[httpx2.Request] = []
    queue = list(responses)

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return queue.pop(0)

    return httpx2.MockTransport(handler), seen


def test_retries_use_retry_after_then_backoff_and_are_reported() -> None:
    inner, seen = scripted(
        httpx2.Response(429, headers={"retry-after": "0.5"}, json={"error": "slow down"}),
        httpx2.Response(503, json={"error": "busy"}),
        httpx2.Response(200, json={"ok": True}),
    )
    slept: list[float] = []
    reported: list[str] = []
    tap = TapTransport(inner, RetryPolicy(attempts=4, sleep=slept.append, report=reported.append))
    with httpx2.Client(transport=tap) as client:
        response = client.post("https://api.openai.com/v1/responses", json={"a": 1})
    assert response.status_code == 200 and response.json() == {"ok": True}
    assert len(seen) == 3 and slept == [0.5, 2.0]
    [record] = tap.records
    assert record.status == 200 and record.complete and record.body == b'{"ok":true}'
    assert record.retries == reported
    assert "429" in reported[0] and "retry 1/3 in 0.5s" in reported[0]
    assert "503" in reported[1]


def test_when_retries_run_out_the_last_answer_stands() -> None:
    inner, seen = scripted(*(httpx2.Response(529, json={"error": "overloaded"}) for _ in range(2)))
    tap = TapTransport(inner, RetryPolicy(attempts=2, sleep=lambda s: None))
    with httpx2.Client(transport=tap) as client:
        assert client.post("https://api.anthropic.com/v1/messages").status_code == 529
    assert len(seen) == 2 and tap.records[0].status == 529


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_not_retried(status: int) -> None:
    inner, seen = scripted(httpx2.Response(status, json={}))
    tap = TapTransport(inner, RetryPolicy(sleep=lambda s: pytest.fail("slept")))
    with httpx2.Client(transport=tap) as client:
        assert client.post("https://api.anthropic.com/v1/messages").status_code == status
    assert len(seen) == 1


def test_without_a_policy_nothing_is_retried() -> None:
    inner, seen = scripted(httpx2.Response(429, json={}))
    tap = TapTransport(inner)
    with httpx2.Client(transport=tap) as client:
        assert client.post("https://api.anthropic.com/v1/messages").status_code == 429
    assert len(seen) == 1


def test_gzip_bodies_are_kept_decoded() -> None:
    sse = b'event: ping\ndata: {"type":"ping"}\n\n'
    inner, _ = scripted(
        httpx2.Response(
            200,
            headers={"content-encoding": "gzip", "content-type": "text/event-stream"},
            content=gzip.compress(sse),
        )
    )
    tap = TapTransport(inner)
    with httpx2.Client(transport=tap) as client:
        assert client.post("https://api.anthropic.com/v1/messages").content == sse
    assert tap.records[0].body == sse and tap.records[0].complete
