"""Runs cells (scenario × provider × stream variant): opens the cell's run at the source's
endpoint, hands the loop each user message in turn with clients and connection details for that
run (the chat it saved becomes the next history), and keeps everything that reached the
endpoint.

Cells run one at a time here (`harness record` runs several at once, each on its own run). A
loop may be sync or `async def`; an async loop is awaited in a fresh event loop per user
message, so nothing it built can outlive the event loop it was built in.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from harness.capture import Exchange
from harness.chat import Message
from harness.emulator.runlog import LogEntry
from harness.endpoint.capture import Recorded
from harness.errors import HarnessError
from harness.exec.failure import ExecFailure
from harness.loop.clients import make_clients
from harness.loop.contract import Loop, LoopCall, LoopResult
from harness.scenario.model import Provider, Scenario
from harness.sources import Opened, Source
from harness.tools import ToolRecorder, ToolRun

REFERENCE_LOOP = "harness.loop.reference:reference_loop"


@dataclass(frozen=True, kw_only=True)
class Cell:
    scenario: Scenario
    provider: Provider
    stream: bool

    @property
    def id(self) -> str:
        return f"{self.scenario.id}[{self.provider}{'-stream' if self.stream else ''}]"


@dataclass(frozen=True, kw_only=True)
class QueryRun:
    """One user message through the loop. `exchanges` are this query's HTTP exchanges."""

    index: int
    message: str
    history: tuple[Message, ...]  # the saved chat the loop was given for this message
    answer: str
    error: str | None
    exchanges: tuple[Exchange, ...]
    tool_runs: tuple[ToolRun, ...]


@dataclass(frozen=True, kw_only=True)
class CellRun:
    cell: Cell
    source: str
    model: str
    queries: tuple[QueryRun, ...]
    exchanges: tuple[Exchange, ...]
    tool_runs: tuple[ToolRun, ...]
    chat: tuple[Message, ...]
    rejections: tuple[LogEntry, ...]
    elapsed: float
    error: str | None = None  # the loop raised, or the harness could not run the cell
    # The rule of a failure the loop named itself (an --exec program: `exec.timeout`, …); the
    # cell's findings are then that one. None: `error` is the loop's exception.
    error_rule: str | None = None
    # The exchanges as the bytes went (raw, unscrubbed: in memory only, for cassettes).
    records: tuple[Recorded, ...] = ()


def cells(
    scenarios: Iterable[Scenario],
    providers: Iterable[Provider] | None = None,
    stream: bool | None = None,
) -> list[Cell]:
    """Every scenario × provider × stream variant, filtered by providers and stream."""
    chosen = tuple(providers) if providers is not None else None
    out: list[Cell] = []
    for s in scenarios:
        for provider in s.providers:
            if chosen is not None and provider not in chosen:
                continue
            for variant in s.streaming:
                if stream is None or variant == stream:
                    out.append(Cell(scenario=s, provider=provider, stream=variant))
    return out


def load_loop(spec: str) -> Loop:
    """Import `module:function`; a clear error (exit 2) when it is not a callable."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise HarnessError(f"--loop {spec!r}: write it as module:function, e.g. my_app.agent:run")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` does, so a loop beside you imports
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise HarnessError(f"--loop {spec!r}: cannot import {module_name!r}: {exc}") from None
    except Exception as exc:  # the module itself failed: one line naming where, not a traceback
        frames = traceback.extract_tb(exc.__traceback__)[-1:]
        where = f" at {frames[0].filename}:{frames[0].lineno}" if frames else ""
        raise HarnessError(
            f"--loop {spec!r}: importing {module_name!r} raised {type(exc).__name__}: {exc}{where}"
        ) from None
    loop = getattr(module, attr, None)
    if not callable(loop):
        raise HarnessError(f"--loop {spec!r}: {module_name} has no callable {attr!r}")
    return loop  # type: ignore[no-any-return]


def run_cell(cell: Cell, source: Source, loop: Loop, run_id: str) -> CellRun:
    started = time.monotonic()
    s = cell.scenario
    opened = source.open(s, cell.provider, cell.stream, run_id)
    try:
        return _run_opened(cell, source, loop, run_id, opened, started)
    finally:
        source.close_run(run_id)


def _run_opened(
    cell: Cell, source: Source, loop: Loop, run_id: str, opened: Opened, started: float
) -> CellRun:
    s, capture = cell.scenario, opened.run.capture
    recorder = ToolRecorder(s, capture.arrivals)
    base_url = opened.base_urls[cell.provider]
    clients = make_clients(
        cell.provider, base_url=base_url, api_key=opened.api_key, transport=opened.transport
    )
    env = opened.env()
    history: tuple[Message, ...] = s.history
    queries: list[QueryRun] = []
    error: str | None = None
    error_rule: str | None = None
    for index, turn in enumerate(s.messages):
        first_exchange, first_run = capture.arrivals(), len(recorder.runs)
        call = LoopCall(
            provider=cell.provider,
            client=clients.sync,
            async_client=clients.async_,
            base_url=base_url,
            api_key=opened.api_key,
            env=env,
            model=opened.model,
            system=s.system,
            history=history,
            message=turn.text,
            tools=recorder.specs(),
            max_rounds=s.max_rounds,
            stream=cell.stream,
            request_size_limit=s.gemini_max_request_bytes,
        )
        result, error, error_rule = call_loop(loop, call)
        capture.settle()
        queries.append(
            QueryRun(
                index=index,
                message=turn.text,
                history=history,
                answer=result.answer if result else "",
                error=result.error if result else error,
                exchanges=tuple(capture.exchanges()[first_exchange:]),
                tool_runs=tuple(recorder.runs[first_run:]),
            )
        )
        if result is None:
            break
        history = result.chat
    return CellRun(
        cell=cell,
        source=source.name,
        model=opened.model,
        queries=tuple(queries),
        exchanges=tuple(capture.exchanges()),
        tool_runs=tuple(recorder.runs),
        chat=history,
        rejections=tuple(source.rejections(run_id)),
        elapsed=time.monotonic() - started,
        error=error,
        error_rule=error_rule,
        records=tuple(capture.records()),
    )


def call_loop(loop: Loop, call: LoopCall) -> tuple[LoopResult | None, str | None, str | None]:
    """The loop's result, or why there is none (and the failure's own rule, when the loop named
    one). A coroutine (an `async def` loop) is run to completion in a fresh event loop."""
    try:
        result: object = loop(call)
        if inspect.isawaitable(result):
            result = asyncio.run(_awaited(result))
    except ExecFailure as exc:
        return None, exc.message, exc.rule
    except Exception as exc:
        frames = traceback.extract_tb(exc.__traceback__)[-1:]
        where = f" at {frames[0].filename}:{frames[0].lineno}" if frames else ""
        return None, f"the loop raised {type(exc).__name__}: {exc}{where}", None
    if not isinstance(result, LoopResult):
        return None, f"the loop returned {type(result).__name__}, not a LoopResult", None
    return result, None, None


async def _awaited(awaitable: object) -> object:
    return await awaitable  # type: ignore[misc]


def run_cells(
    cell_list: list[Cell],
    source: Source,
    loop: Loop,
    on_done: Callable[[int, int, CellRun], None] | None = None,
) -> Iterator[CellRun]:
    for number, cell in enumerate(cell_list, 1):
        run = run_cell(cell, source, loop, run_id=f"{number}-{cell.provider}")
        if on_done is not None:
            on_done(number, len(cell_list), run)
        yield run
