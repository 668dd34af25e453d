"""One headline per defect (`harness.headlines`): each causal relation groups what it names
and leaves an unrelated finding as a headline of its own; the issue's three examples; and every
deliberately faulty loop (`tests/faulty_loops`) gives exactly one headline."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.findings import Finding
from harness.headlines import (
    RELATIONS,
    SAME_RULE,
    CallSite,
    Headline,
    Trail,
    group,
    matches,
    place,
    title_of,
    titled,
)


def f(rule: str, call: int | None = None, query: int | None = 0, message: str = "m") -> Finding:
    return Finding(rule=rule, call=call, query=query, message=f"{rule}: {message}")


def shape(heads: list[Headline[Finding]]) -> list[tuple[str, list[str]]]:
    return [(h.finding.rule, [c.finding.rule for c in h.consequences]) for h in heads]


# (relation, the headline, a finding it explains, an unrelated finding that stays a headline)
RELATION_CASES: list[tuple[str, Finding, Finding, Finding]] = [
    ("same rule", f("L6", 2), f("L6", 3), f("L4", 3)),
    ("stored state", f("openai.no_previous_response_id", 2), f("L8", 2), f("L13", 4)),
    ("stored state", f("openai.no_previous_response_id", 2), f("L15", 3), f("L12", 3)),
    (
        "state left with the API",
        f("openai.store_false", 1),
        f("openai.reasoning_requested", 1),
        f("L3", 2),
    ),
    ("stored state", f("L10", 1), f("api.O4", 2), f("L9", 2)),
    ("context cut", f("L8", 1), f("L6", 1), f("L4", 1)),
    ("context cut", f("L9", 2), f("L7", 2), f("L14", 3)),
    ("round count", f("L3", 2), f("L1", 3), f("L5", 3)),
    ("round count", f("L1", 1), f("L3", 2), f("L6", 2)),
    ("round count", f("L3", 3), f("L12", 4), f("anthropic.results_first", 4)),
    ("step-limit handling", f("L11", 3), f("L13", 4), f("L4", 2 + 2)),
    ("step-limit handling", f("L11", 3), f("L14", 4), f("gemini.one_candidate", 4)),
    ("step-limit handling", f("L12", 3), f("L15", 3), f("L7", 4)),
    ("closing order", f("L13", 4), f("L11", 5), f("L5", 5)),
    ("answer replaced", f("L14", 4), f("L2", 4), f("L9", 5)),
    ("closing call without tools", f("anthropic.tools_declared", 4), f("L12", 4), f("L1", 4)),
    ("automatic function calling", f("gemini.no_afc", 1), f("L6", 2), f("L13", 2)),
    ("rejected request", f("L6", 2), f("api.E2", 2), f("L12", 2)),
    ("failed call", f("api.E3", 1), f("L15", 1), f("L7", 2)),
    ("failed call", f("api.E1", 2), f("harness.loop_error"), f("L11", 3)),
    ("unfinished round", f("L1", 1), f("harness.loop_error"), f("L9", 2)),
    ("expectations", f("L4", 1), f("expect.rounds"), f("L9", 2)),
    ("past the script", f("L3", 2), f("script.exhausted", query=None), f("L9", 3)),
]


def test_every_relation_has_a_case() -> None:
    named = {case[0] for case in RELATION_CASES}
    assert named == {r.name for r in RELATIONS} | {SAME_RULE.name}


@pytest.mark.parametrize(
    ("relation", "cause", "effect", "unrelated"),
    RELATION_CASES,
    ids=[f"{c[0]}:{c[1].rule}->{c[2].rule}" for c in RELATION_CASES],
)
def test_a_relation_groups_what_it_names_and_nothing_else(
    relation: str, cause: Finding, effect: Finding, unrelated: Finding
) -> None:
    heads = group([effect, unrelated, cause])  # given out of order: grouping sorts them
    assert shape(heads)[0] == (cause.rule, [effect.rule])
    assert heads[0].consequences[0].relation.name == relation
    assert heads[0].consequences[0].cause is cause
    assert [h.finding for h in heads[1:]] == [unrelated]


def test_a_finding_is_never_explained_across_user_messages() -> None:
    heads = group([f("L3", 2, query=0), f("L1", 5, query=1)])
    assert shape(heads) == [("L3", []), ("L1", [])]


def test_two_independent_defects_are_two_headlines_with_their_own_consequences() -> None:
    found = [f("L6", 2), f("api.E2", 2), f("L13", 4), f("L11", 4), f("expect.ending")]
    assert shape(group(found)) == [("L6", ["api.E2", "expect.ending"]), ("L11", ["L13"])]


def test_consequences_chain_through_named_relations() -> None:
    """L6 → the API's rejection → the broken ending: each link is its own relation."""
    heads = group([f("L15", 2), f("api.E2", 2), f("L6", 2)])
    assert shape(heads) == [("L6", ["api.E2", "L15"])]
    links = [(c.cause.rule, c.relation.name) for c in heads[0].consequences]
    assert links == [("L6", "rejected request"), ("api.E2", "failed call")]


def test_a_lone_expectation_or_api_rejection_is_its_own_headline() -> None:
    assert shape(group([f("expect.ending")])) == [("expect.ending", [])]
    assert shape(group([f("api.script", 3), f("expect.tools")])) == [
        ("api.script", ["expect.tools"])
    ]


def test_every_finding_appears_exactly_once() -> None:
    found = [f(r, c) for r, c in [("L5", 2), ("L6", 2), ("L12", 3), ("L3", 1), ("L9", 1)]]
    found += [f("expect.rounds"), f("harness.loop_error", query=None)]
    heads = group(found)
    flat = [x for h in heads for x in h.findings]
    assert sorted(map(id, flat)) == sorted(map(id, found))


# ---- placing ------------------------------------------------------------------------------


TRAIL = Trail(
    calls=[
        CallSite(number=1, query=0),
        CallSite(number=2, query=0, error="messages.1: tool_use ids were found without results"),
        CallSite(number=3, query=1),
    ],
    query_errors=[None, "RuntimeError: boom"],
)


def test_findings_sort_by_query_then_call_and_callless_ones_after_their_query() -> None:
    found = [
        f("expect.ending", query=0),
        f("L4", 3, query=None),
        f("L2", 1, query=None),
        f("L1", None, query=1),
    ]
    heads = group(found, TRAIL)
    assert [h.finding.rule for h in heads] == ["L2", "L4", "L1"]
    assert [c.finding.rule for c in heads[0].consequences] == ["expect.ending"]


def test_an_api_rejection_is_placed_at_the_call_whose_error_it_quotes() -> None:
    rejection = Finding(
        rule="api.E2",
        message="the API rejected the request (400): messages.1: tool_use ids were found "
        "without results",
    )
    where = place(rejection, TRAIL)
    assert (where.query, where.call) == (0, 2)


def test_the_loops_error_is_placed_at_the_query_that_ended_in_it() -> None:
    crash = Finding(rule="harness.loop_error", message="RuntimeError: boom")
    assert place(crash, TRAIL).query == 1
    assert place(Finding(rule="harness.loop_error", message="other"), TRAIL).query is None


def test_at_one_call_the_request_s_past_comes_before_the_round_and_the_reaction() -> None:
    found = [f("expect.ending"), f("L15", 2), f("api.O4", 2), f("L5", 2), f("L10", 2)]
    assert shape(group(found))[0][0] == "L10"


# ---- the examples -----------------------------------------------------------------


def test_previous_response_id_alone_is_one_headline() -> None:
    found = [
        f("expect.ending"),
        f("api.O4", 2),
        f("L5", 2),
        f("L6", 2),
        f("L8", 2),
        f("L10", 1),
        f("L15", 2),
        f("openai.store_false", 1),
        f("openai.no_previous_response_id", 2),
        f("openai.reasoning_resent", 2),
    ]
    heads = group(found)
    assert len(heads) == 1
    assert heads[0].finding.rule == "L10"  # the first at call 1 (`PRECEDENCE`)
    assert {c.relation.name for c in heads[0].consequences} <= {
        "stored state",
        "same rule",
        "expectations",
    }
    assert len(heads[0].findings) == len(found)


def test_letting_the_api_store_explains_no_ending_of_a_loop_that_resends_everything() -> None:
    """A framework's defaults on OpenAI at the step limit: no store: false from call 1 (it
    resends everything, so nothing is lost by it), and at call 2 it runs the pending request
    and raises. The broken ending and the expectations follow from the round count, not from
    the storing: two headlines."""
    found = [
        f("openai.store_false", 1),
        f("openai.store_false", 2),
        f("openai.reasoning_requested", 1),
        f("L3", 2),
        f("L11", 2),
        f("L1", 2),
        f("L12"),
        f("L15"),
        f("expect.ending"),
        f("expect.not_run"),
    ]
    assert shape(group(found)) == [
        ("openai.store_false", ["openai.reasoning_requested", "openai.store_false"]),
        ("L3", ["L11", "L1", "L12", "L15", "expect.ending", "expect.not_run"]),
    ]


def test_an_off_by_one_budget_is_one_headline() -> None:
    heads = group([f("L1", 3), f("L3", 3), f("expect.rounds")])
    assert shape(heads) == [("L3", ["L1", "expect.rounds"])]


def test_one_wrong_tool_result_is_one_headline() -> None:
    heads = group([f("L13", 4), f("L11", 4)])
    assert shape(heads) == [("L11", ["L13"])]


# ---- titles -------------------------------------------------------------------------------


TITLES = {"L10": "OpenAI keeps no state", "api": "Accepted by the API", "expect": "Expectations"}


@pytest.mark.parametrize(
    ("rule", "title"),
    [
        ("L10", "OpenAI keeps no state"),
        ("api.O4", "Accepted by the API"),
        ("expect.ending", "Expectations"),
        ("api", "Accepted by the API"),
        ("L99", ""),
        ("script.exhausted", ""),
    ],
)
def test_title_of_a_rule_or_its_group(rule: str, title: str) -> None:
    assert title_of(rule, TITLES) == title


def test_titled_shows_the_id_then_its_title() -> None:
    assert titled("L10", TITLES) == "L10 [OpenAI keeps no state]"
    assert titled("L99", TITLES) == "L99"


@pytest.mark.parametrize(
    ("rule", "patterns", "expected"),
    [
        ("L12", ("L*",), True),
        ("L", ("L*",), False),
        ("api.script.exhausted", ("api.*",), True),
        ("apix", ("api.*",), False),
        ("anything", ("*",), True),
    ],
)
def test_patterns(rule: str, patterns: tuple[str, ...], expected: bool) -> None:
    assert matches(rule, patterns) is expected


# ---- every faulty loop: one headline ---------------------------------------------------------

# Where the trace cannot tell the fault's rule from the one found beside it at the same call, the
# headline is the earlier in `PRECEDENCE`, and the fault's rule is listed under it.
SAME_CALL_HEADLINE = {
    # the write ran at the limit call: counted as a round over the budget first (L3), then L11
    "a pending write executed after the limit": "L3",
    # the tool's error left its round unfinished at call 1 (L1); the error shown follows (L15)
    "a tool error raised to the person": "L1",
    # the order put in the pending result is first a wrong pending result (L11), then L13
    "the closing order in a tool result": "L11",
}


def _faulty_rows() -> Iterator[pytest.ParameterSet]:
    from tests.faulty_loops.test_faulty_loops import FAULTS

    for fault in FAULTS:
        for provider in fault.providers:
            yield pytest.param(fault, provider, id=f"{fault.name}-{provider}".replace(" ", "-"))


@pytest.fixture(scope="module")
def scripted() -> Iterator[object]:
    from harness.sources import ScriptedSource
    from tests.faulty_loops.test_faulty_loops import SCENARIOS

    source = ScriptedSource(SCENARIOS.values(), {})
    yield source
    source.close()


@pytest.mark.parametrize(("fault", "provider"), list(_faulty_rows()))
def test_each_faulty_loop_gives_one_headline(
    scripted: object, fault: object, provider: str
) -> None:
    from harness.headlines import run_trail
    from harness.outcome import cell_findings
    from tests.faulty_loops.test_faulty_loops import Fault, run

    assert isinstance(fault, Fault)
    cell = run(scripted, fault.loop(), fault.scenario, provider, False)  # type: ignore[arg-type]
    found = cell_findings(cell)
    heads = group(found, run_trail(cell))
    explained = "\n".join(
        f"{h.finding.line()}\n" + "".join(f"  <- {c.finding.line()}\n" for c in h.consequences)
        for h in heads
    )
    assert len(heads) == 1, explained
    expected = SAME_CALL_HEADLINE.get(fault.name)
    assert heads[0].finding.rule in ({expected} if expected else fault.caught_by), explained
    assert fault.caught_by <= {x.rule for x in heads[0].findings}
