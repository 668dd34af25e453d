"""Scenario tools as callables for the loop under test: each call is recorded (order, timing,
thread, which model call it followed) and answered with the scenario's scripted result."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.endpoint.server import endpoint_threads
from harness.loop.contract import ToolError, ToolSpec
from harness.scenario.model import Scenario, Tool


@dataclass(frozen=True, kw_only=True)
class ToolRun:
    seq: int
    name: str
    arguments: Mapping[str, Any]
    result: str
    is_error: bool
    started: float
    ended: float
    thread: int
    after_call: int  # how many HTTP exchanges had been captured when the tool ran


class ToolRecorder:
    """Records every tool run of one cell. `exchanges_so_far` ties runs to model calls."""

    def __init__(self, scenario: Scenario, exchanges_so_far: Callable[[], int]) -> None:
        self.scenario = scenario
        self._count_exchanges = exchanges_so_far
        self._lock = threading.Lock()
        self._started = threading.Condition(self._lock)  # notified whenever a run starts
        self._starts = 0
        self._pooled = False  # some run of this cell ran off the loop's thread
        self._loop_thread = threading.get_ident()  # the runner calls the loop on this thread
        self.runs: list[ToolRun] = []
        self._calls_per_tool: dict[str, int] = {}

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(self._spec(tool) for tool in self.scenario.tools)

    def _spec(self, tool: Tool) -> ToolSpec:
        def run(arguments: Mapping[str, Any]) -> str:
            return self._run(tool, arguments)

        return ToolSpec(
            name=tool.name,
            description=tool.description,
            parameters=tool.parameters,
            effect=tool.effect,
            run=run,
        )

    def _run(self, tool: Tool, arguments: Mapping[str, Any]) -> str:
        started = time.monotonic()
        after = self._count_exchanges()
        with self._lock:
            nth = self._calls_per_tool.get(tool.name, 0)
            self._calls_per_tool[tool.name] = nth + 1
            self._starts += 1
            start = self._starts
            self._started.notify_all()
            if threading.get_ident() != self._loop_thread:
                self._pooled = True
            pooled = self._pooled
        outcome, is_error = scripted_result(tool, arguments, nth)
        if pooled:
            self._meet_another(start)
        elif could_overlap():
            time.sleep(OVERLAP_SECONDS)
        with self._lock:
            self.runs.append(
                ToolRun(
                    seq=len(self.runs) + 1,
                    name=tool.name,
                    arguments=dict(arguments),
                    result=outcome,
                    is_error=is_error,
                    started=started,
                    ended=time.monotonic(),
                    thread=threading.get_ident(),
                    after_call=after,
                )
            )
        if is_error:
            raise ToolError(outcome)
        return outcome

    def _meet_another(self, start: int) -> None:
        """Hold this run until another run starts or `RENDEZVOUS_SECONDS` pass. Runs of a loop
        that runs tools on other threads (a pool, `asyncio.to_thread`, an exec program's tool
        endpoint) wait here, so tools started at once overlap whatever the scheduler does — a
        busy machine can delay a pool thread far past `OVERLAP_SECONDS` — while a loop that
        runs them one by one pays the window once per run and never overlaps (L4)."""
        deadline = time.monotonic() + RENDEZVOUS_SECONDS
        with self._lock:
            while self._starts == start:
                left = deadline - time.monotonic()
                if left <= 0 or not self._started.wait(left):
                    return


# How long a tool takes when another tool run could start meanwhile: long enough for a run
# started at the same time on another thread (a pool, `asyncio.gather` of `to_thread`) to be
# scheduled and begin before this one ends, so that the overlap shows (L4).
OVERLAP_SECONDS = 0.002
# How long a run of a loop that runs tools off its own thread waits for another run to start
# (`ToolRecorder._meet_another`): the longest a truly concurrent start may lag on a loaded machine.
RENDEZVOUS_SECONDS = 0.1


def could_overlap() -> bool:
    """Whether another tool run could start before one starting now on this thread returns:
    some live Python thread is neither this one nor an endpoint's (which never run tools).
    With none, only this thread could start another run, and it is busy with this one; so
    a loop that runs its tools one by one on its own thread pays nothing for the check.

    `sys._current_frames` lists every thread that runs Python, also those started without
    `threading` (which `threading.enumerate` would miss)."""
    others = sys._current_frames().keys() - {threading.get_ident()}
    return not others <= endpoint_threads()


def scripted_result(tool: Tool, arguments: Mapping[str, Any], nth: int) -> tuple[str, bool]:
    """The scenario's result for the `nth` call (0-based) with `arguments`: (text, is_error)."""
    if tool.result_kind == "error":
        return tool.error, True
    if tool.result_kind == "result":
        return as_text(tool.result), False
    if tool.result_kind == "results":
        return as_text(tool.results[min(nth, len(tool.results) - 1)]), False
    for case in tool.cases:
        if case.matches(arguments):
            return as_text(case.result), False
    return f"no scripted result of {tool.name!r} matches arguments {dict(arguments)!r}", True


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
