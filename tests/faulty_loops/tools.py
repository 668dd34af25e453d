"""Faults in running the tools (L1, L4, L11, L15): the reference loop's `run_tools`,
`run_tool` or `not_executed` replaced."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from harness.chat import ToolCall, ToolMessage
from harness.loop import reference
from harness.loop.adapters import Turn
from harness.loop.contract import LoopCall, ToolSpec
from tests.faulty_loops.variants import Swap, reference_with, reference_with_each_call

_run_tool = reference.run_tool

# ---- tools run concurrently (L4) -------------------------------------------------------------


def _in_threads(turn: Turn[Any], tools: Sequence[ToolSpec]) -> tuple[ToolMessage, ...]:
    """All of a turn's tools at once, one thread each (results still in request order). The
    barrier lets every thread start together, so the runs overlap on any machine."""
    by_name = {tool.name: tool for tool in tools}
    requests = turn.message.tool_calls
    barrier = threading.Barrier(len(requests))

    def run(request: ToolCall) -> ToolMessage:
        barrier.wait(timeout=5)
        return _run_tool(request, by_name)

    with ThreadPoolExecutor(max_workers=len(requests)) as pool:
        return tuple(pool.map(run, requests))


tools_in_threads = reference_with((reference, "run_tools", _in_threads))


# ---- a pending write executed after the limit (L11) ------------------------------------------


def _run_anyway(call: LoopCall) -> tuple[Swap, ...]:
    """At the limit the pending requests run like any other (their real results are sent on
    the closing call) instead of getting the not-executed result."""
    by_name = {tool.name: tool for tool in call.tools}

    def not_executed(requests: Sequence[ToolCall]) -> tuple[ToolMessage, ...]:
        return tuple(_run_tool(request, by_name) for request in requests)

    return ((reference, "not_executed", not_executed),)


pending_run_after_limit = reference_with_each_call(_run_anyway)


# ---- a tool error raised to the person (L15) -------------------------------------------------


def _uncaught(
    request: ToolCall, tools: Mapping[str, ToolSpec], invalid_arguments: str | None = None
) -> ToolMessage:
    """The tool's exception is not turned into an error result: it leaves the loop."""
    output = tools[request.name](request.arguments)
    return ToolMessage(call_id=request.id, name=request.name, content=output)


tool_error_raised = reference_with((reference, "run_tool", _uncaught))


# ---- a failing tool retried (L1) -------------------------------------------------------------


def _retried(
    request: ToolCall, tools: Mapping[str, ToolSpec], invalid_arguments: str | None = None
) -> ToolMessage:
    """A failing tool is tried once more before its error goes back: a run no reply asked
    for."""
    result = _run_tool(request, tools, invalid_arguments)
    return _run_tool(request, tools, invalid_arguments) if result.is_error else result


failing_tool_retried = reference_with((reference, "run_tool", _retried))
