"""The reference loop end to end: the real official SDKs over real HTTP to the local emulator,
which validates every request the way the real API does. Each test runs on every provider,
streamed and not (helpers in `e2e_support`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.chat import AssistantMessage, ToolMessage, UserMessage
from harness.emulator.server import Emulator
from harness.loop.closing import NOT_EXECUTED_RESULT, STEP_LIMIT_INSTRUCTION
from harness.loop.contract import LoopCall, ProviderName
from harness.loop.reference import reference_loop
from tests.loop.e2e_support import (
    CELLS,
    EVERY_CELL,
    MODELS,
    OPAQUE_MODELS,
    STREAMED,
    Cell,
    Runs,
    cells_of,
    client_for,
    declared_tools,
    rejections,
    system_text,
    tool_choice_is_none,
    wire_text,
)


@pytest.fixture
def cell(
    emulator: Emulator, provider: ProviderName, stream: bool, run_id: str, tmp_path: Path
) -> Cell:
    return Cell(emulator, provider, stream, f"{run_id}", tmp_path)


ONE_TOOL = """\
title: One tool, then an answer
rules: [L1, L2, L5, L6]
system: You are Gymnasia's training assistant.
messages:
  - text: How is my bench press going?
    script:
      turns:
        - text: Let me look at your history.
          calls:
            - name: get_workout_history
              arguments: {exercise: bench press}
        - answer: You added 2.5 kg; 3x5 at 80 kg is your best.
      closing: I reached the step limit. Shall I continue?
    expect: {ending: answer, rounds: 1, tools: [get_workout_history]}
"""


@EVERY_CELL
def test_one_tool_then_answer(cell: Cell) -> None:
    scenario = cell.scenario("one_tool", ONE_TOOL)
    runs = Runs(scenario)
    result = cell.run(scenario, runs)
    log = cell.log()
    assert rejections(log) == []
    assert result.error is None
    assert result.answer == "You added 2.5 kg; 3x5 at 80 kg is your best."
    assert runs.names == ["get_workout_history"]
    assert len(log) == 2
    chat = result.chat
    assert chat[0] == UserMessage(text="How is my bench press going?")
    assert isinstance(chat[1], AssistantMessage) and chat[1].text == "Let me look at your history."
    (request,) = chat[1].tool_calls
    assert request.name == "get_workout_history"
    assert dict(request.arguments) == {"exercise": "bench press"}
    assert chat[2] == ToolMessage(
        call_id=request.id,
        name="get_workout_history",
        content="2026-11-28 bench press 3x5 @ 80 kg",
    )
    assert chat[3] == AssistantMessage(text=result.answer)
    assert len(chat) == 4
    assert "reasoning" not in wire_text([repr(m) for m in chat])


PARALLEL = """\
title: Parallel calls
rules: [L4, L6]
messages:
  - text: Compare my bench press and squat, then save a goal.
    script:
      turns:
        - text: Checking both and saving.
          calls:
            - name: get_workout_history
              arguments: {exercise: bench press}
            - name: save_goal
              arguments: {goal: bench 100 kg}
            - name: get_workout_history
              arguments: {exercise: squat}
        - answer: Both are improving and your goal is saved.
      closing: I reached the step limit. Shall I continue?
    expect:
      ending: answer
      rounds: 1
      tools: [get_workout_history, save_goal, get_workout_history]
"""


@EVERY_CELL
def test_parallel_calls_run_in_request_order(cell: Cell) -> None:
    scenario = cell.scenario("parallel", PARALLEL)
    runs = Runs(scenario)
    result = cell.run(scenario, runs)
    assert rejections(cell.log()) == []
    assert result.error is None
    assert result.answer == "Both are improving and your goal is saved."
    assert runs.names == ["get_workout_history", "save_goal", "get_workout_history"]
    turn = result.chat[1]
    assert isinstance(turn, AssistantMessage)
    ids = [c.id for c in turn.tool_calls]
    assert len(set(ids)) == 3
    assert [m.call_id for m in result.chat[2:5] if isinstance(m, ToolMessage)] == ids


BUDGET = """\
title: The budget runs out with calls pending
rules: [L3, L11, L12, L13, L14]
system: You are Gymnasia's training assistant.
max_rounds: 2
messages:
  - text: Plan my next month and save the goal.
    script:
      turns:
        - text: Let me look at your bench press.
          calls:
            - name: get_workout_history
              arguments: {exercise: bench press}
        - text: And your squat.
          calls:
            - name: get_workout_history
              arguments: {exercise: squat}
        - text: Now saving your goal.
          calls:
            - name: save_goal
              arguments: {goal: bench 100 kg}
            - name: get_body_weight
      closing: I reached the step limit and did not save the goal. Shall I continue?
    expect:
      ending: step_limit
      rounds: 2
      tools: [get_workout_history, get_workout_history]
      not_run: [save_goal, get_body_weight]
"""


@EVERY_CELL
def test_budget_reached_with_pending_calls(cell: Cell, provider: ProviderName) -> None:
    scenario = cell.scenario("budget", BUDGET)
    runs = Runs(scenario)
    result = cell.run(scenario, runs)
    log = cell.log()
    assert rejections(log) == []
    assert result.error is None
    assert result.answer == "I reached the step limit and did not save the goal. Shall I continue?"
    assert runs.names == ["get_workout_history", "get_workout_history"]  # pending never ran
    assert len(log) == 4  # max_rounds + 1 ordinary calls, then one closing call
    closing = log[-1].body
    assert tool_choice_is_none(provider, closing)
    assert declared_tools(provider, closing) == [t.name for t in scenario.tools]
    assert system_text(provider, closing).endswith(STEP_LIMIT_INSTRUCTION)
    assert system_text(provider, closing).startswith(scenario.system)
    for entry in log[:-1]:
        assert not tool_choice_is_none(provider, entry.body)
        assert STEP_LIMIT_INSTRUCTION not in wire_text(entry.body)
    assert wire_text(closing).count(NOT_EXECUTED_RESULT) == 2
    assert wire_text(closing).count(STEP_LIMIT_INSTRUCTION) == 1
    pending = [m for m in result.chat if isinstance(m, ToolMessage) and m.is_error]
    assert [(m.name, m.content) for m in pending] == [
        ("save_goal", NOT_EXECUTED_RESULT),
        ("get_body_weight", NOT_EXECUTED_RESULT),
    ]
    assert result.chat[-1] == AssistantMessage(text=result.answer)


NO_TOOL = """\
title: An answer without tools
rules: [L2]
messages:
  - text: Hello!
    script:
      turns:
        - answer: Hi! How can I help with your training?
      closing: I reached the step limit. Shall I continue?
    expect: {ending: answer, rounds: 0, tools: []}
"""


@EVERY_CELL
def test_an_answer_without_tools_makes_no_extra_call(cell: Cell) -> None:
    scenario = cell.scenario("no_tool", NO_TOOL)
    runs = Runs(scenario)
    result = cell.run(scenario, runs)
    assert rejections(cell.log()) == []
    assert len(cell.log()) == 1
    assert result.answer == "Hi! How can I help with your training?"
    assert runs.names == []


FAILING = """\
title: A failing tool
rules: [L5, L6]
messages:
  - text: How much do I weigh?
    script:
      turns:
        - calls:
            - name: get_body_weight
        - answer: I could not read your weight; the scale service is offline.
      closing: I reached the step limit. Shall I continue?
    expect: {ending: answer, rounds: 1, tools: [get_body_weight]}
"""


@EVERY_CELL
def test_a_failing_tool_sends_an_error_result(cell: Cell, provider: ProviderName) -> None:
    scenario = cell.scenario("failing", FAILING)
    runs = Runs(scenario)
    result = cell.run(scenario, runs)
    log = cell.log()
    assert rejections(log) == []
    assert result.answer == "I could not read your weight; the scale service is offline."
    assert runs.names == ["get_body_weight"]
    second = wire_text(log[1].body)
    assert "the scale service is offline" in second
    if provider == "anthropic":
        assert log[1].body["messages"][-1]["content"][0]["is_error"] is True
    if provider == "gemini":
        assert '"error": "the scale service is offline"' in second


@EVERY_CELL
def test_a_provider_error_is_reported_not_raised(cell: Cell) -> None:
    body = ONE_TOOL.replace(
        "        - answer: You added",
        "        - fault: {kind: server_error}\n          answer: You added",
    )
    scenario = cell.scenario("provider_error", body)
    runs = Runs(scenario)
    result = cell.run(scenario, runs)
    assert result.answer == ""
    assert result.error is not None and "call 2 failed" in result.error
    assert runs.names == ["get_workout_history"]
    assert [e.status for e in cell.log()] == [200, 500]
    assert isinstance(result.chat[-1], ToolMessage)  # what ran is kept; no answer invented


@STREAMED
def test_a_stream_cut_is_reported_not_raised(cell: Cell, stream: bool) -> None:
    body = ONE_TOOL.replace(
        "        - text: Let me look",
        "        - fault: {kind: stream_cut}\n          text: Let me look",
    )
    scenario = cell.scenario("stream_cut", body)
    runs = Runs(scenario)
    result = cell.run(scenario, runs)
    assert result.answer == ""
    assert result.error is not None and "call 1 failed" in result.error
    assert runs.names == []


TWO_QUERIES = """\
title: A second query resends the saved chat
rules: [L7, L8]
messages:
  - text: How is my bench press going?
    script:
      turns:
        - text: Let me look.
          calls:
            - name: get_workout_history
              arguments: {exercise: bench press}
        - answer: You are improving.
      closing: I reached the step limit. Shall I continue?
    expect: {ending: answer, rounds: 1, tools: [get_workout_history]}
  - text: And my squat?
    script:
      turns:
        - calls:
            - name: get_workout_history
              arguments: {exercise: squat}
        - answer: Your squat is steady.
      closing: I reached the step limit. Shall I continue?
    expect: {ending: answer, rounds: 1, tools: [get_workout_history]}
"""


@EVERY_CELL
@pytest.mark.parametrize("opaque", [False, True], ids=["plain", "opaque"])
def test_the_saved_chat_is_resent_on_the_next_query(
    cell: Cell, provider: ProviderName, opaque: bool
) -> None:
    # The saved chat holds no reasoning, thinking or signatures (L10); the next query's
    # request, which resends it as context, must still be accepted.
    body = TWO_QUERIES + (OPAQUE.replace("CALL_IDS", "true") if opaque else "")
    scenario = cell.scenario(f"two_queries_{'opaque' if opaque else 'plain'}", body)
    runs = Runs(scenario)
    model = (OPAQUE_MODELS if opaque else MODELS)[provider]
    first = cell.run(scenario, runs, model=model)
    second = cell.run(scenario, runs, index=1, history=first.chat, model=model)
    assert rejections(cell.log()) == []
    assert second.error is None
    assert second.answer == "Your squat is steady."
    assert second.chat[: len(first.chat)] == first.chat
    assert len(cell.log()) == 4
    assert "You are improving." in wire_text(cell.log()[2].body)


@cells_of("gemini")
@pytest.mark.parametrize("size", ["whole", "trimmed"])
def test_gemini_trims_old_exchanges_over_the_size_limit(
    cell: Cell, provider: ProviderName, size: str
) -> None:
    scenario = cell.scenario("trim", TWO_QUERIES)
    runs = Runs(scenario)
    first = cell.run(scenario, runs)
    old = tuple(
        m
        for n in range(4)
        for m in (UserMessage(text=f"old question {n} " + "x" * 400), AssistantMessage(text="ok"))
    )
    history = (*old, *first.chat)
    urls = cell.emulator.base_urls(scenario.id, cell.run_id)
    # Each old exchange is about 500 bytes on the wire and the request without them about
    # 1,250 (call 1) and 1,730 (call 2): 2,000 keeps one old exchange on call 1 and none on
    # call 2, whose active sequence is longer.
    limit = 2000 if size == "trimmed" else None
    call = LoopCall(
        provider="gemini",
        client=client_for("gemini", urls["gemini"]),
        model=MODELS["gemini"],
        system=scenario.system,
        history=history,
        message=scenario.messages[1].text,
        tools=runs.specs(),
        max_rounds=scenario.max_rounds,
        stream=cell.stream,
        request_size_limit=limit,
    )
    result = reference_loop(call)
    log = cell.log()
    assert rejections(log) == []
    assert result.answer == "Your squat is steady."
    assert result.chat[: len(history)] == history  # trimming never touches the saved chat
    first_call, second_call = (json.dumps(e.body) for e in log[2:])
    if limit is None:
        assert all(f"old question {n}" in first_call for n in range(4))
        return
    for sent in (first_call, second_call):
        assert len(sent.encode()) <= limit
        assert "old question 0" not in sent and "old question 2" not in sent
        assert "How is my bench press going?" in sent  # the newest exchange still fits
    assert "old question 3" in first_call
    assert "old question 3" not in second_call
    assert '"exercise": "squat"' in second_call  # the active turn is whole


@EVERY_CELL
def test_tools_are_declared_on_every_call(cell: Cell, provider: ProviderName) -> None:
    scenario = cell.scenario("declared", BUDGET)
    cell.run(scenario, Runs(scenario))
    for entry in cell.log():
        assert declared_tools(provider, entry.body) == [t.name for t in scenario.tools]


@cells_of("openai")
def test_openai_calls_are_stateless(cell: Cell, provider: ProviderName) -> None:
    scenario = cell.scenario("stateless", BUDGET)
    cell.run(scenario, Runs(scenario))
    for entry in cell.log():
        assert entry.body["store"] is False
        assert "previous_response_id" not in entry.body
        assert entry.body["include"] == ["reasoning.encrypted_content"]
        assert entry.body["instructions"].startswith(scenario.system)


OPAQUE = """\
script_options:
  anthropic: {thinking: true}
  openai: {reasoning: true}
  gemini: {call_ids: CALL_IDS, thought_signatures: true}
"""


OPAQUE_CELLS = [
    *(pytest.param(*c.values, "true", id=f"{c.id}") for c in CELLS),
    *(
        pytest.param(*c.values, "false", id=f"{c.id}-no-ids")
        for c in CELLS
        if c.values[0] == "gemini"
    ),
]


@pytest.mark.parametrize(("provider", "stream", "call_ids"), OPAQUE_CELLS)
def test_opaque_tokens_go_back_unchanged_through_the_closing_call(
    cell: Cell, provider: ProviderName, call_ids: str
) -> None:
    # Thinking blocks and signatures (E5), reasoning items (O3, O5, O6), thought signatures on
    # a Gemini 3 model (G3), and Gemini calls without ids paired by position; with a parallel
    # turn and the closing call.
    body = BUDGET.replace(
        "max_rounds: 2\n", "max_rounds: 2\n" + OPAQUE.replace("CALL_IDS", call_ids)
    )
    body = body.replace(
        "            - name: get_workout_history\n              arguments: {exercise: squat}\n",
        "            - name: get_workout_history\n              arguments: {exercise: squat}\n"
        "            - name: get_workout_history\n              arguments: {exercise: row}\n",
    )
    body = body.replace(
        "tools: [get_workout_history, get_workout_history]",
        "tools: [get_workout_history, get_workout_history, get_workout_history]",
    )
    scenario = cell.scenario(f"opaque_{call_ids}", body)
    runs = Runs(scenario)
    result = cell.run(scenario, runs, model=OPAQUE_MODELS[provider])
    log = cell.log()
    assert rejections(log) == []
    assert result.error is None
    assert len(log) == 4
    assert runs.names == ["get_workout_history"] * 3
    assert tool_choice_is_none(provider, log[-1].body)
    text = wire_text(log[-1].body)
    if provider == "gemini":
        assert text.count("thoughtSignature") >= 3
        assert ('"id"' in text) == (call_ids == "true")
    if provider == "openai":
        assert text.count('"type": "reasoning"') == 3
    if provider == "anthropic":
        assert text.count('"type": "thinking"') == 3
    assert "reasoning" not in repr(result.chat) and "signature" not in repr(result.chat)
