"""Tool timing (`harness.tools`): a tool run waits only when another thread could start a tool
meanwhile, so a loop running its tools one by one on its own thread pays nothing, and a loop
running them at once is still caught (L4) however it spreads them over threads."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from harness import tools
from harness.chat import ToolMessage
from harness.endpoint.capture import Recorded
from harness.endpoint.server import Answer, Incoming, endpoint_threads
from harness.findings import Finding
from harness.loop import reference
from harness.loop.adapters import Turn
from harness.loop.contract import Loop, ToolSpec
from harness.outcome import cell_findings
from harness.runner import Cell, run_cell
from harness.sources import ScriptedSource
from harness.tools import could_overlap
from tests.checks.support import explain
from tests.conftest import library
from tests.endpoint.support import serving
from tests.faulty_loops.variants import reference_with
from tests.frameworks.overlap import PATIENT_RENDEZVOUS_SECONDS

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = "parallel_requests_one_turn"  # one turn asking for several tools at once
RUN_NUMBERS = count(1)


class _Threads:
    """An app that notes the thread answering each request."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    def answer(self, incoming: Incoming, record: Recorded) -> Answer:
        self.seen.append(threading.get_ident())
        return Answer(status=200, headers=[("content-type", "application/json")], chunks=[b"{}"])


def test_the_endpoint_names_its_threads_while_they_run() -> None:
    import httpx2

    app = _Threads()
    with serving(app) as served, httpx2.Client() as client:
        client.post(f"{served.base}/v1/messages", content=b"{}")
        (handler,) = app.seen
        assert handler in endpoint_threads()
        assert threading.get_ident() not in endpoint_threads()


def test_another_live_thread_could_start_a_tool() -> None:
    release = threading.Event()
    other = threading.Thread(target=release.wait, daemon=True)
    other.start()
    try:
        assert could_overlap()
    finally:
        release.set()
        other.join()


def test_beside_only_the_endpoint_no_tool_could_overlap() -> None:
    """In a fresh interpreter (the test runner has threads of its own): the caller, an
    endpoint and one of its connections alive is no overlap; one more thread is."""
    script = textwrap.dedent(
        """
        import threading
        import httpx2
        from harness.tools import could_overlap
        from tests.endpoint.support import serving
        from tests.test_tools import _Threads

        with serving(_Threads()) as served, httpx2.Client() as client:
            client.post(f"{served.base}/v1/messages", content=b"{}")  # a connection stays
            alone = could_overlap()
            release = threading.Event()
            other = threading.Thread(target=release.wait)
            other.start()
            print(alone, could_overlap())
            release.set()
            other.join()
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]


def _first_here_rest_in_a_pool(
    turn: Turn[Any], tools: Sequence[ToolSpec]
) -> tuple[ToolMessage, ...]:
    """The first tool on the loop's own thread while the others run in a pool: no barrier
    lines them up."""
    by_name = {tool.name: tool for tool in tools}
    first, *rest = turn.message.tool_calls
    with ThreadPoolExecutor(max_workers=max(1, len(rest))) as pool:
        later = [pool.submit(reference.run_tool, request, by_name) for request in rest]
        now = reference.run_tool(first, by_name)
        return (now, *(future.result() for future in later))


def _all_in_a_pool(turn: Turn[Any], tools: Sequence[ToolSpec]) -> tuple[ToolMessage, ...]:
    by_name = {tool.name: tool for tool in tools}
    with ThreadPoolExecutor(max_workers=len(turn.message.tool_calls)) as pool:
        return tuple(
            pool.map(lambda request: reference.run_tool(request, by_name), turn.message.tool_calls)
        )


def _in_a_pool_started_late(turn: Turn[Any], tools: Sequence[ToolSpec]) -> tuple[ToolMessage, ...]:
    """All in a pool, each submitted 30 ms after the one before, none waited for: a loaded
    machine starting pool threads late. Still at once: the first has not returned."""
    by_name = {tool.name: tool for tool in tools}
    with ThreadPoolExecutor(max_workers=len(turn.message.tool_calls)) as pool:
        futures = []
        for request in turn.message.tool_calls:
            futures.append(pool.submit(reference.run_tool, request, by_name))
            time.sleep(0.03)
        return tuple(future.result() for future in futures)


def _one_by_one_in_a_pool(turn: Turn[Any], tools: Sequence[ToolSpec]) -> tuple[ToolMessage, ...]:
    """Each tool on a pool thread, each awaited before the next starts (`asyncio.to_thread`
    in a loop): sequential."""
    by_name = {tool.name: tool for tool in tools}
    with ThreadPoolExecutor(max_workers=2) as pool:
        return tuple(
            pool.submit(reference.run_tool, request, by_name).result()
            for request in turn.message.tool_calls
        )


@pytest.fixture(scope="module")
def source() -> Iterator[ScriptedSource]:
    scripted = ScriptedSource([s for s in library() if s.id == SCENARIO], {})
    yield scripted
    scripted.close()


def _findings(source: ScriptedSource, loop: Loop) -> list[Finding]:
    (scenario,) = [s for s in library() if s.id == SCENARIO]
    cell = Cell(scenario=scenario, provider="anthropic", stream=False)
    return cell_findings(run_cell(cell, source, loop, run_id=f"tools-{next(RUN_NUMBERS)}"))


@pytest.mark.parametrize(
    "run_tools",
    [_first_here_rest_in_a_pool, _all_in_a_pool, _in_a_pool_started_late],
    ids=["one-here-rest-pool", "pool", "pool-started-late"],
)
def test_tools_run_at_once_overlap_and_are_caught(
    source: ScriptedSource, run_tools: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A window far past the 30 ms lags written in, so that the test machine's own load cannot
    # stretch them past it; a run waits only until its partner starts.
    monkeypatch.setattr(tools, "RENDEZVOUS_SECONDS", PATIENT_RENDEZVOUS_SECONDS)
    found = _findings(source, reference_with((reference, "run_tools", run_tools)))
    assert "L4" in {f.rule for f in found}, explain(found)


def test_tools_run_one_by_one_are_not_taken_for_overlapping(source: ScriptedSource) -> None:
    found = _findings(source, reference.reference_loop)
    assert found == [], explain(found)


def test_tools_run_one_by_one_on_pool_threads_are_not_taken_for_overlapping(
    source: ScriptedSource,
) -> None:
    found = _findings(source, reference_with((reference, "run_tools", _one_by_one_in_a_pool)))
    assert found == [], explain(found)
