"""What pydantic-ai does on the loop contract, stated as plainly as the tests can: the issue's
claims checked on the installed version, through the real SDKs over HTTP to the emulator."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace

import pytest

from examples.frameworks.pydantic_ai_agent import (
    defaults,
    history_from_pydantic,
    history_to_pydantic,
)
from harness.chat import AssistantMessage, ToolCall, ToolMessage, UserMessage
from harness.loop import LoopCall, LoopResult
from harness.runner import Cell, run_cell
from harness.scenario.model import Provider
from harness.sources import sdk_environment
from harness.trace.parse import parse_trace
from tests.frameworks import support

FRAMEWORK = "pydantic-ai"
PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai", "gemini")


@pytest.fixture(scope="module", autouse=True)
def _close_source() -> Iterator[None]:
    yield
    support.close_source()


def _ran(config: str, provider: Provider, scenario: str, stream: bool = False):  # type: ignore[no-untyped-def]
    judged, cell = support.ran(FRAMEWORK, config, provider, scenario, stream)
    return judged.run, cell


@pytest.mark.parametrize("provider", PROVIDERS)
def test_defaults_at_the_limit_run_the_pending_write_then_raise(provider: Provider) -> None:
    run, cell = _ran("defaults", provider, "limit_reached_pending_write")
    assert [t.name for t in run.tool_runs] == ["get_personal_record", "save_goal"]
    query = run.queries[0]
    assert query.error is not None and query.error.startswith("UsageLimitExceeded")
    calls = parse_trace(run.exchanges).calls
    assert len(calls) == 2  # no closing call: the request after the write is never sent
    assert all(c.request.tool_choice != "none" for c in calls)
    assert {"L3", "L11", "L12", "L15", "expect.not_run"} <= set(cell.rules)


def test_defaults_on_openai_leave_store_unset_but_ask_for_encrypted_reasoning() -> None:
    run, cell = _ran("defaults", "openai", "one_tool_then_answer")
    first = parse_trace(run.exchanges).calls[0].request
    assert first.store is None and first.previous_response_id is None
    assert "reasoning.encrypted_content" in first.include
    assert cell.rules == ("openai.store_false",)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_defaults_run_one_turns_sync_tools_at_the_same_time(provider: Provider) -> None:
    """Proved without timing: three tools that each wait for the other two at a barrier all
    get through it only when they run at once (sequential runs would break the barrier)."""
    barrier = threading.Barrier(3, timeout=10)
    passed: list[str] = []

    def waits(arguments: object) -> str:
        barrier.wait()
        passed.append(str(arguments))
        return "ok"

    async def loop(call: LoopCall) -> LoopResult:
        tools = tuple(replace(t, run=waits) for t in call.tools)
        return await defaults(replace(call, tools=tools))

    run = _run_loop(loop, provider, "parallel_requests_one_turn")
    assert len(passed) == 3, run.queries[0].error


@pytest.mark.parametrize("provider", PROVIDERS)
def test_conforming_runs_tools_in_order_and_conforms_without_a_limit(provider: Provider) -> None:
    for scenario in ("one_tool_then_answer", "parallel_requests_one_turn", "three_round_chain"):
        _, cell = _ran("conforming", provider, scenario)
        assert cell.rules == (), f"{scenario}: {cell.rules}"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_conforming_still_runs_the_pending_write_at_the_limit(provider: Provider) -> None:
    run, cell = _ran("conforming", provider, "limit_reached_pending_write")
    assert "save_goal" in [t.name for t in run.tool_runs]
    assert run.queries[0].error is not None
    assert "expect.not_run" in cell.rules


@pytest.mark.parametrize("stream", [False, True], ids=["stream-off", "stream-on"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_wrapped_stops_before_the_pending_write_and_makes_one_closing_call(
    provider: Provider, stream: bool
) -> None:
    run, cell = _ran("wrapped", provider, "limit_reached_pending_write", stream)
    assert [t.name for t in run.tool_runs] == ["get_personal_record"]
    calls = parse_trace(run.exchanges).calls
    closing = calls[-1].request
    assert [c.request.tool_choice for c in calls].count("none") == 1
    assert closing.tool_choice == "none" and closing.declared_tools  # tools stay declared
    assert "step limit" in closing.system
    assert run.queries[0].error is None and run.queries[0].answer
    assert cell.rules == ()


def test_wrapped_conforms_on_every_limit_scenario() -> None:
    for scenario in ("limit_reached_pending_read", "limit_reached_parallel_pending"):
        for provider in PROVIDERS:
            _, cell = _ran("wrapped", provider, scenario)
            assert cell.rules == (), f"{scenario}[{provider}]: {cell.rules}"


def test_system_prompt_is_not_sent_when_a_history_is_given() -> None:
    """The trap behind `instructions=`: Agent(system_prompt=...) is left out of every request
    of a query whose message_history is not empty (here: a scenario with a saved chat)."""
    scenario = "long_history_cut_inside_chain"
    system = support.SCENARIOS[scenario].system
    run = _run_loop(_system_prompt_loop, "anthropic", scenario)
    systems = [c.request.system for c in parse_trace(run.exchanges).calls]
    assert systems and all(system not in s for s in systems)
    adapter, _ = _ran("defaults", "anthropic", scenario)  # instructions= is sent
    assert system in parse_trace(adapter.exchanges).calls[0].request.system


def test_the_saved_chat_survives_the_round_trip_through_pydantic_ai_messages() -> None:
    chat = (
        UserMessage(text="How much did I lift?"),
        AssistantMessage(
            text="Looking.",
            tool_calls=(
                ToolCall(id="c1", name="get_record", arguments={"exercise": "squat"}),
                ToolCall(id="c2", name="get_record", arguments={"exercise": "bench"}),
            ),
        ),
        ToolMessage(call_id="c1", name="get_record", content="120 kg"),
        ToolMessage(call_id="c2", name="get_record", content="unavailable", is_error=True),
        AssistantMessage(text="Squat 120 kg; bench unavailable."),
    )
    messages = history_to_pydantic(chat)
    assert len(messages) == 4  # both results travel in one request
    assert tuple(history_from_pydantic(messages)) == chat


# ---- helpers: a loop of the test's own, on the same source ------------------------------------


async def _system_prompt_loop(call: LoopCall) -> LoopResult:
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    provider = AnthropicProvider(api_key=call.api_key, base_url=call.base_url)
    agent = Agent(AnthropicModel(call.model, provider=provider), system_prompt=call.system)
    result = await agent.run(call.message, message_history=history_to_pydantic(call.history))
    return LoopResult(answer=result.output, chat=(*call.history, UserMessage(text=call.message)))


def _run_loop(loop, provider: Provider, scenario: str):  # type: ignore[no-untyped-def]
    cell = Cell(scenario=support.SCENARIOS[scenario], provider=provider, stream=False)
    with sdk_environment(support.source()):
        return run_cell(
            cell, support.source(), loop, f"pydantic-ai-own-{next(support.RUN_NUMBERS)}"
        )
