"""The emulator: the scripted source's app behind the endpoint. Each request is routed (by the
endpoint) to a scenario and a run, validated as the real API does, answered from the script,
with faults injected where the scenario asks, and logged per run.

Base URLs look like `http://127.0.0.1:PORT/s/<scenario_id>/r/<run_id>`; the run id isolates
parallel runs (logs, fault counters and captures) on one shared server. Bodies are parsed
bounded (`json_body`); reading them, the 413s and the last-resort 500 are the endpoint's
(`harness.endpoint.server`). The limits and the log's bounds are in `limits`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qsl

from harness.capture import Exchange
from harness.emulator.apis import PROVIDER_OF_API, Route, wire_api
from harness.emulator.json_body import JsonProblem, load_json
from harness.emulator.limits import Limits
from harness.emulator.runlog import LogEntry as LogEntry
from harness.emulator.runlog import RunLog
from harness.emulator.script import pick_step, step_fault, step_note
from harness.emulator.tokens import Minter
from harness.emulator.wire import ApiError, Context, Reply, Step, WireApi
from harness.endpoint.capture import Recorded, RunCapture
from harness.endpoint.server import RUN_ID_TEXT as RUN_ID_TEXT
from harness.endpoint.server import Answer, Endpoint, Incoming, Run, error_answer
from harness.endpoint.server import valid_run_id as valid_run_id
from harness.errors import EmulatorError
from harness.scenario.model import Fault, Scenario
from harness.scrub import kept_query, kept_request_headers


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
    """The emulator, in process: `with Emulator([scenario]) as emu: emu.base_urls(id, run)`.

    Any run id in a base URL is served (a run is made on first use, as `harness emulate`
    needs); `open_run` opens one for a cell, so that requests without the prefix (a client
    built from the SDKs' variables) reach it too, and `close_run` ends it."""

    def __init__(
        self,
        scenarios: Iterable[Scenario] = (),
        host: str = "127.0.0.1",
        port: int = 0,
        limits: Limits | None = None,
        on_run: Callable[[Run], None] | None = None,
    ) -> None:
        """`on_run` is told of each run made on demand (`harness emulate --record` keeps them
        to write their cassettes)."""
        self._state = _State(scenarios, limits or Limits())
        self._on_run = on_run
        self._endpoint = Endpoint(host, port, self._state.limits, resolver=self._made_run)

    @property
    def port(self) -> int:
        return self._endpoint.port

    @property
    def root(self) -> str:
        return self._endpoint.root

    def add(self, scenario: Scenario) -> None:
        with self._state.lock:
            self._state.scenarios[scenario.id] = scenario

    def start(self) -> Emulator:
        self._endpoint.start()
        return self

    def stop(self) -> None:
        self._endpoint.stop()

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def base_urls(self, scenario_id: str, run: str = "default") -> dict[str, str]:
        """Base URLs per SDK: Anthropic and Gemini without `/v1`, OpenAI with it."""
        self._scenario(scenario_id)
        if not valid_run_id(run):
            raise EmulatorError(f"run id {run[:60]!r} is not valid: use {RUN_ID_TEXT}")
        return self._endpoint.base_urls(scenario_id, run)

    def open_run(self, scenario_id: str, run: str, provider: str | None = None) -> Run:
        scenario = self._scenario(scenario_id)
        app = EmulatorApp(self._state, scenario, run)
        return self._endpoint.open(Run(id=run, scenario_id=scenario_id, app=app, provider=provider))

    def close_run(self, run: str) -> None:
        self._endpoint.close(run)

    def capture(self, run: str = "default") -> RunCapture | None:
        found = self._endpoint.run(run)
        return None if found is None else found.capture

    def exchanges(self, run: str = "default") -> list[Exchange]:
        """What reached the endpoint for this run, as sent and answered (scrubbed)."""
        capture = self.capture(run)
        if capture is None:
            return []
        capture.settle()
        return capture.exchanges()

    def log(self, run: str = "default") -> list[LogEntry]:
        """What the run sent, oldest first (bounded: see `limits`)."""
        return self._state.log.entries(run)

    def _scenario(self, scenario_id: str) -> Scenario:
        with self._state.lock:
            scenario = self._state.scenarios.get(scenario_id)
        if scenario is None:
            raise EmulatorError(f"the emulator does not serve scenario {scenario_id!r}")
        return scenario

    def _made_run(self, scenario_id: str, run: str) -> Run | str:
        with self._state.lock:
            scenario = self._state.scenarios.get(scenario_id)
            served = ", ".join(sorted(self._state.scenarios))
        if scenario is None:
            return f"no scenario {scenario_id!r} is served; served: {served}"
        made = Run(
            id=run,
            scenario_id=scenario_id,
            app=EmulatorApp(self._state, scenario, run),
            capture=RunCapture(keep=self._state.limits.capture_per_run),
            made=True,
        )
        if self._on_run is not None:
            self._on_run(made)
        return made


class EmulatorApp:
    """One run of one scenario: each request through validation, script play, faults, log."""

    def __init__(self, state: _State, scenario: Scenario, run: str) -> None:
        self.state, self.scenario, self.run = state, scenario, run

    def answer(self, incoming: Incoming, record: Recorded) -> Answer:
        if incoming.route is None:
            return error_answer(
                None,
                f"harness emulator: no API at {incoming.method} {incoming.path}; use the base "
                "URLs that `harness emulate` prints (…/s/<scenario>/r/<run>)",
                404,
            )
        exchange = _Exchange(self.state, self.scenario, self.run, incoming, incoming.route)
        try:
            return exchange.serve()
        except Exception as exc:  # the last resort: answered in the API's envelope, and logged
            message = (
                f"harness emulator: internal error while handling this request: "
                f"{type(exc).__name__}: {str(exc)[:200]}"
            )
            return exchange.fail(exchange.api.rejected(message, 500))


class _Exchange:
    """One request through validation, script play, fault injection and the log."""

    def __init__(
        self, state: _State, scenario: Scenario, run: str, incoming: Incoming, api_route: Route
    ) -> None:
        self.state, self.scenario, self.run, self.incoming = state, scenario, run, incoming
        self.route, self.path, self.raw = api_route, incoming.path, incoming.body
        self.query = dict(parse_qsl(incoming.query))
        self.api: WireApi = wire_api(self.route.api)
        self.body: Any = None
        self.step: Step | None = None
        self.fault: str | None = None
        self.ctx: Context | None = None

    def serve(self) -> Answer:
        # What the route says (Gemini's model, stream and `alt`) already shapes an error's
        # envelope, so a body that is not JSON gets the same envelope as any other error.
        self.ctx = self._context()
        body = load_json(self.raw)
        if isinstance(body, JsonProblem):
            self.body = self.raw.decode("utf-8", "replace")
            return self.fail(self._json_error(body))
        self.body = body
        ctx = self._context()
        self.ctx = ctx
        problem = self.api.validate(self.body, ctx)
        if problem is not None:
            return self.fail(problem)
        step = pick_step(self.scenario, self.api.position(self.body))
        if isinstance(step, ApiError):
            return self.fail(step)
        self.step = step
        fault = step_fault(self.scenario, step)
        if fault is not None and self._take(fault):
            return self._serve_fault(fault, step, ctx)
        return self._send(self.api.render(step, self.body, ctx), None)

    def _json_error(self, problem: JsonProblem) -> ApiError:
        if problem.syntax:
            return self.api.malformed(problem.detail, self.raw)
        return self.api.rejected(problem.detail)

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
            store_owner=self.state,
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
        return self.state.take_fault(key, fault)

    def _serve_fault(self, fault: Fault, step: Step, ctx: Context) -> Answer:
        self.fault = fault.kind
        if fault.kind == "slow":
            time.sleep(fault.delay)
            return self._send(self.api.render(step, self.body, ctx), None)
        if fault.kind == "stream_cut":
            return self._send(self.api.render(step, self.body, ctx), None, cut=True)
        return self.fail(self.api.fault(fault.kind, fault.retry_after, ctx))

    def fail(self, error: ApiError) -> Answer:
        return self._send(self.api.error(error, self.ctx), error)

    def _send(self, reply: Reply, error: ApiError | None, cut: bool = False) -> Answer:
        headers = kept_request_headers(self.incoming.headers)
        self.state.record(
            self.run,
            {
                "api": self.route.api,
                "method": "POST",
                "path": self.path,
                "query": kept_query(self.query.items()),
                "headers": headers,
                "body": self.body,
                "status": reply.status,
                # A step answered off-script is logged with its note in the error's place
                # (status 200): how it reaches the cell's findings, as `script.exhausted`.
                "error": error or (None if self.step is None else step_note(self.step)),
                "step": self.step,
                "fault": self.fault,
                "size": len(self.raw),
            },
        )
        return Answer(
            status=reply.status,
            headers=list(reply.headers.items()),
            chunks=reply.chunks,
            streamed=reply.streamed,
            cut=cut,
        )
