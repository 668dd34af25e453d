"""The tool endpoints on 127.0.0.1, for programs outside the process: plain HTTP and MCP.

    POST /t/<token>/tools/<name>   body: the arguments object (JSON)
        200 {"result": TEXT}       the tool ran
        200 {"error": TEXT}        the scenario's tool fails (ToolError): send TEXT back as an
                                   error result
        404 {"error": ...}         no such tool, or no query under <token>
        400 / 413 {"error": ...}   the body is not a JSON object, or is too large
    /t/<token>/mcp                 the same tools on an MCP server (streamable HTTP)

Each query is served under a token of its own (`serving`), removed when the query ends, so a
late call from a stray process is refused instead of landing in another cell's log. One server
(uvicorn in a daemon thread, an ASGI app: the official MCP SDK's server is one) serves every
query of a run, cells in parallel included.
"""

from __future__ import annotations

import itertools
import json
import secrets
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import uvicorn
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from harness.errors import HarnessError
from harness.exec.mcp_tools import mcp_server
from harness.exec.tool_calls import run_tool
from harness.loop.contract import ToolSpec

MAX_ARGUMENT_BYTES = 4 * 1024 * 1024  # as the MCP SDK's own request body limit
START_TIMEOUT = 30.0  # seconds for uvicorn to listen


@dataclass(frozen=True, kw_only=True)
class Served:
    """Where one query's tools are: `POST {tools_url}{name}`, and the MCP server."""

    tools_url: str
    mcp_url: str


class ToolServer:
    """`with ToolServer() as server: with server.serving(call.tools) as urls: ...`"""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queries: dict[str, Mapping[str, ToolSpec]] = {}
        self._numbers = itertools.count(1)
        app = mcp_server(self.tools).streamable_http_app(
            streamable_http_path="/t/{token}/mcp",
            stateless_http=True,  # every request stands alone: nothing outlives its query
            custom_starlette_routes=[
                Route("/t/{token}/tools/{name}", self._http_tool, methods=["POST"])
            ],
        )
        config = uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", access_log=False, lifespan="on"
        )
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None
        self.root = ""

    def start(self) -> ToolServer:
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._server.run, name="harness-tools", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise HarnessError("the tool endpoint could not listen on 127.0.0.1")
            time.sleep(0.01)
        port = self._server.servers[0].sockets[0].getsockname()[1]
        self.root = f"http://127.0.0.1:{port}"
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
            self._thread = None

    def __enter__(self) -> ToolServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @contextmanager
    def serving(self, tools: Sequence[ToolSpec]) -> Iterator[Served]:
        """Serve `tools` (one query's, from the cell's tool recorder) until the block ends."""
        token = f"q{next(self._numbers)}-{secrets.token_hex(6)}"
        with self._lock:
            self._queries[token] = {t.name: t for t in tools}
        try:
            base = f"{self.start().root}/t/{token}"
            yield Served(tools_url=f"{base}/tools/", mcp_url=f"{base}/mcp")
        finally:
            with self._lock:
                del self._queries[token]

    def tools(self, token: str) -> Mapping[str, ToolSpec] | None:
        with self._lock:
            return self._queries.get(token)

    async def _http_tool(self, request: Request) -> Response:
        token, name = request.path_params["token"], request.path_params["name"]
        tools = self.tools(token)
        if tools is None:
            return _error(404, f"no query is running under {token!r} (it ended, or never began)")
        spec = tools.get(name)
        if spec is None:
            return _error(
                404, f"no tool {name!r} in this scenario; its tools: {', '.join(tools) or '-'}"
            )
        arguments = await _arguments(request)
        if isinstance(arguments, Response):
            return arguments
        # In a worker thread, so calls the program makes at once overlap in the log (L4).
        text, is_error = await anyio.to_thread.run_sync(run_tool, spec, arguments)
        return JSONResponse({"error": text} if is_error else {"result": text})


async def _arguments(request: Request) -> dict[str, Any] | Response:
    """The body as an arguments object, read bounded; or the 400/413 answer saying why not."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_ARGUMENT_BYTES:
            return _error(413, f"the arguments are over {MAX_ARGUMENT_BYTES} bytes")
    try:
        arguments = json.loads(bytes(body) or b"{}")
    except (ValueError, RecursionError) as exc:
        return _error(400, f"the body is not JSON: {exc}")
    if not isinstance(arguments, dict):
        return _error(400, f"the body must be the arguments object, not {type(arguments).__name__}")
    return arguments


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)
