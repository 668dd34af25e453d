"""The shared decisions of the reference loop, on a scripted adapter (the provider spelling is
tested per adapter and end to end through the real SDKs in the other test files)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from harness.chat import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from harness.loop.adapters import LOCAL_ID_PREFIX, ProviderCallError, Request, Turn
from harness.loop.closing import NOT_EXECUTED_RESULT, STEP_LIMIT_INSTRUCTION, closing_system
from harness.loop.contract import LoopCall, LoopResult, ToolError, ToolSpec
from harness.loop.reference import not_executed, pair_results, run_loop, run_tool
from harness.loop.selection import select_context

SYSTEM = "You are Gymnasia's training assistant."


def asks(*names: str, text: str = "Let me check.", ids: bool = True) -> Turn[str]:
    calls = tuple(
        ToolCall(id=f"id_{name}_{i}" if ids else "", name=name, arguments={"n": i})
        for i, name in enumerate(names)
    )
    return Turn(message=AssistantMessage(text=text, tool_calls=calls), native=f"turn {names}")


def says(text: str) -> Turn[str]:
    return Turn(message=AssistantMessage(text=text), native=f"answer {text}")


@dataclass
class ScriptedAdapter:
    """Answers each call with the next scripted turn (or raises a scripted error)."""

    script: list[Turn[str] | ProviderCallError]
    requests: list[Request[str]] = field(default_factory=list)

    def send(self, request: Request[str]) -> Turn[str]:
        self.requests.append(request)
        reply = self.script.pop(0)
        if isinstance(reply, ProviderCallError):
            raise reply
        return reply


@dataclass
class Spy:
    """Tools that record every run, and fail when two runs overlap (L4)."""

    runs: list[tuple[str, Mapping[str, Any]]] = field(default_factory=list)
    running: bool = False

    def tool(self, name: str, fail: str | None = None) -> ToolSpec:
        def run(arguments: Mapping[str, Any]) -> str:
            assert not self.running, "tools ran concurrently"
            self.running = True
            self.runs.append((name, arguments))
            self.running = False
            if fail is not None:
                raise ToolError(fail)
            return f"{name} result {arguments.get('n')}"

        return ToolSpec(
            name=name,
            description=f"The {name} tool.",
            parameters={"type": "object", "properties": {"n": {"type": "integer"}}},
            effect="read",
            run=run,
        )


def loop_call(
    tools: Sequence[ToolSpec], max_rounds: int = 10, history: Sequence[Message] = ()
) -> LoopCall:
    return LoopCall(
        provider="anthropic",
        client=None,
        model="test-model",
        system=SYSTEM,
        history=tuple(history),
        message="How is my bench press going?",
        tools=tuple(tools),
        max_rounds=max_rounds,
    )


def run(
    script: list[Turn[str] | ProviderCallError], spy: Spy, *, max_rounds: int = 10, **tools: Any
) -> tuple[LoopResult, ScriptedAdapter]:
    specs = [spy.tool(name, fail=tools.get(name)) for name in ("history", "save_goal")]
    adapter = ScriptedAdapter(script=list(script))
    return run_loop(adapter, loop_call(specs, max_rounds)), adapter


def test_an_answer_on_the_first_call_ends_the_loop_without_another_call() -> None:  # L2
    spy = Spy()
    result, adapter = run([says("All good.")], spy)
    assert result == LoopResult(
        answer="All good.",
        chat=(UserMessage(text="How is my bench press going?"), AssistantMessage(text="All good.")),
    )
    assert len(adapter.requests) == 1
    assert spy.runs == []


def test_one_tool_then_an_answer() -> None:  # L1, L5, L6
    spy = Spy()
    result, adapter = run([asks("history"), says("You improved.")], spy)
    assert result.answer == "You improved." and result.error is None
    assert spy.runs == [("history", {"n": 0})]
    assert len(adapter.requests) == 2
    step = adapter.requests[1].steps[0]
    assert step.turn.native == "turn ('history',)"
    assert step.results == (
        ToolMessage(call_id="id_history_0", name="history", content="history result 0"),
    )
    assert result.chat[1:] == (
        AssistantMessage(text="Let me check.", tool_calls=step.turn.message.tool_calls),
        step.results[0],
        AssistantMessage(text="You improved."),
    )


def test_parallel_requests_run_one_at_a_time_in_request_order() -> None:  # L4
    spy = Spy()
    result, adapter = run([asks("save_goal", "history", "history"), says("Done.")], spy)
    assert [name for name, _ in spy.runs] == ["save_goal", "history", "history"]
    results = adapter.requests[1].steps[0].results
    assert [r.call_id for r in results] == ["id_save_goal_0", "id_history_1", "id_history_2"]
    assert result.answer == "Done."


def test_every_call_resends_the_selection_and_the_whole_active_sequence() -> None:  # L7, L8
    saved: list[Message] = []
    for n in range(15):
        saved += [UserMessage(text=f"q{n}"), AssistantMessage(text=f"a{n}")]
    spy = Spy()
    specs = [spy.tool("history")]
    adapter = ScriptedAdapter(script=[asks("history"), asks("history"), says("Done.")])
    result = run_loop(adapter, loop_call(specs, history=saved))
    assert result.error is None
    assert [len(r.steps) for r in adapter.requests] == [0, 1, 2]
    for request in adapter.requests:
        assert request.context == select_context(saved)
        assert request.message == "How is my bench press going?"
    assert adapter.requests[2].steps[:1] == adapter.requests[1].steps
    assert result.chat[: len(saved)] == tuple(saved)


@pytest.mark.parametrize("max_rounds", [0, 1, 3])
def test_budget_spent_answers_pending_requests_without_running_them(max_rounds: int) -> None:
    # L3, L11, L12, L13: max_rounds + 1 ordinary calls, then exactly one closing call.
    spy = Spy()
    script: list[Turn[str] | ProviderCallError] = [asks("history") for _ in range(max_rounds + 1)]
    script[-1] = asks("history", "save_goal", text="Now saving your goal.")
    script.append(says("I reached the step limit; shall I continue?"))
    result, adapter = run(script, spy, max_rounds=max_rounds)

    assert len(adapter.requests) == max_rounds + 2
    assert len(spy.runs) == max_rounds  # the pending requests never ran
    assert ("save_goal", {"n": 1}) not in spy.runs
    closing = adapter.requests[-1]
    assert closing.tools_allowed is False
    assert closing.tools == adapter.requests[0].tools  # still declared
    assert closing.system == closing_system(SYSTEM)
    assert STEP_LIMIT_INSTRUCTION in closing.system
    pending = closing.steps[-1]
    assert pending.turn.message.text == "Now saving your goal."
    assert pending.results == (
        ToolMessage(
            call_id="id_history_0", name="history", content=NOT_EXECUTED_RESULT, is_error=True
        ),
        ToolMessage(
            call_id="id_save_goal_1", name="save_goal", content=NOT_EXECUTED_RESULT, is_error=True
        ),
    )
    for request in adapter.requests[:-1]:
        assert request.tools_allowed and request.system == SYSTEM
    # L13: the order is never inside a tool result
    assert all(STEP_LIMIT_INSTRUCTION not in r.content for s in closing.steps for r in s.results)
    assert result.answer == "I reached the step limit; shall I continue?"
    assert result.error is None
    assert result.chat[-3:] == (*pending.results, AssistantMessage(text=result.answer))


def test_an_answer_on_the_last_ordinary_call_makes_no_closing_call() -> None:  # L3
    spy = Spy()
    result, adapter = run([asks("history"), asks("history"), says("Final.")], spy, max_rounds=2)
    assert len(adapter.requests) == 3
    assert all(r.tools_allowed for r in adapter.requests)
    assert result.answer == "Final."


def test_a_failing_tool_gives_an_error_result() -> None:
    spy = Spy()
    result, adapter = run([asks("save_goal"), says("Could not save.")], spy, save_goal="disk full")
    assert adapter.requests[1].steps[0].results == (
        ToolMessage(call_id="id_save_goal_0", name="save_goal", content="disk full", is_error=True),
    )
    assert result.answer == "Could not save."


def test_an_unknown_tool_or_unreadable_arguments_give_error_results_without_running() -> None:
    spy = Spy()
    turn = asks("history", "teleport")
    turn = Turn(message=turn.message, native=turn.native, invalid_arguments={0: "not JSON"})
    result, adapter = run([turn, says("Sorry.")], spy)
    results = adapter.requests[1].steps[0].results
    assert [r.content for r in results] == ["Invalid arguments: not JSON", "Unknown tool: teleport"]
    assert all(r.is_error for r in results)
    assert spy.runs == []
    assert result.answer == "Sorry."


@pytest.mark.parametrize("failing_call", [1, 2, 3])
def test_a_provider_error_is_reported_never_raised(failing_call: int) -> None:  # L15
    spy = Spy()
    script: list[Turn[str] | ProviderCallError] = [asks("history"), asks("history"), says("x")]
    script[failing_call - 1] = ProviderCallError("RateLimitError: 429 slow down")
    result, _ = run(script, spy)
    assert result.answer == ""
    assert result.error == f"anthropic call {failing_call} failed: RateLimitError: 429 slow down"
    # the chat keeps what happened: the user message and every completed round
    assert result.chat[0] == UserMessage(text="How is my bench press going?")
    assert len(result.chat) == 1 + 2 * (failing_call - 1)
    assert len(spy.runs) == failing_call - 1


def test_an_empty_reply_is_an_error_not_an_answer() -> None:  # L15
    result, _ = run([asks("history"), says("  ")], Spy())
    assert result.answer == ""
    assert result.error == "anthropic call 2 returned an empty reply (no text and no tool request)"


def test_a_closing_reply_without_text_is_an_error() -> None:  # L15
    result, adapter = run([asks("history"), asks("history", text="")], Spy(), max_rounds=0)
    assert len(adapter.requests) == 2
    assert result.answer == "" and result.error is not None
    assert "closing call 2 returned no text" in result.error


def test_a_closing_call_failure_is_reported() -> None:
    script: list[Turn[str] | ProviderCallError] = [asks("history"), ProviderCallError("boom")]
    result, _ = run(script, Spy(), max_rounds=0)
    assert result.error == "anthropic call 2 failed: boom"
    assert isinstance(result.chat[-1], ToolMessage)  # the not-executed result is kept


def test_requests_without_ids_get_stable_ids_of_the_loops_own() -> None:
    ids = []
    for _ in range(2):
        _, adapter = run([asks("history", "history", ids=False), says("ok")], Spy())
        ids.append([r.call_id for r in adapter.requests[1].steps[0].results])
    assert ids[0] == ids[1]
    assert len(set(ids[0])) == 2
    assert all(i.startswith(LOCAL_ID_PREFIX) for i in ids[0])
    turn = adapter.requests[1].steps[0].turn
    assert [c.id for c in turn.message.tool_calls] == ids[0]


def test_a_turn_repeating_an_id_is_reported() -> None:
    calls = (ToolCall(id="same", name="history"), ToolCall(id="same", name="history"))
    turn = Turn(message=AssistantMessage(tool_calls=calls), native="t")
    result, _ = run([turn], Spy())
    assert result.error is not None and "repeats a tool request id" in result.error


def test_pair_results_orders_by_request() -> None:
    requests = [ToolCall(id="a", name="t"), ToolCall(id="b", name="t")]
    a, b = (ToolMessage(call_id=i, name="t", content=i) for i in "ab")
    assert pair_results(requests, [b, a]) == (a, b)


@pytest.mark.parametrize(
    ("results", "problem"),
    [
        (["a"], "unanswered \\['b'\\]"),
        (["a", "b", "c"], "without request \\['c'\\]"),
        (["a", "a", "b"], "two results for tool request 'a'"),
    ],
)
def test_pair_results_refuses_broken_pairing(results: list[str], problem: str) -> None:
    requests = [ToolCall(id="a", name="t"), ToolCall(id="b", name="t")]
    messages = [ToolMessage(call_id=i, name="t", content=i) for i in results]
    with pytest.raises(ValueError, match=problem):
        pair_results(requests, messages)


def test_not_executed_and_tool_errors() -> None:
    request = ToolCall(id="x", name="save_goal", arguments={"kg": 100})
    assert not_executed([request]) == (
        ToolMessage(call_id="x", name="save_goal", content=NOT_EXECUTED_RESULT, is_error=True),
    )
    assert NOT_EXECUTED_RESULT == "Not executed: the step limit for this answer was reached."
    spy = Spy()
    failing = spy.tool("save_goal", fail="")
    assert run_tool(request, {"save_goal": failing}).content == "ToolError"


def test_closing_system_appends_the_order() -> None:
    assert closing_system("Be brief.") == f"Be brief.\n\n{STEP_LIMIT_INSTRUCTION}"
    assert closing_system("") == STEP_LIMIT_INSTRUCTION
    for words in ("step limit", "already know", "left undone", "whether to continue"):
        assert words in STEP_LIMIT_INSTRUCTION
