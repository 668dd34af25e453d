"""The OpenAI Agents SDK adapter on the scripted source: what conforms, and exactly which rules
each configuration breaks — measured on openai-agents 0.24.0 (OpenAI through its Responses
model, Anthropic and Gemini through its LitellmModel). A framework upgrade that changes
behaviour fails here with the cell and its findings."""

from __future__ import annotations

import ast
import threading
from collections.abc import Awaitable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from harness.findings import Finding
from harness.loop import LoopCall, LoopResult, ToolSpec
from harness.runner import Cell, CellRun, load_loop, run_cell
from harness.scenario.model import Provider
from tests.checks.support import explain
from tests.frameworks import scripted
from tests.frameworks.overlap import patient_if_overlapping
from tests.frameworks.scripted import (
    LIMITS,
    PENDING_MUST_NOT_RUN,
    SCENARIOS,
    cells,
    close_source,
    host_lookups,
    source,
)

Ran = tuple[CellRun, tuple[Finding, ...]]

pytest.importorskip("agents", reason="the frameworks extra is not installed")

from examples.frameworks import litellm_agent, openai_agents_agent  # noqa: E402

PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic", "gemini")

# store unset and no encrypted reasoning asked for (L10), the SDK's OpenAI defaults.
STATEFUL = frozenset({"openai.store_false", "openai.reasoning_requested"})
# At max_turns the SDK runs the last turn's tools (L3, L11: the pending write too), then raises
# MaxTurnsExceeded instead of making a closing call (L12) and the app shows the error (L15).
RAN_PENDING_THEN_RAISED = frozenset(
    {"L1", "L3", "L11", "L12", "L15", "expect.ending", "expect.rounds", "expect.tools"}
)
# LitellmModel._fix_tool_message_ordering (agents/extensions/models/litellm_model.py) resends
# one parallel turn as one assistant message per call, each followed by its result (L5); the
# script then sees more model turns than it has (script.exhausted).
SPLIT_PARALLEL_TURN = frozenset({"L5", "script.exhausted"})


# The SDK runs one turn's function tools as concurrent tasks (a blocking tool in a thread, as
# its @function_tool does), unless max_function_tool_concurrency=1: L4, in every run (a tool
# run off the loop's thread waits for a partner, harness/tools.py), and
# test_defaults_run_one_turns_tools_at_once shows the cause with a barrier.
CONCURRENT_TURN = frozenset({"parallel_requests_one_turn", "limit_reached_parallel_pending"})


def expected(config: str, provider: Provider, scenario: str) -> frozenset[str]:
    """The rules a cell breaks, as measured; empty means the cell conforms."""
    rules: set[str] = set()
    via_litellm = provider != "openai"
    if config == "defaults" and provider == "openai":
        rules |= STATEFUL
    if config == "defaults" and scenario in CONCURRENT_TURN:
        rules.add("L4")
    if config != "wrapped" and scenario in LIMITS:
        rules |= RAN_PENDING_THEN_RAISED
        if scenario in PENDING_MUST_NOT_RUN:
            rules.add("expect.not_run")
    if via_litellm and scenario == "parallel_requests_one_turn":
        rules |= SPLIT_PARALLEL_TURN
    if via_litellm and config == "wrapped" and scenario == "limit_reached_parallel_pending":
        rules |= {"L5", "L11"}  # the split turn puts the second "Not executed" result apart
    return frozenset(rules)


LOOP = "examples.frameworks.openai_agents_agent:{}"


@pytest.fixture(scope="module", autouse=True)
def _close_source() -> Iterator[None]:
    yield
    close_source()


def ran(config: str, provider: Provider, scenario: str, stream: bool = False) -> Ran:
    return scripted.ran(LOOP.format(config), provider, scenario, stream)


@pytest.mark.parametrize(
    ("config", "provider", "scenario", "stream"), list(cells(openai_agents_agent.FRAMEWORK))
)
def test_each_cell_breaks_exactly_the_measured_rules(
    config: str, provider: Provider, scenario: str, stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    want = expected(config, provider, scenario)
    patient_if_overlapping(monkeypatch, want)
    _, found = ran(config, provider, scenario, stream)
    rules = {f.rule for f in found}
    assert rules == want, explain(list(found))


def _tools_meeting_at_a_barrier(call: LoopCall) -> Awaitable[LoopResult]:
    """The defaults adapter, each tool first waiting until all three requests of the turn
    are running: it passes only if the SDK runs them at the same time."""
    barrier = threading.Barrier(3)

    def meet(spec: ToolSpec) -> ToolSpec:
        def run(arguments: Mapping[str, Any]) -> str:
            barrier.wait(timeout=30)  # waits only if the SDK ran them one at a time
            return spec(arguments)

        return replace(spec, run=run)

    return openai_agents_agent.defaults(replace(call, tools=tuple(map(meet, call.tools))))


def test_defaults_run_one_turns_tools_at_once() -> None:
    cell = Cell(scenario=SCENARIOS["parallel_requests_one_turn"], provider="openai", stream=False)
    run = run_cell(cell, source(), _tools_meeting_at_a_barrier, run_id="agents-barrier")
    (query,) = run.queries
    assert query.error is None, query.error
    assert len({t.thread for t in query.tool_runs}) == 3


def test_defaults_run_the_pending_write_and_then_raise() -> None:
    run, _ = ran("defaults", "openai", "limit_reached_pending_write", False)
    (query,) = run.queries
    assert [t.name for t in query.tool_runs] == ["get_personal_record", "save_goal"]
    assert query.error is not None and query.error.startswith("MaxTurnsExceeded")


def test_wrapped_answers_the_pending_write_and_closes_with_text() -> None:
    run, found = ran("wrapped", "openai", "limit_reached_pending_write", False)
    (query,) = run.queries
    assert [t.name for t in query.tool_runs] == ["get_personal_record"]
    assert query.error is None and "step limit" in query.answer
    assert not found, explain(list(found))


def test_the_framework_declares_every_provider_and_its_traps() -> None:
    framework = openai_agents_agent.FRAMEWORK
    assert [c.name for c in framework.configs] == ["defaults", "conforming", "wrapped"]
    assert all(set(c.providers) == set(PROVIDERS) for c in framework.configs)
    assert any("tracing" in trap.lower() for trap in framework.traps)
    for config in framework.configs:
        assert callable(load_loop(config.loop))


@pytest.mark.parametrize("module", [openai_agents_agent, litellm_agent], ids=lambda m: m.__name__)
def test_the_adapter_touches_no_private_attribute(module: ModuleType) -> None:
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    private = [
        f"line {node.lineno}: .{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
    ]
    assert not private


TRACE = """
from agents import trace
from agents.tracing import get_trace_provider
with trace("probe"):
    pass
get_trace_provider().force_flush()
"""


@pytest.mark.parametrize(("disable", "hosts"), [(None, ["api.openai.com"]), ("1", [])])
def test_tracing_exports_to_openai_unless_disabled(disable: str | None, hosts: list[str]) -> None:
    env = {"OPENAI_AGENTS_DISABLE_TRACING": disable, "OPENAI_API_KEY": "sk-dummy"}
    assert host_lookups(TRACE, env) == hosts
