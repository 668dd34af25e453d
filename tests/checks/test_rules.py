"""Every rule, table-driven: a correct trace (the reference loop's own run) passes it, and each
broken trace — the same run with one thing done wrong — fails it with that rule id."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from harness.checks import RULES
from harness.loop.closing import NOT_EXECUTED_RESULT
from harness.scenario.model import Provider
from tests.checks.breaks import (
    Break,
    afc_answer,
    answer,
    ask_two_candidates,
    change_reasoning,
    change_signature,
    changed_argument,
    changed_text,
    closing_result,
    closing_text,
    drop_context,
    drop_first_context,
    drop_last_result,
    drop_middle_user,
    drop_one_tool,
    drop_reasoning,
    drop_results_message,
    drop_thinking,
    drop_turn,
    drop_user_late,
    duplicate_result,
    extra_run,
    interim_answer,
    move_reasoning,
    no_choice,
    no_runs,
    no_tools,
    only_order,
    overlapping,
    prepend_chain_end,
    prepend_orphan,
    pt_claim,
    rename_result,
    repeat_run,
    request,
    requests,
    reverse_results,
    reversed_runs,
    sign_text,
    stop_after_tools,
    stop_at,
    swap_contents,
    text,
    text_before_results,
    then,
    two_candidates,
    unknown_item,
    unknown_result_id,
    unsign,
    usual_system,
)
from tests.checks.support import (
    LIBRARY,
    PROVIDERS,
    Runs,
    edit_headers,
    edit_query,
    edit_response,
    edit_scenario,
    explain,
    findings,
    repeat_call,
    verdicts,
)


@dataclass(frozen=True)
class Case:
    rule: str
    name: str
    scenario: str
    break_it: Break
    providers: tuple[Provider, ...] = PROVIDERS
    says: str = ""  # a piece of the finding's message


ANSWER = "answer_without_tools"
ONE = "one_tool_then_answer"
PARALLEL = "parallel_requests_one_turn"
CHAIN = "three_round_chain"
READ = "limit_reached_pending_read"  # max_rounds 2: calls 1–3 ask, call 4 closes
WRITE = "limit_reached_pending_write"  # max_rounds 1: calls 1–2 ask, call 3 closes
LONG = "long_history_cut_inside_chain"
TWO = "two_user_messages_fresh_budget"
EXACT = "exactly_max_rounds_then_answer"
REASONING = "openai_reasoning_across_rounds"
THINKING = "anthropic_thinking_signatures"
TRIM = "gemini_request_over_size_limit"
NO_IDS = "gemini_calls_without_ids"
PT = "gymnasia_portuguese_goal"
ORDER = f"{NOT_EXECUTED_RESULT} Answer with what you already know and ask whether to continue."
RAW_ERROR = (
    "Error code: 500 - {'type': 'error', 'error': {'type': 'api_error', 'message': "
    "'Internal server error'}}"
)

CASES = [
    Case("wire.parse", "unknown item", ONE, request(2, unknown_item), says="unknown"),
    # L1 — one round
    Case("L1", "unrequested run", ONE, extra_run("get_workout_history", {"exercise": "x"}, 1)),
    Case("L1", "ran twice", ONE, repeat_run, says="more often"),
    Case("L1", "answered without running", ONE, no_runs, says="without running"),
    Case("L1", "run after an answer", ANSWER, extra_run("get_workout_history", {}, 1)),
    # L2 — normal exit
    Case("L2", "call after the answer", ONE, lambda r, _: repeat_call(r, 2), says="after call"),
    Case("L2", "answer not the final text", ONE, answer("Done."), says="not the text"),
    # L3 — round budget
    Case(
        "L3",
        "budget exceeded",
        EXACT,
        lambda r, _: edit_scenario(r, max_rounds=1),
        says="rounds for one user message",
    ),
    Case(
        "L3",
        "too many calls",
        EXACT,
        lambda r, _: edit_scenario(r, max_rounds=1),
        says="ordinary model calls",
    ),
    Case(
        "L3",
        "closing call too early",
        READ,
        lambda r, _: edit_scenario(r, max_rounds=3),
        says="treated as spent",
    ),
    Case("L3", "stopped early", CHAIN, stop_at(3, "Give me a second."), says="stopped after"),
    # L4 — sequential tools
    Case("L4", "concurrent tools", PARALLEL, overlapping, says="before"),
    Case("L4", "out of order", PARALLEL, reversed_runs, says="another order"),
    # L5 — what each round appends
    Case("L5", "turn text changed", ONE, request(2, changed_text), says="text"),
    Case("L5", "arguments changed", ONE, request(2, changed_argument), says="tool requests"),
    Case("L5", "turn dropped", CHAIN, request(2, drop_turn), says="not in this request"),
    Case("L5", "ids swapped", PARALLEL, request(2, swap_contents), says="carries the output"),
    # L6 — pairing
    Case("L6", "result missing", PARALLEL, request(2, drop_last_result), says="no result"),
    Case("L6", "orphan result", PARALLEL, request(2, unknown_result_id), says="no request"),
    Case("L6", "out of order", PARALLEL, request(2, reverse_results), says="order"),
    Case("L6", "duplicate result", PARALLEL, request(2, duplicate_result), says="2 results"),
    Case("L6", "unanswered turn", ONE, request(2, drop_results_message), says="without their"),
    Case(
        "L6",
        "gemini result missing",
        NO_IDS,
        request(2, drop_last_result),
        providers=("gemini",),
        says="no result",
    ),
    Case(
        "L6",
        "gemini result named after another function",
        NO_IDS,
        request(2, rename_result),
        providers=("gemini",),
        says="names save_goal",
    ),
    # L7 — one selection rule
    Case(
        "L7",
        "a saved message left out in the middle",
        LONG,
        requests((1, 2), drop_middle_user),
        says="no selection",
    ),
    Case(
        "L7",
        "starts on a tool result",
        LONG,
        requests((1, 2), prepend_orphan),
        says="no selection",
    ),
    Case(
        "L7",
        "more than the context window",
        LONG,
        lambda r, _: edit_scenario(r, context_window=10),
        says="saved messages were sent",
    ),
    # L8 — the active sequence resent whole
    Case("L8", "step dropped", CHAIN, request(3, drop_turn), says="not resent whole"),
    Case(
        "L8",
        "context changed",
        LONG,
        request(2, drop_first_context),
        providers=("anthropic", "openai"),
        says="context differs",
    ),
    Case("L8", "chain cut", LONG, requests((1, 2), prepend_orphan), says="inside a chain"),
    Case("L8", "user message dropped", ONE, request(2, drop_user_late), says="user message"),
    # L9 — Gemini trims old exchanges only
    Case(
        "L9",
        "user message trimmed",
        TRIM,
        request(2, drop_user_late),
        providers=("gemini",),
        says="user message",
    ),
    Case(
        "L9",
        "trimmed inside an exchange without a limit",
        LONG,
        request(2, drop_first_context),
        providers=("gemini",),
        says="inside an exchange",
    ),
    Case(
        "L9",
        "cut inside an exchange",
        TRIM,
        requests((1, 2), drop_first_context),
        providers=("gemini",),
        says="inside an exchange",
    ),
    Case(
        "L9",
        "over the size limit",
        TRIM,
        lambda r, _: edit_scenario(r, gemini_max_request_bytes=400),
        providers=("gemini",),
        says="over the size limit",
    ),
    # L10 and the OpenAI rules
    Case(
        "L10",
        "reasoning in the answer",
        REASONING,
        lambda r, _: edit_query(
            r,
            answer=r.queries[0].answer
            + str(r.exchanges[0].response_body["output"][0]["encrypted_content"]),
        ),
        providers=("openai",),
        says="reasoning of call 1",
    ),
    Case(
        "openai.store_false",
        "store true",
        ONE,
        request(2, lambda b, *_: b.update(store=True)),
        providers=("openai",),
    ),
    Case(
        "openai.store_false",
        "store absent",
        ONE,
        request(1, lambda b, *_: b.pop("store")),
        providers=("openai",),
        says="store: false",
    ),
    Case(
        "openai.no_previous_response_id",
        "previous_response_id",
        ONE,
        request(2, lambda b, *_: b.update(previous_response_id="resp_0001")),
        providers=("openai",),
    ),
    Case(
        "openai.reasoning_requested",
        "include missing",
        ONE,
        request(1, lambda b, *_: b.pop("include")),
        providers=("openai",),
    ),
    Case(
        "openai.reasoning_resent",
        "reasoning dropped",
        REASONING,
        request(2, drop_reasoning),
        providers=("openai",),
        says="dropped",
    ),
    Case(
        "openai.reasoning_resent",
        "reasoning changed",
        REASONING,
        request(2, change_reasoning),
        providers=("openai",),
        says="encrypted_content",
    ),
    Case(
        "openai.reasoning_resent",
        "reasoning moved",
        REASONING,
        request(2, move_reasoning),
        providers=("openai",),
        says="in place",
    ),
    # L11 — pending requests answered, not executed
    Case(
        "L11",
        "pending write executed",
        WRITE,
        extra_run(
            "save_goal", {"exercise": "bench press", "target_kg": 100, "deadline": "2027-03-31"}, 2
        ),
        says="budget was spent",
    ),
    Case("L11", "other result", WRITE, request(3, closing_result("skipped")), says="not answered"),
    Case("L11", "never answered", WRITE, interim_answer(3), says="no call answered"),
    # L12 — one closing call, tools declared, tool choice none
    Case("L12", "tool choice auto", WRITE, request(3, no_choice), says="lets the model"),
    Case("L12", "tools dropped", WRITE, request(3, no_tools), says="drops the tools"),
    Case("L12", "a tool left out", WRITE, request(3, drop_one_tool), says="leaves out tools"),
    Case("L12", "second closing call", WRITE, lambda r, _: repeat_call(r, 3), says="more call"),
    Case("L12", "no closing call", READ, interim_answer(4), says="no closing call"),
    # L13 — the order in the system instructions, never in a tool result
    Case("L13", "no order added", WRITE, request(3, usual_system), says="not in the closing"),
    Case("L13", "usual prompt lost", WRITE, request(3, only_order), says="usual system prompt"),
    Case(
        "L13",
        "order in a tool result",
        WRITE,
        then(request(3, usual_system), request(3, closing_result(ORDER))),
        says="carries an order",
    ),
    # L14 — the closing answer
    Case(
        "L14",
        "does not ask",
        WRITE,
        closing_text(3, "I reached the step limit for this answer."),
        says="ask whether to continue",
    ),
    Case(
        "L14",
        "does not explain",
        WRITE,
        closing_text(3, "Your record is 85 kg. Should I continue?"),
        says="explain the step limit",
    ),
    Case(
        "L14",
        "claims the write (en)",
        WRITE,
        closing_text(3, "I hit the step limit, but I saved your goal. Shall I continue?"),
        says="claims a write",
    ),
    Case(
        "L14",
        "claims the write (es)",
        WRITE,
        closing_text(3, "Llegué al límite de pasos. Guardé tu meta. ¿Quieres que continúe?"),
        says="claims a write",
    ),
    Case(
        "L14",
        "claims the write (pt, scenario phrase)",
        PT,
        pt_claim,
        says="claims a write",
    ),
    Case(
        "L14",
        "answer is not the closing reply",
        WRITE,
        answer("I reached the step limit. Shall I continue?"),
        says="not the closing reply",
    ),
    Case(
        "L14",
        "canned limit sentence, no closing call",
        READ,
        stop_after_tools(3, "Maximum rounds reached, try something simpler."),
        says="ask whether to continue",
    ),
    # L15 — no broken endings
    Case(
        "L15",
        "technical error",
        READ,
        stop_at(4, error="the loop raised RuntimeError: response still waiting for tools"),
        says="technical error",
    ),
    Case("L15", "interim half sentence", READ, interim_answer(4), says="half sentence"),
    Case(
        "L15",
        "interim joined with debug lines",
        READ,
        interim_answer(4, "\n[debug] round 3/2, tools pending: get_week_plan"),
        says="half sentence",
    ),
    Case(
        "L15",
        "raw provider error shown",
        READ,
        stop_at(4, RAW_ERROR),
        says="technical error",
    ),
    Case(
        "L15",
        "traceback shown",
        READ,
        stop_at(4, "Traceback (most recent call last):\n  File \"app.py\", line 3\nKeyError: 'x'"),
        says="technical error",
    ),
    Case(
        "L15",
        "exception repr shown",
        READ,
        stop_at(4, "Sorry: RateLimitError('rate limited, retry later')"),
        says="technical error",
    ),
    Case("L15", "empty answer", READ, stop_at(4, ""), says="empty"),
    Case(
        "L15",
        "no content",
        READ,
        stop_at(4, "The provider returned no content."),
        says="generic error",
    ),
    # Anthropic rules
    Case(
        "anthropic.tools_declared",
        "tools dropped",
        ONE,
        request(2, no_tools),
        providers=("anthropic",),
    ),
    Case(
        "anthropic.results_first",
        "text first",
        ONE,
        request(2, text_before_results),
        providers=("anthropic",),
    ),
    Case(
        "anthropic.thinking_unchanged",
        "signature changed",
        THINKING,
        request(2, change_signature),
        providers=("anthropic",),
    ),
    Case(
        "anthropic.thinking_unchanged",
        "thinking dropped",
        THINKING,
        request(2, drop_thinking),
        providers=("anthropic",),
    ),
    # Gemini rules
    Case(
        "gemini.one_candidate",
        "two candidates",
        ONE,
        lambda r, _: edit_response(r, 2, two_candidates),
        providers=("gemini",),
        says="several candidates",
    ),
    Case(
        "gemini.one_candidate",
        "asks for two",
        ONE,
        request(1, ask_two_candidates),
        providers=("gemini",),
        says="asks for several",
    ),
    Case(
        "gemini.no_afc",
        "afc header",
        ONE,
        lambda r, _: edit_headers(r, 2, {"x-goog-api-client": "google-genai-sdk/3.6.1+afc"}),
        providers=("gemini",),
    ),
    Case(
        "gemini.no_afc",
        "afc answer",
        ONE,
        request(2, afc_answer),
        providers=("gemini",),
        says="automatic function calling",
    ),
    Case(
        "gemini.content_unchanged",
        "signature dropped",
        WRITE,
        request(2, unsign),
        providers=("gemini",),
        says="signature",
    ),
    Case(
        "gemini.content_unchanged",
        "text signature changed",
        ONE,
        sign_text(1, "c2lnbmVkIG9uY2U=", "c2lnbmVkIHR3aWNl"),
        providers=("gemini",),
        says="thought signatures differ",
    ),
    Case(
        "gemini.content_unchanged",
        "text signature dropped",
        ONE,
        sign_text(1, "c2lnbmVkIG9uY2U=", ""),
        providers=("gemini",),
        says="thought signatures differ",
    ),
]


PASSES: list[tuple[str, str, tuple[Provider, ...]]] = [
    ("wire.parse", ONE, PROVIDERS),
    ("L1", PARALLEL, PROVIDERS),
    ("L2", ONE, PROVIDERS),
    ("L3", EXACT, PROVIDERS),
    ("L3", TWO, PROVIDERS),
    ("L4", PARALLEL, PROVIDERS),
    ("L5", CHAIN, PROVIDERS),
    ("L6", PARALLEL, PROVIDERS),
    ("L6", NO_IDS, ("gemini",)),
    ("L7", LONG, PROVIDERS),
    ("L7", TWO, PROVIDERS),
    ("L8", LONG, PROVIDERS),
    ("L9", TRIM, ("gemini",)),
    ("L10", REASONING, ("openai",)),
    ("L11", WRITE, PROVIDERS),
    ("L12", READ, PROVIDERS),
    ("L13", WRITE, PROVIDERS),
    ("L14", PT, PROVIDERS),
    ("L14", WRITE, PROVIDERS),
    ("L15", READ, PROVIDERS),
    ("anthropic.tools_declared", WRITE, ("anthropic",)),
    ("anthropic.results_first", PARALLEL, ("anthropic",)),
    ("anthropic.thinking_unchanged", THINKING, ("anthropic",)),
    ("openai.store_false", ONE, ("openai",)),
    ("openai.no_previous_response_id", ONE, ("openai",)),
    ("openai.reasoning_requested", ONE, ("openai",)),
    ("openai.reasoning_resent", REASONING, ("openai",)),
    ("gemini.one_candidate", ONE, ("gemini",)),
    ("gemini.no_afc", ONE, ("gemini",)),
    ("gemini.content_unchanged", WRITE, ("gemini",)),
]


@pytest.mark.parametrize(
    ("rule", "scenario", "provider"),
    [
        pytest.param(rule, scenario, p, id=f"{rule}-{scenario}-{p}")
        for rule, scenario, providers in PASSES
        for p in providers
    ],
)
def test_correct_trace_passes(runs: Runs, rule: str, scenario: str, provider: Provider) -> None:
    run = runs.get(scenario, provider)
    assert verdicts(run)[rule] == "pass", explain(findings(run))
    assert not [f for f in findings(run) if f.rule == rule]


@pytest.mark.parametrize(
    ("case", "provider"),
    [
        pytest.param(case, p, id=f"{case.rule}-{case.name}-{p}".replace(" ", "_"))
        for case in CASES
        for p in case.providers
    ],
)
def test_broken_trace_fails_with_the_rule(runs: Runs, case: Case, provider: Provider) -> None:
    bad = case.break_it(runs.get(case.scenario, provider), provider)
    found = findings(bad)
    hits = [f for f in found if f.rule == case.rule and case.says in f.message]
    assert hits, f"expected {case.rule} ({case.says!r}); got:\n{explain(found)}"
    assert verdicts(bad)[case.rule] == "fail"
    for hit in hits:  # the evidence: where (call or run), and what was expected and sent
        assert hit.message and (hit.expected or hit.actual or hit.path)


# Cases that only edit requests, run again on streamed replies (read back from SSE events).
STREAMED = {
    ("L5", "turn text changed"),
    ("L6", "result missing"),
    ("L11", "other result"),
    ("L12", "tool choice auto"),
    ("L13", "order in a tool result"),
    ("openai.reasoning_resent", "reasoning dropped"),
    ("anthropic.thinking_unchanged", "signature changed"),
    ("gemini.content_unchanged", "signature dropped"),
}


@pytest.mark.parametrize(
    ("case", "provider"),
    [
        pytest.param(case, p, id=f"{case.rule}-{case.name}-{p}-stream".replace(" ", "_"))
        for case in CASES
        if (case.rule, case.name) in STREAMED
        for p in case.providers
    ],
)
def test_broken_streamed_trace_fails_with_the_rule(
    runs: Runs, case: Case, provider: Provider
) -> None:
    bad = case.break_it(runs.get(case.scenario, provider, stream=True), provider)
    found = findings(bad)
    assert [f for f in found if f.rule == case.rule and case.says in f.message], explain(found)


def test_every_rule_has_a_passing_and_a_failing_case() -> None:
    assert {c.rule for c in CASES} == set(RULES)
    assert {rule for rule, _, _ in PASSES} == set(RULES)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_budget_not_reset_per_message_is_caught(runs: Runs, provider: Provider) -> None:
    """A loop whose second user message inherits a spent budget, run for real."""
    from harness.loop.contract import LoopCall, LoopResult
    from harness.loop.reference import reference_loop
    from tests.checks.support import LIBRARY

    saved = LIBRARY[TWO].history

    def shared_budget(call: LoopCall) -> LoopResult:
        return reference_loop(call if call.history == saved else replace(call, max_rounds=0))

    found = findings(runs.run(TWO, provider, False, shared_budget))
    assert [f for f in found if f.rule == "L3" and "treated as spent" in f.message], explain(found)


def test_closing_phrases_are_tunable_per_scenario(runs: Runs) -> None:
    from harness.scenario.model import ClosingPhrases

    said = "Bati no teto por hoje. Mando bala na meta depois?"
    run = closing_text(3, said)(runs.get(WRITE, "anthropic"), "anthropic")
    assert {f.message for f in findings(run) if f.rule == "L14"} == {
        "the closing answer does not ask whether to continue",
        "the closing answer does not explain the step limit",
    }
    tuned = edit_scenario(
        run,
        closing_phrases=ClosingPhrases(asks_to_continue=("mando bala",), explains_limit=("teto",)),
    )
    assert not [f for f in findings(tuned) if f.rule == "L14"]
    assert verdicts(tuned)["L14"] == "pass"


def test_closing_expectations_can_switch_a_check_off(runs: Runs) -> None:
    from harness.scenario.model import ClosingExpectation

    run = closing_text(3, "Your record is 85 kg. Should I continue?")(
        runs.get(WRITE, "openai"), "openai"
    )
    message = run.cell.scenario.messages[0]
    relaxed = replace(
        message,
        expect=replace(message.expect, closing=ClosingExpectation(explains_limit=False)),
    )
    assert not [f for f in findings(edit_scenario(run, messages=(relaxed,))) if f.rule == "L14"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_loop_that_is_not_ours_conforms_with_its_history_flattened(
    runs: Runs, provider: Provider
) -> None:
    """examples/minimal_loop.py resends saved messages as text only (tool chains left out,
    OpenAI's assistant items running together): still the selection (L7), nothing else."""
    from harness.runner import load_loop

    run = runs.run(PT, provider, False, load_loop("examples.minimal_loop:run"))
    found = findings(run)
    assert not found, explain(found)
    assert verdicts(run)["L7"] == "pass"


def test_a_loop_that_never_trims_is_caught_on_gemini(runs: Runs) -> None:
    """The same minimal loop ignores the request-size limit: L9 says so."""
    from harness.runner import load_loop

    run = runs.run(TRIM, "gemini", False, load_loop("examples.minimal_loop:run"))
    assert {f.rule for f in findings(run)} == {"L9"}


@pytest.mark.parametrize("limit", [800, 100])
def test_gemini_trimming_the_whole_saved_context_conforms(runs: Runs, limit: int) -> None:
    """At a tiny size limit the reference loop drops every old exchange: still the selection
    (L7), trimmed as L9 allows."""
    run = runs.run_scenario(replace(LIBRARY[TRIM], gemini_max_request_bytes=limit), "gemini", False)
    first = sorted(run.exchanges, key=lambda e: e.seq)[0]
    assert len(first.request_body["contents"]) == 1  # the user message alone
    found = findings(run)
    assert not found, explain(found)
    assert verdicts(run)["L7"] == verdicts(run)["L9"] == "pass"


def test_gemini_active_turn_cut_is_one_finding_of_l8(runs: Runs) -> None:
    """Without a size limit and with the context whole, trimming cannot apply: a round dropped
    from the active turn is L8's alone, and L9 is not applicable."""
    bad = request(3, drop_turn)(runs.get(CHAIN, "gemini"), "gemini")
    found = findings(bad)
    assert "L8" in {f.rule for f in found} and "L9" not in {f.rule for f in found}
    assert verdicts(bad)["L9"] == "n/a"
    assert verdicts(runs.get(CHAIN, "gemini"))["L9"] == "n/a"


def test_gemini_changed_call_is_one_finding_of_l5(runs: Runs) -> None:
    """A call changed on the way back is L5's; the Gemini rule judges signatures only."""
    bad = request(2, changed_argument)(runs.get(ONE, "gemini"), "gemini")
    rules = {f.rule for f in findings(bad)}
    assert "L5" in rules and "gemini.content_unchanged" not in rules


@pytest.mark.parametrize(
    "answer_text",
    [
        "Your log shows no errors: bench press went up 2.5 kg.",
        "I hit an error in my reasoning earlier; the corrected plan is 3x5 at 80 kg.",
        "HTTP is how apps talk; your squat is 120 kg.",
        "The ValueError in your spreadsheet aside, your record is 150 kg.",
    ],
)
def test_ordinary_answers_that_mention_errors_are_not_technical(
    runs: Runs, answer_text: str
) -> None:
    run = runs.get(ONE, "anthropic")
    changed = closing_or_final_answer(run, answer_text)
    assert not [f for f in findings(changed) if f.rule == "L15"], explain(findings(changed))


def closing_or_final_answer(run: object, value: str) -> object:
    """The final reply says `value`, and that is the answer handed back."""
    from tests.checks.breaks import closing_text

    return closing_text(2, value)(run, "anthropic")  # type: ignore[arg-type]


def test_l13_is_not_applicable_without_a_closing_call(runs: Runs) -> None:
    """A loop that stopped at the limit without a closing call fails L12; L13 has nothing to
    judge (it used to say pass)."""
    bad = stop_at(3, "Maximum rounds reached.")(runs.get(WRITE, "anthropic"), "anthropic")
    assert verdicts(bad)["L12"] == "fail" and verdicts(bad)["L13"] == "n/a"
    assert verdicts(runs.get(WRITE, "anthropic"))["L13"] == "pass"


def test_l14_judges_a_loop_that_counts_its_budget_its_own_way(runs: Runs) -> None:
    """Stopping after running the tools `budget` times, with the model still asking, uses the
    whole budget: the answer is judged, and a good one passes."""
    text = "I reached the step limit for this answer; the week plan is not read yet. Continue?"
    good = stop_after_tools(3, text)(runs.get(READ, "anthropic"), "anthropic")
    assert verdicts(good)["L14"] == "pass"
    assert not [f for f in findings(good) if f.rule == "L14"], explain(findings(good))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_start_on_the_reply_after_a_chain_is_a_legal_selection(
    runs: Runs, provider: Provider
) -> None:
    """The chain (request and results) is left out whole: nothing of it is cut."""
    changed = requests((1, 2), prepend_chain_end)(runs.get(LONG, provider), provider)
    assert not [f for f in findings(changed) if f.rule == "L7"], explain(findings(changed))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_later_cut_is_a_legal_selection(runs: Runs, provider: Provider) -> None:
    """L7 is a property, not the reference loop's algorithm: starting one message later (a
    shorter suffix that cuts no tool chain) is a selection the design allows."""
    changed = requests((1, 2), drop_first_context)(runs.get(LONG, provider), provider)
    assert not [f for f in findings(changed) if f.rule == "L7"], explain(findings(changed))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_sending_none_of_the_saved_chat_is_a_legal_selection(
    runs: Runs, provider: Provider
) -> None:
    """ "At most the last 20" includes none: the second query sending no saved chat is legal."""
    run = runs.get(TWO, provider)
    changed = requests((4, 5, 6), lambda b, pr, _: drop_context(b, pr, text(run, 1)))(run, provider)
    assert not [f for f in findings(changed) if f.rule == "L7"], explain(findings(changed))
