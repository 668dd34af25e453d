"""The live source's app: a forwarding recorder in front of the real API.

The loop talks to the endpoint with a dummy key; each request goes on to the provider's real
base URL (or the one its SDK variable names, e.g. a gateway) with the dummy key replaced by the
real one wherever the client put it (a header or a query parameter), so the loop never holds a
real key. The answer streams back as it arrives. On a live refresh, 429 and 5xx answers are
retried with backoff here, before the client sees them, so a cassette never holds a transient
failure (and the SDK's own retries never fire).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx2

from harness.endpoint.capture import Recorded
from harness.endpoint.server import Answer, Incoming, error_answer

# Statuses worth another try on a live refresh: rate limits, server errors and Anthropic's
# overloaded (529: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`).
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504, 529})
# Hop-by-hop and framing headers are the endpoint's and the upstream connection's own.
NOT_FORWARDED = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "accept-encoding",
        "te",
        "upgrade",
        "proxy-connection",
    }
)
UPSTREAM_TIMEOUT = 600.0  # the Anthropic and OpenAI SDKs' own default


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    attempts: int = 4  # tries in all, the first included
    base_delay: float = 1.0  # doubled at each retry unless the API says how long to wait
    max_delay: float = 60.0
    sleep: Callable[[float], None] = time.sleep
    report: Callable[[str], None] = lambda line: None

    def delay(self, retry: int, response: httpx2.Response) -> float:
        """retry-after-ms / retry-after (seconds) when given, else exponential backoff."""
        for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
            value: str | None = response.headers.get(name)
            if value is not None:
                try:
                    return min(self.max_delay, max(0.0, float(value) * scale))
                except ValueError:
                    break  # an HTTP date: fall back to our own backoff
        return min(self.max_delay, self.base_delay * 2.0 ** (retry - 1))


class ForwardApp:
    """Forwards one provider's requests to `upstream` (its real base URL, as the SDK takes it:
    OpenAI's ends in `/v1`)."""

    def __init__(
        self,
        *,
        provider: str,
        upstream: str,
        real_key: str,
        dummy_key: str,
        client: httpx2.Client,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.provider, self.upstream = provider, upstream.rstrip("/")
        self.real_key, self.dummy_key = real_key, dummy_key
        self.client, self.retry = client, retry

    def answer(self, incoming: Incoming, record: Recorded) -> Answer:
        request = self.client.build_request(
            incoming.method,
            self.upstream_url(incoming),
            headers=[
                (k, self._real(v)) for k, v in incoming.headers if k.lower() not in NOT_FORWARDED
            ],
            content=incoming.body,
            timeout=UPSTREAM_TIMEOUT,
        )
        try:
            response = self._send(request, record)
        except httpx2.HTTPError as exc:
            # Answered (a 502 in the API's envelope) so the loop ends as it would on a network
            # failure, and marked so the exchange is never taken for a whole one.
            record.error = f"the live API could not be reached: {type(exc).__name__}: {exc}"
            return error_answer(incoming.route, f"harness live endpoint: {record.error}", 502)
        # The endpoint sets the framing headers itself (the body goes out decoded).
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers.raw]
        streamed = "text/event-stream" in response.headers.get("content-type", "")
        if not streamed:
            body = response.read()
            response.close()
            return Answer(
                status=response.status_code,
                headers=headers,
                chunks=[body],
                reason=response.reason_phrase,
            )
        return Answer(
            status=response.status_code,
            headers=headers,
            chunks=_Relay(response),
            streamed=True,
            reason=response.reason_phrase,
        )

    def upstream_url(self, incoming: Incoming) -> str:
        # The OpenAI SDK's base URL ends in /v1 (the endpoint's does too): the path after it
        # is what goes after the upstream base URL.
        path = incoming.path
        if self.provider == "openai" and path.startswith("/v1/"):
            path = path[3:]
        query = self._real(incoming.query)
        return self.upstream + path + (f"?{query}" if query else "")

    def _real(self, value: str) -> str:
        return value.replace(self.dummy_key, self.real_key) if self.dummy_key else value

    def _send(self, request: httpx2.Request, record: Recorded) -> httpx2.Response:
        tries = self.retry.attempts if self.retry is not None else 1
        for attempt in range(1, tries + 1):
            response = self.client.send(request, stream=True)
            if self.retry is None or attempt == tries or response.status_code not in RETRY_STATUSES:
                return response
            response.read()
            response.close()
            wait = self.retry.delay(attempt, response)
            line = (
                f"{request.method} {request.url.path}: {response.status_code} "
                f"{response.reason_phrase}; retry {attempt}/{tries - 1} in {wait:.1f}s"
            )
            record.retries.append(line)
            self.retry.report(line)
            self.retry.sleep(wait)
        raise AssertionError("unreachable: the last attempt returns")


class _Relay:
    """The upstream stream's decoded bytes, as they arrive; closes the upstream when done."""

    def __init__(self, response: httpx2.Response) -> None:
        self.response = response

    def __iter__(self) -> Iterator[bytes]:
        yield from self.response.iter_bytes()

    def close(self) -> None:
        self.response.close()
