"""The litellm loop on the scripted source: what conforms, and exactly which rules the docs'
loop breaks — measured on litellm 1.110.2 against the three native APIs. A litellm upgrade that
changes behaviour fails here with the cell and its findings."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from harness.chat import UserMessage
from harness.findings import Finding
from harness.loop import LoopCall, LoopResult
from harness.outcome import cell_findings
from harness.runner import Cell, CellRun, load_loop, run_cell
from harness.scenario.model import Provider
from tests.checks.support import explain
from tests.frameworks import scripted
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

pytest.importorskip("litellm", reason="the frameworks extra is not installed")

from examples.frameworks import litellm_agent  # noqa: E402

PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai", "gemini")

# Sent through litellm's Responses bridge, no `store` and no `include` unless the loop asks.
STATEFUL = frozenset({"openai.store_false", "openai.reasoning_requested"})
# The docs' loop with a max-steps count: the last turn's tools run (the pending write too), no
# closing call follows, and the last reply's interim text ("Saving your goal now.") is shown.
RAN_PENDING_SHOWED_INTERIM = frozenset(
    {"L1", "L3", "L11", "L12", "L14", "L15", "expect.ending", "expect.rounds", "expect.tools"}
)


def expected(config: str, provider: Provider, scenario: str) -> frozenset[str]:
    """The rules a cell breaks, as measured; empty means the cell conforms."""
    if config == "conforming":
        return frozenset()
    rules = set(STATEFUL if provider == "openai" else ())
    if scenario in LIMITS:
        rules |= RAN_PENDING_SHOWED_INTERIM
        if scenario in PENDING_MUST_NOT_RUN:
            rules.add("expect.not_run")
    return frozenset(rules)


LOOP = "examples.frameworks.litellm_agent:{}"


@pytest.fixture(scope="module", autouse=True)
def _close_source() -> Iterator[None]:
    yield
    close_source()


def ran(config: str, provider: Provider, scenario: str, stream: bool = False) -> Ran:
    return scripted.ran(LOOP.format(config), provider, scenario, stream)


@pytest.mark.parametrize(
    ("config", "provider", "scenario", "stream"), list(cells(litellm_agent.FRAMEWORK))
)
def test_each_cell_breaks_exactly_the_measured_rules(
    config: str, provider: Provider, scenario: str, stream: bool
) -> None:
    _, found = ran(config, provider, scenario, stream)
    assert {f.rule for f in found} == expected(config, provider, scenario), explain(list(found))


def test_defaults_run_the_pending_write_and_show_the_interim_text() -> None:
    run, _ = ran("defaults", "anthropic", "limit_reached_pending_write", False)
    (query,) = run.queries
    assert [t.name for t in query.tool_runs] == ["get_personal_record", "save_goal"]
    assert query.error is None and query.answer == "Saving your goal now."


def test_conforming_answers_the_pending_write_and_closes_with_text() -> None:
    run, found = ran("conforming", "gemini", "limit_reached_pending_write", False)
    (query,) = run.queries
    assert [t.name for t in query.tool_runs] == ["get_personal_record"]
    assert query.error is None and "step limit" in query.answer
    assert not found, explain(list(found))


def _gemini_at_the_bare_base_url(call: LoopCall) -> LoopResult:
    """What the gemini/ route does with google-genai's base URL, without the adapter's fix."""
    import litellm

    chat = (*call.history, UserMessage(text=call.message))
    try:
        litellm.completion(
            model=f"gemini/{call.model}",
            messages=[{"role": "user", "content": call.message}],
            api_base=call.base_url,
            api_key=call.api_key,
        )
    except Exception as exc:
        return LoopResult(answer="", chat=chat, error=str(exc))
    return LoopResult(answer="reached", chat=chat)


def test_the_gemini_route_needs_the_api_version_in_api_base() -> None:
    cell = Cell(scenario=SCENARIOS["one_tool_then_answer"], provider="gemini", stream=False)
    bare = run_cell(cell, source(), _gemini_at_the_bare_base_url, run_id="litellm-bare")
    (query,) = bare.queries
    assert query.error is not None and "no API at POST /models/" in query.error
    fixed, found = ran("conforming", "gemini", "one_tool_then_answer", False)
    assert fixed.queries[0].error is None and not found, explain(list(found))


def test_the_framework_declares_every_provider_and_its_traps() -> None:
    framework = litellm_agent.FRAMEWORK
    assert [c.name for c in framework.configs] == ["defaults", "conforming"]
    assert all(set(c.providers) == set(PROVIDERS) for c in framework.configs)
    assert any("LITELLM_LOCAL_MODEL_COST_MAP" in trap for trap in framework.traps)
    for config in framework.configs:
        assert callable(load_loop(config.loop))


SWITCHES = ("LITELLM_LOCAL_MODEL_COST_MAP", "LITELLM_OFFLINE_MODE")


@pytest.mark.parametrize(
    ("switch", "hosts"),
    [
        ({}, ["raw.githubusercontent.com"]),
        ({"LITELLM_LOCAL_MODEL_COST_MAP": "True"}, []),
        ({"LITELLM_OFFLINE_MODE": "true"}, []),
    ],
    ids=["no-switch", "local-cost-map", "offline-mode"],
)
def test_importing_litellm_fetches_the_cost_map_unless_told_not_to(
    switch: dict[str, str], hosts: list[str]
) -> None:
    env: dict[str, str | None] = {
        "LITELLM_LOCAL_MODEL_COST_MAP": None,
        "LITELLM_OFFLINE_MODE": None,
    }
    assert host_lookups("import litellm", {**env, **switch}) == hosts


def _with_openai_client_only(route: str) -> Callable[[LoopCall], LoopResult]:
    """litellm given the cell's OpenAI client and no api_base."""

    def loop(call: LoopCall) -> LoopResult:
        import litellm

        reply = litellm.completion(
            model=route + call.model,
            messages=[{"role": "user", "content": call.message}],
            client=call.client,
            api_key=call.api_key,
        )
        chat = (*call.history, UserMessage(text=call.message))
        return LoopResult(answer=reply.choices[0].message.content or "", chat=chat)

    return loop


@pytest.mark.parametrize("route", ["openai/", "openai/responses/"])
def test_a_passed_openai_client_is_used_without_api_base(
    route: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The older claim — litellm ignores a passed client unless api_base is given — does not
    hold on 1.110.2 for these routes: the request reaches the client's base URL, even with
    OPENAI_BASE_URL naming another (a closed port)."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    cell = Cell(scenario=SCENARIOS["one_tool_then_answer"], provider="openai", stream=False)
    run = run_cell(cell, source(), _with_openai_client_only(route), run_id=f"client-{len(route)}")
    assert run.exchanges and run.queries[0].error is None, run.queries[0].error


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_conforming_trims_old_gemini_exchanges_over_the_size_limit(stream: bool) -> None:
    """L9 (`gemini_request_over_size_limit`, not a CI scenario of the matrix): the defaults
    send the whole history; conforming drops whole old exchanges until under the limit."""
    from tests.checks.support import Runs

    runs = Runs()
    try:
        scenario = "gemini_request_over_size_limit"
        defaults = runs.run(scenario, "gemini", stream, load_loop(LOOP.format("defaults")))
        kept = runs.run(scenario, "gemini", stream, load_loop(LOOP.format("conforming")))
    finally:
        runs.close()
    assert "L9" in {f.rule for f in cell_findings(defaults)}
    assert cell_findings(kept) == [], explain(cell_findings(kept))
