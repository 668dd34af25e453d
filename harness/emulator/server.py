"""The emulator's HTTP server: routes each request by URL prefix to a scenario and a run,
validates it as the real API does, plays the script, injects faults, and logs everything.

Base URLs look like `http://127.0.0.1:PORT/s/<scenario_id>/r/<run_id>`; the run id isolates
parallel runs (logs and fault counters) on one shared server.

Every request gets an HTTP answer: bodies are read bounded (`http_body`) and parsed bounded
(`json_body`), and anything that still goes wrong is answered as a 500 in the API's envelope
(`_Handler._guarded`), never a dropped connection. The limits and the log's bounds are in
`limits`.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from harness.emulator.apis import PROVIDER_OF_API, Route, route, wire_api
from harness.emulator.http_body import BodyProblem, read_body
from harness.emulator.json_body import JsonProblem, load_json
from harness.emulator.limits import LISTEN_BACKLOG, UNROUTED_BODY_BYTES, Limits
from harness.emulator.runlog import LogEntry as LogEntry
from harness.emulator.runlog import RunLog
from harness.emulator.script import pick_step, step_fault
from harness.emulator.tokens import Minter
from harness.emulator.wire import ApiError, Context, Reply, Step, WireApi
from harness.errors import EmulatorError
from harness.scenario.model import Fault, Scenario
from harness.scrub import kept_query, kept_request_headers

# A run id is one URL path segment of unreserved characters; not only dots (`..` would be
# resolved away by the client), and short enough to read in a log.
RUN_ID = r"(?!\.+/)[A-Za-z0-9_.~-]{1,128}"
RUN_ID_TEXT = "1-128 letters, digits and _ . ~ - (not only dots)"
PREFIX = re.compile(rf"^/s/(?P<sid>[a-z0-9][a-z0-9_]*)/r/(?P<run>{RUN_ID})(?P<rest>/.*)$")


class _State:
    def __init__(self, scenarios: Iterable[Scenario], limits: Limits) -> None:
        self.scenarios = {s.id: s for s in scenarios}
        self.limits = limits
        self.lock = threading.Lock()
        self.log = RunLog(limits)
        self.fault_counts: dict[tuple[str, str, str, int, int], int] = {}

    def record(self, run: str, entry_args: dict[str, Any]) -> None:
        self.log.record(run, entry_args)

    def take_fault(self, key: tuple[str, str, str, int, int], fault: Fault) -> bool:
        """True while this step's fault still has times left to be served."""
        with self.lock:
            served = self.fault_counts.get(key, 0)
            if served >= fault.times:
                return False
            self.fault_counts[key] = served + 1
            return True


class Emulator:
    """The emulator, in process: `with Emulator([scenario]) as emu: emu.base_urls(id, run)`."""

    def __init__(
        self,
        scenarios: Iterable[Scenario] = (),
        host: str = "127.0.0.1",
        port: int = 0,
        limits: Limits | None = None,
    ) -> None:
        self._state = _State(scenarios, limits or Limits())
        try:
            self._server = _Server((host, port), _Handler)
        except OSError as exc:
            raise EmulatorError(
                f"cannot listen on {host}:{port}: {exc.strerror}; "
                "choose another --port or 0 for any free port"
            ) from None
        self._server.state = self._state
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def add(self, scenario: Scenario) -> None:
        with self._state.lock:
            self._state.scenarios[scenario.id] = scenario

    def start(self) -> Emulator:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="harness-emulator",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def base_urls(self, scenario_id: str, run: str = "default") -> dict[str, str]:
        """Base URLs per SDK: Anthropic and Gemini without `/v1`, OpenAI with it."""
        if scenario_id not in self._state.scenarios:
            raise EmulatorError(f"the emulator does not serve scenario {scenario_id!r}")
        if not valid_run_id(run):
            raise EmulatorError(f"run id {run[:60]!r} is not valid: use {RUN_ID_TEXT}")
        base = f"{self.root}/s/{scenario_id}/r/{run}"
        return {"anthropic": base, "openai": f"{base}/v1", "gemini": base}

    def log(self, run: str = "default") -> list[LogEntry]:
        """What the run sent, oldest first (bounded: see `limits`)."""
        return self._state.log.entries(run)


def valid_run_id(run: str) -> bool:
    return PREFIX.match(f"/s/x/r/{run}/") is not None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = LISTEN_BACKLOG
    state: _State

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (or a stream we cut on purpose) is not an error worth a
        traceback on stderr; anything else still gets the stdlib's report."""
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; without TCP_NODELAY the client's delayed
    # ACK stalls every response by ~40 ms (architecture.md, measured floors).
    disable_nagle_algorithm = True
    server: _Server
    reply_started = False

    def setup(self) -> None:
        super().setup()
        # A per-connection socket timeout: an idle or half-open connection ends instead of
        # holding its thread (the stdlib's handle_one_request closes on TimeoutError).
        self.connection.settimeout(self.server.state.limits.idle_timeout)

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the stdlib's per-request stderr line; the run log keeps every request."""

    def do_GET(self) -> None:
        self._not_found(urlsplit(self.path).path)

    def do_POST(self) -> None:
        url = urlsplit(self.path)
        match = PREFIX.match(url.path)
        api_route = route(match["rest"]) if match else None
        api = wire_api(api_route.api) if api_route else None
        raw = self._read_body(api)
        if isinstance(raw, BodyProblem):
            self._refuse(api, raw)
            return
        if match is None or api_route is None:
            self._not_found(url.path)
            return
        scenario = self.server.state.scenarios.get(match["sid"])
        if scenario is None:
            self._send_plain(
                404,
                f"harness emulator: no scenario {match['sid']!r} is served; "
                f"served: {', '.join(sorted(self.server.state.scenarios))}",
            )
            return
        query = dict(parse_qsl(url.query))
        exchange = _Exchange(self, scenario, match["run"], api_route, match["rest"], query, raw)
        self._guarded(exchange)

    def _guarded(self, exchange: _Exchange) -> None:
        """The last resort: an unexpected failure is answered (a 500 in the API's envelope
        naming it, and logged), never a dropped connection the SDK would retry."""
        try:
            exchange.serve()
        except OSError:
            self.close_connection = True  # the client is gone, or timed out: nothing to answer
        except Exception as exc:  # the point: no request goes unanswered
            if self.reply_started:
                self.close_connection = True  # a reply is half sent; ending it is all we can
                return
            message = (
                f"harness emulator: internal error while handling this request: "
                f"{type(exc).__name__}: {str(exc)[:200]}"
            )
            exchange.fail_safely(exchange.api.rejected(message, 500))

    def _read_body(self, api: WireApi | None) -> bytes | BodyProblem:
        limit = self.server.state.limits.body_bytes
        if limit is None:
            limit = api.max_body_bytes if api else UNROUTED_BODY_BYTES
        return read_body(self.headers, self.rfile, limit)

    def _refuse(self, api: WireApi | None, problem: BodyProblem) -> None:
        """A body over the limit or badly framed: the API's 413 or a 400, then close (how much
        of the body is still unread is unknown)."""
        self.close_connection = True
        if api is None:
            self._send_plain(413 if problem.too_large else 400, problem.message)
            return
        limit = self.server.state.limits.body_bytes or api.max_body_bytes
        error = (
            api.too_large(limit, problem.size)
            if problem.too_large
            else api.rejected(problem.message)
        )
        self.write_reply(api.error(error))

    def _not_found(self, path: str) -> None:
        self._send_plain(
            404,
            f"harness emulator: no API at {path}; use the base URLs that "
            "`harness emulate` prints (…/s/<scenario>/r/<run>)",
        )

    def _send_plain(self, status: int, text: str) -> None:
        body = json.dumps({"error": {"message": text, "type": "not_found"}}).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def write_reply(self, reply: Reply, cut: bool = False) -> None:
        self.reply_started = True
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if reply.streamed:
            self.send_header("transfer-encoding", "chunked")
        else:
            self.send_header("content-length", str(sum(len(c) for c in reply.chunks)))
        self.end_headers()
        chunks = list(reply.chunks)
        if cut:
            self._write_cut(reply, chunks)
            return
        for chunk in chunks:
            self._write_chunk(chunk, reply.streamed)
        if reply.streamed:
            self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _write_chunk(self, data: bytes, chunked: bool) -> None:
        if chunked:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        else:
            self.wfile.write(data)
        self.wfile.flush()

    def _write_cut(self, reply: Reply, chunks: list[bytes]) -> None:
        """Send about half the reply, ending inside an event, then drop the connection."""
        keep = max(1, len(chunks) // 2)
        for chunk in chunks[: keep - 1]:
            self._write_chunk(chunk, reply.streamed)
        last = chunks[keep - 1]
        self._write_chunk(last[: max(1, len(last) // 2)], reply.streamed)
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


class _Exchange:
    """One request through validation, script play, fault injection and the log."""

    def __init__(
        self,
        handler: _Handler,
        scenario: Scenario,
        run: str,
        api_route: Route,
        path: str,
        query: dict[str, str],
        raw: bytes,
    ) -> None:
        self.handler, self.scenario, self.run = handler, scenario, run
        self.route, self.path, self.query, self.raw = api_route, path, query, raw
        self.api: WireApi = wire_api(api_route.api)
        self.body: Any = None
        self.step: Step | None = None
        self.fault: str | None = None
        self.ctx: Context | None = None

    def serve(self) -> None:
        # What the route says (Gemini's model, stream and `alt`) already shapes an error's
        # envelope, so a body that is not JSON gets the same envelope as any other error.
        self.ctx = self._context()
        body = load_json(self.raw)
        if isinstance(body, JsonProblem):
            self.body = self.raw.decode("utf-8", "replace")
            self._fail(self._json_error(body))
            return
        self.body = body
        ctx = self._context()
        self.ctx = ctx
        problem = self.api.validate(self.body, ctx)
        if problem is not None:
            self._fail(problem)
            return
        step = pick_step(self.scenario, self.api.position(self.body))
        if isinstance(step, ApiError):
            self._fail(step)
            return
        self.step = step
        fault = step_fault(self.scenario, step)
        if fault is not None and self._take(fault):
            self._serve_fault(fault, step, ctx)
            return
        self._send(self.api.render(step, self.body, ctx), None)

    def _json_error(self, problem: JsonProblem) -> ApiError:
        if problem.syntax:
            return self.api.malformed(problem.detail, self.raw)
        return self.api.rejected(problem.detail)

    def fail_safely(self, error: ApiError) -> None:
        """Answer `error` from the guard; if even that fails, end the connection."""
        try:
            self._fail(error)
        except Exception:  # nothing is left to answer with
            self.handler.close_connection = True

    def _context(self) -> Context:
        body = self.body if isinstance(self.body, dict) else {}
        model = self.route.model or str(body.get("model", ""))
        stream = self.route.stream if self.route.stream is not None else bool(body.get("stream"))
        return Context(
            model=model,
            stream=stream,
            options=self.scenario.script_options,
            minter=Minter(f"{self.scenario.id}/{PROVIDER_OF_API[self.route.api]}"),
            query=self.query,
            run=self.run,
            store_owner=self.handler.server.state,
        )

    def _take(self, fault: Fault) -> bool:
        assert self.step is not None
        key = (
            self.scenario.id,
            self.run,
            self.route.api,
            self.step.user_index,
            self.step.turn_index,
        )
        return self.handler.server.state.take_fault(key, fault)

    def _serve_fault(self, fault: Fault, step: Step, ctx: Context) -> None:
        self.fault = fault.kind
        if fault.kind == "slow":
            time.sleep(fault.delay)
            self._send(self.api.render(step, self.body, ctx), None)
        elif fault.kind == "stream_cut":
            self._send(self.api.render(step, self.body, ctx), None, cut=True)
        else:
            self._fail(self.api.fault(fault.kind, fault.retry_after, ctx))

    def _fail(self, error: ApiError) -> None:
        self._send(self.api.error(error, self.ctx), error)

    def _send(self, reply: Reply, error: ApiError | None, cut: bool = False) -> None:
        headers = kept_request_headers(self.handler.headers.items())
        self.handler.server.state.record(
            self.run,
            {
                "api": self.route.api,
                "method": "POST",
                "path": self.path,
                "query": kept_query(self.query.items()),
                "headers": headers,
                "body": self.body,
                "status": reply.status,
                "error": error,
                "step": self.step,
                "fault": self.fault,
                "size": len(self.raw),
            },
        )
        try:
            self.handler.write_reply(reply, cut=cut)
        except (BrokenPipeError, ConnectionResetError):
            self.handler.close_connection = True
