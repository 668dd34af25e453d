"""Deliberately faulty loops, each caught with the right rule id on every provider where its
fault applies.

Each row runs one faulty loop (the reference loop with one thing done wrong; see the modules
beside this one) through the official SDK against the scripted emulator, on a scenario that
exposes the fault, and reads every finding of the cell (`cell_findings`: the rules, the
scenario's expectations and the emulator's rejections). The fault must be caught by the rules
in `caught_by`; every other finding must be one the row names in `also` or `rejected`, with
`why` saying why it follows. When the real API would reject the faulty request, the emulator
does too (`rejected`: its error class per provider, reported as `api.<class>`), the loop then
gets an error — and the loop rule must still name the fault.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path

import pytest

from harness.checks import catalogue
from harness.loop.contract import Loop
from harness.loop.reference import reference_loop
from harness.outcome import cell_findings
from harness.runner import Cell, CellRun, run_cell
from harness.scenario import Scenario, load_scenario
from harness.scenario.model import Provider
from harness.sources import ScriptedSource
from tests.checks.support import explain
from tests.conftest import library
from tests.faulty_loops import context, gemini_afc, limit, pairing, state, tools, turns

ALL: tuple[Provider, ...] = ("anthropic", "openai", "gemini")
OWN_SCENARIOS = Path(__file__).parent / "scenarios"
# What a request the API rejects leads to: the loop reports the provider's error (L15: a 400
# caused by the loop's own request is the loop's fault, not the provider's), so the query ends
# in an error instead of its expected ending.
FAILS = frozenset({"L15", "expect.ending"})
# ...and when it is rejected before the script's last round, fewer rounds and tools than
# expected.
FAILS_EARLY = FAILS | {"expect.rounds", "expect.tools"}
# The emulator plays a script: a request the script has no turn for (tools still allowed after
# every scripted turn was used) gets the script's last turn again, so the loop goes on, and a
# note naming the scenario's limit, `script.exhausted` (a warning in runs, never `api.*`).
EXHAUSTED = "script.exhausted"


@dataclass(frozen=True, kw_only=True)
class Fault:
    name: str
    loop: Callable[[], Loop]  # a fresh loop per conversation (some faults keep state)
    scenario: str
    providers: tuple[Provider, ...]
    caught_by: frozenset[str]
    also: frozenset[str] = frozenset()
    rejected: Mapping[Provider, str] = field(default_factory=dict)
    why: str = ""
    streamed_too: bool = False  # also run on the streamed variant (a sample of the rows)


def fixed(loop: Loop) -> Callable[[], Loop]:
    return lambda: loop


def rules(*ids: str) -> frozenset[str]:
    return frozenset(ids)


FAULTS: tuple[Fault, ...] = (
    # ---- pairing ----
    Fault(
        name="results out of order",
        loop=fixed(pairing.results_out_of_order),
        scenario="parallel_requests_one_turn",
        providers=ALL,
        caught_by=rules("L6"),
        streamed_too=True,
    ),
    Fault(
        name="ids swapped",
        loop=fixed(pairing.ids_swapped),
        scenario="parallel_requests_one_turn",
        providers=ALL,
        caught_by=rules("L5"),
    ),
    Fault(
        name="a result missing",
        loop=fixed(pairing.result_missing),
        scenario="parallel_requests_one_turn",
        providers=ALL,
        caught_by=rules("L6"),
        also=FAILS,
        rejected={"anthropic": "E2", "openai": "O1", "gemini": "G1"},
        why="the API rejects the unanswered request",
        streamed_too=True,
    ),
    Fault(
        name="a result sent twice",
        loop=fixed(pairing.result_twice),
        scenario="parallel_requests_one_turn",
        providers=("openai",),
        caught_by=rules("L6"),
    ),
    Fault(
        name="a result sent twice",
        loop=fixed(pairing.result_twice),
        scenario="parallel_requests_one_turn",
        providers=("anthropic", "gemini"),
        caught_by=rules("L6"),
        also=FAILS,
        rejected={"anthropic": "duplicate_result", "gemini": "G1"},
        why="Anthropic rejects a second result for one id; Gemini counts function responses "
        "against function calls",
    ),
    Fault(
        name="text before the results (Anthropic)",
        loop=fixed(pairing.anthropic_text_before_results),
        scenario="one_tool_then_answer",
        providers=("anthropic",),
        caught_by=rules("anthropic.results_first"),
        also=FAILS,
        rejected={"anthropic": "E2"},
        why="the API reads the tool_use ids as unanswered",
    ),
    # ---- running the tools ----
    Fault(
        name="tools run concurrently (threads)",
        loop=fixed(tools.tools_in_threads),
        scenario="parallel_requests_one_turn",
        providers=ALL,
        caught_by=rules("L4"),
        streamed_too=True,
    ),
    Fault(
        name="a pending write executed after the limit",
        loop=fixed(tools.pending_run_after_limit),
        scenario="limit_reached_pending_write",
        providers=ALL,
        caught_by=rules("L11"),
        also=rules("L3", "expect.not_run", "expect.rounds", "expect.tools"),
        why="the write ran as a second round where the budget allows one (L3) and the "
        "scenario says save_goal must not run",
    ),
    Fault(
        name="a tool error raised to the person",
        loop=fixed(tools.tool_error_raised),
        scenario="answer_after_failing_tool",
        providers=ALL,
        caught_by=rules("L15"),
        also=rules("L1", "harness.loop_error", "expect.ending"),
        why="the loop raises, so the tool's result never goes back (L1)",
    ),
    Fault(
        name="a failing tool retried",
        loop=fixed(tools.failing_tool_retried),
        scenario="answer_after_failing_tool",
        providers=ALL,
        caught_by=rules("L1"),
        also=rules("expect.tools"),
        why="the tool ran twice where the scenario expects once",
    ),
    # ---- the limit ----
    Fault(
        name="no closing call",
        loop=fixed(limit.no_closing_call),
        scenario="limit_reached_pending_read",
        providers=ALL,
        caught_by=rules("L11", "L12"),
        also=FAILS,
        why="the loop gives up with an error instead of a closing answer",
    ),
    Fault(
        name="the interim half sentence returned as the answer",
        loop=fixed(limit.interim_text_as_answer),
        scenario="limit_reached_pending_read",
        providers=ALL,
        caught_by=rules("L15", "L11", "L12", "L14"),
        also=rules("expect.ending"),
        why="no closing call was made, so the query ends as an answer, not at the limit",
    ),
    Fault(
        name="a closing call without tools",
        loop=fixed(limit.closing_without_tools),
        scenario="limit_reached_pending_read",
        providers=("anthropic",),
        caught_by=rules("L12", "anthropic.tools_declared"),
        also=FAILS,
        rejected={"anthropic": "E1"},
        why="Anthropic rejects tool blocks in a request that declares no tools",
        streamed_too=True,
    ),
    Fault(
        name="a closing call without tools",
        loop=fixed(limit.closing_without_tools),
        scenario="limit_reached_pending_read",
        providers=("openai", "gemini"),
        caught_by=rules("L12"),
        also=rules("expect.ending"),
        why="the API answers a call without tools with text, so the run looks like a plain "
        "answer rather than a step-limit ending",
    ),
    Fault(
        name="a closing call with tool choice auto",
        loop=fixed(limit.closing_with_tool_choice_auto),
        scenario="limit_reached_pending_read",
        providers=ALL,
        caught_by=rules("L12"),
        also=FAILS | {"L14", EXHAUSTED},
        why="tools stay allowed after the script's last turn: the model asks for a tool again "
        "and the loop hands back that turn's interim text",
        streamed_too=True,
    ),
    Fault(
        name="the closing order in a tool result",
        loop=fixed(limit.closing_order_in_tool_result),
        scenario="limit_reached_pending_read",
        providers=ALL,
        caught_by=rules("L13"),
        also=rules("L11"),
        why="the pending result is no longer exactly the not-executed text",
    ),
    Fault(
        name="the closing order left out",
        loop=fixed(limit.closing_order_left_out),
        scenario="limit_reached_pending_read",
        providers=ALL,
        caught_by=rules("L13"),
    ),
    Fault(
        name="the closing reply replaced by the loop's own text",
        loop=fixed(limit.canned_closing_answer),
        scenario="limit_reached_pending_read",
        providers=ALL,
        caught_by=rules("L14"),
        also=rules("L2"),
        why="the closing reply is text only, so handing back another text breaks L2 as well",
    ),
    # ---- the budget ----
    Fault(
        name="the budget not reset per message",
        loop=limit.BudgetAcrossMessages,
        scenario="two_user_messages_fresh_budget",
        providers=ALL,
        caught_by=rules("L3"),
        also=rules("expect.ending", "expect.rounds", "expect.tools"),
        why="the second message closes at the limit after no round",
    ),
    Fault(
        name="the budget one round short",
        loop=fixed(limit.one_round_short),
        scenario="limit_reached_pending_read",
        providers=ALL,
        caught_by=rules("L3"),
        also=rules("expect.rounds", "expect.tools"),
        why="one round fewer than the scenario expects",
    ),
    Fault(
        name="one round over the budget",
        loop=fixed(limit.one_round_too_many),
        scenario="limit_reached_pending_read",
        providers=ALL,
        caught_by=rules("L3"),
        also=rules("expect.rounds", "expect.tools", "L11", "L12", "L13", EXHAUSTED),
        why="the request of the limit call runs (L11) and the call where the closing call "
        "belongs is an ordinary one (L12, L13); past the script, the last turn comes again",
    ),
    Fault(
        name="a call after the answer",
        loop=fixed(limit.call_after_the_answer),
        scenario="one_tool_then_answer",
        providers=ALL,
        caught_by=rules("L2"),
    ),
    # ---- the context ----
    Fault(
        name="the context cut inside a chain",
        loop=fixed(context.context_cut_inside_chain),
        scenario="long_history_cut_inside_chain",
        providers=ALL,
        caught_by=rules("L8"),
        also=FAILS_EARLY | {"L6", "L7"},
        rejected={"anthropic": "E3", "openai": "O2", "gemini": "G2"},
        why="the first saved message is a result without its request (L6), which is not "
        "the selection (L7), and the API rejects it",
    ),
    Fault(
        name="more than 20 saved messages selected",
        loop=fixed(context.context_over_twenty),
        scenario="long_history_cut_inside_chain",
        providers=ALL,
        caught_by=rules("L7"),
    ),
    Fault(
        name="Gemini trimming the active turn",
        loop=fixed(context.gemini_trims_any_content),
        scenario="gemini_active_turn_over_size_limit",
        providers=("gemini",),
        caught_by=rules("L9"),
        also=FAILS | {"L5", "L6", "L8"},
        rejected={"gemini": "G2"},
        why="the trimmed request starts with a function response whose call and user "
        "message are gone",
        streamed_too=True,
    ),
    Fault(
        name="Gemini trimming inside an old exchange",
        loop=fixed(context.gemini_trims_any_content),
        scenario="gemini_old_exchanges_over_size_limit",
        providers=("gemini",),
        caught_by=rules("L9"),
        also=rules(),
        why="L9 alone: a suffix starting with a model turn is a selection L7 allows, but "
        "Gemini's trimming drops whole exchanges",
    ),
    # ---- what providers need carried between calls ----
    Fault(
        name="previous_response_id used",
        loop=fixed(state.previous_response_id),
        scenario="three_round_chain",
        providers=("openai",),
        caught_by=rules("openai.no_previous_response_id"),
        also=FAILS_EARLY | {"L5", "L6", "L8"},
        rejected={"openai": "O4"},
        why="the second call resends only the new results, not the turn or the user message",
        streamed_too=True,
    ),
    Fault(
        name="store true",
        loop=fixed(state.store_true),
        scenario="one_tool_then_answer",
        providers=("openai",),
        caught_by=rules("openai.store_false"),
    ),
    Fault(
        name="encrypted reasoning not requested",
        loop=fixed(state.reasoning_not_requested),
        scenario="openai_reasoning_across_rounds",
        providers=("openai",),
        caught_by=rules("openai.reasoning_requested"),
        also=FAILS_EARLY,
        rejected={"openai": "O3"},
        why="a reasoning item without its blob is a lookup of a stored item",
    ),
    Fault(
        name="reasoning dropped",
        loop=fixed(state.reasoning_dropped),
        scenario="openai_reasoning_across_rounds",
        providers=("openai",),
        caught_by=rules("openai.reasoning_resent"),
        also=FAILS_EARLY,
        rejected={"openai": "O5"},
        streamed_too=True,
    ),
    Fault(
        name="reasoning moved out of place",
        loop=fixed(state.reasoning_moved),
        scenario="openai_reasoning_across_rounds",
        providers=("openai",),
        caught_by=rules("openai.reasoning_resent"),
        also=FAILS_EARLY,
        rejected={"openai": "O5"},
    ),
    Fault(
        name="thinking blocks dropped",
        loop=fixed(state.reasoning_dropped),
        scenario="anthropic_thinking_signatures",
        providers=("anthropic",),
        caught_by=rules("anthropic.thinking_unchanged"),
        # Accepted: the request does not enable thinking, and then the API does not require
        # the blocks back (E5 applies when thinking is on).
        streamed_too=True,
    ),
    Fault(
        name="Gemini signatures dropped",
        loop=fixed(state.reasoning_dropped),
        scenario="three_round_chain",
        providers=("gemini",),
        caught_by=rules("gemini.content_unchanged"),
        also=FAILS_EARLY,
        rejected={"gemini": "G3"},
        streamed_too=True,
    ),
    Fault(
        name="reasoning kept into the next message",
        loop=state.ReasoningKeptAcrossMessages,
        scenario="openai_reasoning_two_messages",
        providers=("openai",),
        caught_by=rules("L10"),
    ),
    Fault(
        name="opaque tokens changed",
        loop=fixed(state.tokens_tampered),
        scenario="openai_reasoning_across_rounds",
        providers=("openai",),
        caught_by=rules("openai.reasoning_resent"),
        also=FAILS_EARLY,
        rejected={"openai": "invalid_encrypted_content"},
    ),
    Fault(
        name="opaque tokens changed",
        loop=fixed(state.tokens_tampered),
        scenario="anthropic_thinking_signatures",
        providers=("anthropic",),
        caught_by=rules("anthropic.thinking_unchanged"),
        also=FAILS,
        rejected={"anthropic": "thinking_signature_invalid"},
    ),
    Fault(
        name="opaque tokens changed",
        loop=fixed(state.tokens_tampered),
        scenario="three_round_chain",
        providers=("gemini",),
        caught_by=rules("gemini.content_unchanged"),
        also=FAILS_EARLY,
        rejected={"gemini": "signature_tampered"},
    ),
    Fault(
        name="the turn's text dropped",
        loop=fixed(turns.turn_text_dropped),
        scenario="one_tool_then_answer",
        providers=ALL,
        caught_by=rules("L5"),
    ),
    Fault(
        name="Gemini automatic function calling",
        loop=fixed(gemini_afc.gemini_sdk_runs_tools),
        scenario="one_tool_then_answer",
        providers=("gemini",),
        caught_by=rules("gemini.no_afc"),
        also=rules("L6"),
        why="the SDK's own function response leaves out the id of the call it answers",
    ),
    Fault(
        name="several Gemini candidates",
        loop=fixed(gemini_afc.gemini_two_candidates),
        scenario="one_tool_then_answer",
        providers=("gemini",),
        caught_by=rules("gemini.one_candidate"),
    ),
)


def _scenarios() -> dict[str, Scenario]:
    own = [load_scenario(path) for path in sorted(OWN_SCENARIOS.glob("*.yaml"))]
    return {s.id: s for s in [*library(), *own]}


SCENARIOS = _scenarios()
RUN_NUMBERS = count(1)  # each run its own id: the emulator keeps its log per run id


@pytest.fixture(scope="module")
def source() -> Iterator[ScriptedSource]:
    scripted = ScriptedSource(SCENARIOS.values(), {})
    yield scripted
    scripted.close()


def _slug(text: str) -> str:
    return "-".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


def _cases() -> Iterator[pytest.ParameterSet]:
    for fault in FAULTS:
        for provider in fault.providers:
            for stream in (False, True) if fault.streamed_too else (False,):
                suffix = "-stream" if stream else ""
                yield pytest.param(
                    fault, provider, stream, id=f"{_slug(fault.name)}-{provider}{suffix}"
                )


def run(
    source: ScriptedSource, loop: Loop, scenario: str, provider: Provider, stream: bool
) -> CellRun:
    cell = Cell(scenario=SCENARIOS[scenario], provider=provider, stream=stream)
    run_id = f"faulty-{next(RUN_NUMBERS)}-{scenario}-{provider}-{int(stream)}"
    return run_cell(cell, source, loop, run_id=run_id)


@pytest.mark.parametrize(("fault", "provider", "stream"), list(_cases()))
def test_faulty_loop_is_caught_with_its_rule(
    source: ScriptedSource, fault: Fault, provider: Provider, stream: bool
) -> None:
    found = cell_findings(run(source, fault.loop(), fault.scenario, provider, stream))
    ids = {f.rule for f in found}
    assert fault.caught_by <= ids, (
        f"{fault.name} not caught by {fault.caught_by}:\n{explain(found)}"
    )
    rejected = {f"api.{fault.rejected[provider]}"} if provider in fault.rejected else set()
    assert ids - fault.caught_by == fault.also | rejected, (
        f"{fault.name}: other findings differ from the table ({fault.why or 'none expected'}):\n"
        + explain(found)
    )


def test_there_are_at_least_fifteen_kinds_of_fault() -> None:
    assert len({fault.name for fault in FAULTS}) >= 15


def test_every_rule_a_loop_can_break_is_shown_by_a_faulty_loop() -> None:
    """`wire.parse` aside (an SDK always sends a readable body), each rule in the catalogue
    is the one that catches some fault."""
    caught = set().union(*(fault.caught_by for fault in FAULTS))
    assert {entry.id for entry in catalogue()} - caught == {"wire.parse"}


@pytest.mark.parametrize("scenario", sorted(p.stem for p in OWN_SCENARIOS.glob("*.yaml")))
@pytest.mark.parametrize("stream", [False, True])
def test_the_reference_loop_passes_the_scenarios_made_for_these_faults(
    source: ScriptedSource, scenario: str, stream: bool
) -> None:
    for provider in SCENARIOS[scenario].providers:
        found = cell_findings(run(source, reference_loop, scenario, provider, stream))
        assert not found, explain(found)
