"""A corpus of real-shaped loops: each modelled on a common public pattern (named in its
docstring), run through the scripted emulator, with the exact set of rule ids it must get and
the headline rules those findings group under (`harness.headlines`). Correct loops that do
things differently from the reference loop must get no finding at all.

The expectations follow the rules as written (`loop-rules.md`). Where the harness disagrees
— a false alarm on a correct loop, or a miss on a broken one — the row stays as the rules say
and is marked `xfail(strict=True)` with the harness defect (`defect` for the findings,
`headline_defect` for the grouping), so fixing the harness turns it into a pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from itertools import count
from pathlib import Path

import pytest

from harness.findings import Finding
from harness.loop.contract import Loop
from harness.outcome import cell_findings
from harness.runner import Cell, CellRun, run_cell
from harness.scenario import Scenario, load_scenario
from harness.scenario.model import Provider
from harness.sources import ScriptedSource
from tests.checks.support import explain
from tests.conftest import library
from tests.corpus import errors, limits, shapes, stateful, streams

try:
    from harness.headlines import group, run_trail
except ImportError:  # pragma: no cover - the grouping is being built beside this corpus
    group = run_trail = None  # type: ignore[assignment]

ALL: tuple[Provider, ...] = ("anthropic", "openai", "gemini")
OWN_SCENARIOS = Path(__file__).parent / "scenarios"
# What a request the API rejects leads to: the loop admits the provider's error, which its own
# request caused (L15), so the query ends in an error instead of its expected ending.
REJECTED = frozenset({"L15", "expect.ending"})


@dataclass(frozen=True, kw_only=True)
class Row:
    name: str
    pattern: str  # the public pattern, in a few words (the loop's docstring says more)
    loop: Loop
    scenario: str
    providers: tuple[Provider, ...]
    streams: tuple[bool, ...] = (False,)
    rules: frozenset[str] = frozenset()  # exactly these rule ids; empty for a correct loop
    headlines: frozenset[str] = frozenset()  # the rule ids of the headlines
    defect: str = ""  # the harness defect that makes `rules` fail today (xfail)
    headline_defect: str = ""  # the same for `headlines`


def rules(*ids: str) -> frozenset[str]:
    return frozenset(ids)


CORPUS: tuple[Row, ...] = (
    # ---- broken loops: each caught with its rules -----------------------------------------
    Row(
        name="stateful Responses chaining",
        pattern="previous_response_id, store unset (Agents SDK, pydantic-ai recordings)",
        loop=stateful.chained_responses,
        scenario="limit_reached_pending_read",
        providers=("openai",),
        streams=(False, True),
        rules=rules(
            "openai.store_false", "openai.no_previous_response_id", "openai.reasoning_requested"
        ),
        headlines=rules("openai.store_false"),
    ),
    Row(
        name="canned limit sentence",
        pattern='"Maximum rounds reached, try something simpler." at the budget',
        loop=limits.canned_limit_sentence,
        scenario="limit_reached_pending_read",
        providers=("anthropic",),
        rules=rules("L11", "L12", "L14", "expect.ending"),
        headlines=rules("L11"),
    ),
    Row(
        name="raise at the limit",
        pattern="pydantic-ai UsageLimitExceeded: pending write runs, next request raises",
        loop=limits.raise_at_the_limit,
        scenario="limit_reached_pending_write",
        providers=("openai",),
        rules=rules(
            "L1",
            "L3",
            "L11",
            "L12",
            "L15",
            "harness.loop_error",
            "expect.ending",
            "expect.rounds",
            "expect.tools",
            "expect.not_run",
        ),
        headlines=rules("L3"),
    ),
    Row(
        name="interim texts joined with debug lines",
        pattern="CLI agent returning its printed transcript, no closing call",
        loop=limits.transcript_at_the_limit,
        scenario="limit_reached_pending_read",
        providers=("gemini",),
        rules=rules("L11", "L12", "L14", "L15", "expect.ending"),
        headlines=rules("L11"),
    ),
    Row(
        name="interim texts and debug lines before the closing reply",
        pattern="CLI agent returning its printed transcript, closing call made",
        loop=limits.transcript_with_closing_call,
        scenario="limit_reached_pending_read",
        providers=("gemini",),
        rules=rules("L2", "L14", "L15"),
        headlines=rules("L14"),
    ),
    Row(
        name="a budget fixed at 10 where the app's is 3",
        pattern="MAX_TOOL_ROUNDS = 10 hard-coded",
        loop=limits.budget_fixed_at_ten,
        scenario="budget_three_model_keeps_asking",
        providers=("anthropic",),
        rules=rules("L3", "L11", "L12", "L13", "expect.rounds", "expect.tools"),
        headlines=rules("L3"),
    ),
    Row(
        name="raw provider error shown",
        pattern='except Exception as exc: return f"Error: {exc}"',
        loop=errors.raw_error_as_answer,
        scenario="provider_keeps_failing",
        providers=ALL,
        rules=rules("L15", "expect.ending"),
        headlines=rules("L15"),
    ),
    Row(
        name="results split into one Gemini content each",
        pattern="each tool's response appended as its own content (bifrost #1387)",
        loop=shapes.gemini_results_one_per_content,
        scenario="parallel_requests_one_turn",
        providers=("gemini",),
        rules=rules("L6", "api.G1") | REJECTED,
        headlines=rules("L6"),
    ),
    Row(
        name="results split into one Anthropic message each",
        pattern="each tool_result in its own user message (opencode-go-copilot #87)",
        loop=shapes.anthropic_results_one_per_message,
        scenario="parallel_requests_one_turn",
        providers=("anthropic",),
        rules=rules("L6", "api.E2") | REJECTED,
        headlines=rules("L6"),
    ),
    # ---- correct but different: no finding at all ---------------------------------------
    Row(
        name="a budget fixed at 10",
        pattern="MAX_TOOL_ROUNDS = 10 hard-coded, app budget 10, until_limit script",
        loop=limits.budget_fixed_at_ten,
        scenario="budget_ten_model_keeps_asking",
        providers=("anthropic",),
    ),
    Row(
        name="stream closed after its terminal event",
        pattern="raw httpx SSE reader that breaks at the last event",
        loop=streams.stream_closed_at_terminal_event,
        scenario="limit_reached_pending_read",
        providers=ALL,
        streams=(True,),
    ),
    Row(
        name="never streams",
        pattern="create()/generate_content() only, call.stream ignored",
        loop=shapes.never_streams,
        scenario="one_tool_then_answer",
        providers=ALL,
        streams=(True,),
    ),
    Row(
        name="each Responses call followed by its output",
        pattern="OpenAI guide: append each function_call, then its output",
        loop=shapes.openai_each_call_then_its_output,
        scenario="parallel_requests_one_turn",
        providers=("openai",),
    ),
    Row(
        name="the last 10 saved messages",
        pattern="a smaller context window, cut at a user message",
        loop=shapes.last_ten_messages,
        scenario="long_history_cut_inside_chain",
        providers=("anthropic",),
    ),
    Row(
        name="a window of 15 that opens on an assistant reply",
        pattern="history[-15:] past leading tool results",
        loop=shapes.last_fifteen_past_tool_results,
        scenario="long_history_cut_inside_chain",
        providers=("openai",),
    ),
    Row(
        name="a window of 20 that opens on the reply after a chain",
        pattern="history[-20:] past leading tool results",
        loop=shapes.last_twenty_past_tool_results,
        scenario="long_history_cut_inside_chain",
        providers=("openai",),
    ),
    Row(
        name="async on call.async_client, streamed",
        pattern="Anthropic tool-use guide, AsyncAnthropic messages.stream",
        loop=shapes.async_anthropic_streaming,
        scenario="limit_reached_pending_write",
        providers=("anthropic",),
        streams=(True,),
    ),
    Row(
        name="its own client, results worded as JSON",
        pattern="openai.OpenAI(base_url, api_key); {'status': 'ok', 'data': ...}",
        loop=shapes.own_openai_client,
        scenario="answer_after_failing_tool",
        providers=("openai",),
    ),
)


def _scenarios() -> dict[str, Scenario]:
    own = [load_scenario(path) for path in sorted(OWN_SCENARIOS.glob("*.yaml"))]
    return {s.id: s for s in [*library(), *own]}


SCENARIOS = _scenarios()
ROWS = {row.name: row for row in CORPUS}
RUN_NUMBERS = count(1)
_source: ScriptedSource | None = None


def source() -> ScriptedSource:
    global _source
    if _source is None:
        _source = ScriptedSource(SCENARIOS.values(), {})
    return _source


@pytest.fixture(scope="module", autouse=True)
def _close_source() -> Iterator[None]:
    yield
    global _source
    if _source is not None:
        _source.close()
        _source = None
    ran.cache_clear()


@cache
def ran(name: str, provider: Provider, stream: bool) -> tuple[CellRun, tuple[Finding, ...]]:
    """Each cell runs once per worker; both tests read it."""
    row = ROWS[name]
    cell = Cell(scenario=SCENARIOS[row.scenario], provider=provider, stream=stream)
    run_id = f"corpus-{next(RUN_NUMBERS)}-{provider}-{int(stream)}"
    run = run_cell(cell, source(), row.loop, run_id=run_id)
    return run, tuple(cell_findings(run))


def _slug(text: str) -> str:
    return "-".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


def _cases(defect_of: str) -> Iterator[pytest.ParameterSet]:
    for row in CORPUS:
        defect = getattr(row, defect_of)
        if defect_of == "headline_defect" and not row.rules:
            defect = defect or row.defect  # a false alarm on a correct loop is a headline too
        marks = [pytest.mark.xfail(strict=True, reason=defect)] if defect else []
        for provider in row.providers:
            for stream in row.streams:
                suffix = "-stream" if stream else ""
                yield pytest.param(
                    row.name,
                    provider,
                    stream,
                    marks=marks,
                    id=f"{_slug(row.name)}-{provider}{suffix}",
                )


@pytest.mark.parametrize(("name", "provider", "stream"), list(_cases("defect")))
def test_a_loop_gets_exactly_its_rules(name: str, provider: Provider, stream: bool) -> None:
    row = ROWS[name]
    _, found = ran(name, provider, stream)
    assert {f.rule for f in found} == row.rules, f"{row.name} ({row.pattern}):\n" + explain(
        list(found)
    )


@pytest.mark.skipif(group is None, reason="harness.headlines is not there yet")
@pytest.mark.parametrize(("name", "provider", "stream"), list(_cases("headline_defect")))
def test_a_loops_findings_group_under_its_headlines(
    name: str, provider: Provider, stream: bool
) -> None:
    row = ROWS[name]
    run, found = ran(name, provider, stream)
    heads = group(list(found), run_trail(run))
    shape = [(h.finding.rule, [c.finding.rule for c in h.consequences]) for h in heads]
    assert {h.finding.rule for h in heads} == row.headlines, f"{row.name}: {shape}"


def test_the_corpus_holds_at_least_twelve_loops_and_both_kinds() -> None:
    loops = {row.loop for row in CORPUS}
    assert len(loops) >= 12
    assert any(not row.rules for row in CORPUS) and any(row.rules for row in CORPUS)
    for row in CORPUS:
        assert bool(row.rules) == bool(row.headlines), row.name
