"""The tool endpoints an out-of-process agent uses: plain HTTP and MCP (the official SDK's
client), each call in the cell's tool log exactly as an in-process call; failures as the
scenario's error; unknown tools and ended queries refused; calls made at once run at once."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx2
import pytest
from mcp import Client

from harness.exec.toolserver import ToolServer
from harness.loop.contract import ToolSpec
from harness.scenario.loader import load_scenario
from harness.tools import ToolRecorder
from tests.conftest import SCENARIOS


@pytest.fixture(scope="module")
def server() -> Iterator[ToolServer]:
    with ToolServer() as started:
        yield started


def recorder(scenario_id: str) -> ToolRecorder:
    return ToolRecorder(load_scenario(SCENARIOS / f"{scenario_id}.yaml"), lambda: 0)


def test_http_tools_answer_with_the_scenarios_results_and_are_logged(server: ToolServer) -> None:
    tools = recorder("answer_after_failing_tool")
    with server.serving(tools.specs()) as served, httpx2.Client() as http:
        failing = tools.scenario.tools[0].name
        reply = http.post(f"{served.tools_url}{failing}", json={})
        assert reply.status_code == 200
        assert reply.json() == {"error": tools.scenario.tools[0].error}
        unknown = http.post(f"{served.tools_url}no_such_tool", json={})
        assert unknown.status_code == 404 and "no_such_tool" in unknown.json()["error"]
        not_object = http.post(f"{served.tools_url}{failing}", json=[1])
        assert not_object.status_code == 400
        garbage = http.post(f"{served.tools_url}{failing}", content=b"{nope")
        assert garbage.status_code == 400
    assert [(r.name, r.is_error) for r in tools.runs] == [(failing, True)]
    with httpx2.Client() as http:
        late = http.post(f"{served.tools_url}{failing}", json={})
    assert late.status_code == 404 and "ended" in late.json()["error"]
    assert len(tools.runs) == 1


def test_http_results_and_arguments_in_call_order(server: ToolServer) -> None:
    tools = recorder("parallel_requests_one_turn")
    name = tools.scenario.tools[0].name
    asked = [{"exercise": e} for e in ("squat", "bench press", "deadlift")]
    with server.serving(tools.specs()) as served, httpx2.Client() as http:
        replies = [http.post(f"{served.tools_url}{name}", json=a).json() for a in asked]
    assert all("result" in r for r in replies)
    assert [dict(r.arguments) for r in tools.runs] == asked
    assert [r.result for r in tools.runs] == [r["result"] for r in replies]


def test_mcp_lists_the_scenarios_tools_and_runs_them(server: ToolServer) -> None:
    tools = recorder("answer_after_failing_tool")
    scenario_tool = tools.scenario.tools[0]

    async def session(url: str) -> tuple[Any, Any]:
        async with Client(url) as client:
            listed = await client.list_tools()
            return listed, await client.call_tool(scenario_tool.name, {})

    with server.serving(tools.specs()) as served:
        listed, result = asyncio.run(session(served.mcp_url))
    assert [(t.name, t.description, t.input_schema) for t in listed.tools] == [
        (t.name, t.description, dict(t.parameters)) for t in tools.scenario.tools
    ]
    assert result.is_error and result.content[0].text == scenario_tool.error
    assert [(r.name, r.is_error) for r in tools.runs] == [(scenario_tool.name, True)]


def test_mcp_results_are_text(server: ToolServer) -> None:
    tools = recorder("one_tool_then_answer")
    name = tools.scenario.tools[0].name

    async def call(url: str) -> Any:
        async with Client(url) as client:
            return await client.call_tool(name, {"exercise": "squat", "days": 7})

    with server.serving(tools.specs()) as served:
        result = asyncio.run(call(served.mcp_url))
    assert not result.is_error
    assert result.content[0].text == tools.runs[0].result
    assert dict(tools.runs[0].arguments) == {"exercise": "squat", "days": 7}


def waiting_tools(parties: int) -> tuple[ToolSpec, ...]:
    """Tools that return only once `parties` calls are running at once: served one at a
    time, they would never return."""
    barrier = threading.Barrier(parties)

    def run(arguments: Mapping[str, Any]) -> str:
        barrier.wait(timeout=20)
        return "ok"

    return (
        ToolSpec(
            name="wait", description="w", parameters={"type": "object"}, effect="read", run=run
        ),
    )


def test_http_calls_made_at_once_run_at_once(server: ToolServer) -> None:
    with (
        server.serving(waiting_tools(3)) as served,
        httpx2.Client(timeout=30) as http,
        ThreadPoolExecutor(3) as pool,
    ):
        replies = list(pool.map(lambda _: http.post(f"{served.tools_url}wait", json={}), range(3)))
    assert [r.json() for r in replies] == [{"result": "ok"}] * 3


def test_mcp_calls_made_at_once_run_at_once(server: ToolServer) -> None:
    async def calls(url: str) -> list[Any]:
        async with Client(url) as client:
            return list(await asyncio.gather(*(client.call_tool("wait", {}) for _ in range(2))))

    with server.serving(waiting_tools(2)) as served:
        results = asyncio.run(calls(served.mcp_url))
    assert [r.content[0].text for r in results] == ["ok", "ok"]
