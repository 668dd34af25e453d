"""The official SDK clients a loop is handed: sync and async, built on the base URL and key of
the harness's endpoint, nothing else. Capture happens at the endpoint, so these are plain SDK
clients; a loop may as well build its own from `LoopCall.base_url` / `api_key` / `env`.

What makes them safe to use from any loop shape, and quick:
- the async HTTP client keeps one connection pool per event loop (`PerLoopTransport`), so a
  loop that runs `asyncio.run` per query (or per round) never meets a pool bound to a closed
  event loop (`RuntimeError: Event loop is closed`); google-genai's `client.aio` included;
- the clients talk plain HTTP to 127.0.0.1 (live traffic is forwarded by the endpoint), so one
  SSL context is shared instead of loading the CA bundle for every client (~20 ms each);
- the sync clients share one connection pool, so each cell reuses the keep-alive connection
  to the endpoint instead of opening its own (and making the endpoint start a thread for it):
  0.6–1 ms a cell.

Each SDK is imported only when a client for it is built (importing anthropic alone takes ~2 s).
"""

from __future__ import annotations

import asyncio
import ssl
import threading
import weakref
from dataclasses import dataclass
from functools import cache
from typing import Any

import httpx2

from harness.scenario.model import Provider

CLIENT_TIMEOUT = 120.0  # seconds; the SDKs' own defaults are 600 (Anthropic, OpenAI)


@dataclass(frozen=True, kw_only=True)
class Clients:
    """A provider's sync and async official clients (Gemini: one `genai.Client`, whose `.aio`
    is the async side)."""

    sync: Any
    async_: Any


class PerLoopTransport(httpx2.AsyncBaseTransport):
    """An async transport with one connection pool per running event loop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx2.AsyncHTTPTransport]
        self._pools = weakref.WeakKeyDictionary()

    def _pool(self) -> httpx2.AsyncHTTPTransport:
        loop = asyncio.get_running_loop()
        with self._lock:
            pool = self._pools.get(loop)
            if pool is None:
                pool = httpx2.AsyncHTTPTransport(verify=shared_ssl_context())
                self._pools[loop] = pool
            return pool

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return await self._pool().handle_async_request(request)

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            pool = self._pools.pop(loop, None)
        if pool is not None:
            await pool.aclose()


def http_clients(
    transport: httpx2.BaseTransport | None = None,
) -> tuple[httpx2.Client, httpx2.AsyncClient]:
    """`transport`: the sync client's (None: the shared pool)."""
    sync = httpx2.Client(transport=transport or shared_transport(), timeout=CLIENT_TIMEOUT)
    async_ = httpx2.AsyncClient(transport=PerLoopTransport(), timeout=CLIENT_TIMEOUT)
    return sync, async_


def make_clients(
    provider: Provider,
    *,
    base_url: str,
    api_key: str,
    max_retries: int = 2,
    transport: httpx2.BaseTransport | None = None,
) -> Clients:
    """`transport`: the sync client's (None: the shared connection pool)."""
    sync_http, async_http = http_clients(transport)
    if provider == "anthropic":
        import anthropic

        common: dict[str, Any] = {
            "api_key": api_key,
            "base_url": base_url,
            "max_retries": max_retries,
        }
        return Clients(
            sync=anthropic.Anthropic(http_client=sync_http, **common),
            async_=anthropic.AsyncAnthropic(http_client=async_http, **common),
        )
    if provider == "openai":
        import openai

        common = {"api_key": api_key, "base_url": base_url, "max_retries": max_retries}
        return Clients(
            sync=openai.OpenAI(http_client=sync_http, **common),
            async_=openai.AsyncOpenAI(http_client=async_http, **common),
        )
    from google import genai
    from google.genai import types

    from harness.providers import gemini_retry_options

    options = types.HttpOptions(
        base_url=base_url,
        httpx_client=sync_http,
        httpx_async_client=async_http,
        async_client_args={"ssl": shared_ssl_context()},
        retry_options=gemini_retry_options(max_retries),
    )
    client = genai.Client(api_key=api_key, http_options=options)
    return Clients(sync=client, async_=client)


class SharedTransport(httpx2.BaseTransport):
    """The connection pool every cell's sync client shares. A loop that closes its client does
    not close it (cells recorded at once share it: their requests in flight stay whole), and
    it has no limit on connections, so one a loop never released cannot make a later cell
    wait for the pool."""

    def __init__(self) -> None:
        limits = httpx2.Limits(max_connections=None, max_keepalive_connections=20)
        self._pool = httpx2.HTTPTransport(verify=shared_ssl_context(), limits=limits)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        return self._pool.handle_request(request)

    def close(self) -> None:
        """Kept open for the other cells' clients; idle connections expire by themselves."""


@cache
def shared_transport() -> SharedTransport:
    return SharedTransport()


@cache
def shared_ssl_context() -> ssl.SSLContext:
    return ssl.create_default_context()
