"""LangGraph's prebuilt ReAct agent, run by the harness in its three configurations.

Each configuration runs on the scripted source over the library's one-tool, parallel,
three-round and step-limit scenarios, on all three providers, JSON and stream. The tables
below are what was measured on the pinned versions (langgraph 1.2.24, langgraph-prebuilt
1.1.3, langchain-core 1.8.3, langchain-anthropic 1.7.10, langchain-openai 1.7.4,
langchain-google-genai 4.4.3): an upgrade that changes behaviour fails here, and the
compatibility report shows what changed.
"""

from __future__ import annotations

import ast
import inspect
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from itertools import pairwise
from typing import ClassVar

import pytest

from examples.frameworks import langgraph_agent
from examples.frameworks.langgraph_agent import FRAMEWORK
from harness import tools
from harness.chat import AssistantMessage, ToolMessage
from harness.findings import Finding
from harness.loop import LoopCall, LoopResult
from harness.loop.closing import NOT_EXECUTED_RESULT
from harness.loop.contract import Loop
from harness.outcome import cell_findings
from harness.runner import CellRun
from harness.scenario.model import Provider
from tests.checks.support import LIBRARY, Runs, explain
from tests.frameworks.overlap import patient_if_overlapping

pytest.importorskip("langgraph.prebuilt")

PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai", "gemini")
ANSWERS = ("one_tool_then_answer", "parallel_requests_one_turn", "three_round_chain")
LIMITS = (
    "limit_reached_pending_write",
    "limit_reached_pending_read",
    "limit_reached_parallel_pending",
)
CANNED = "Sorry, need more steps to process this request."

# ---- what each configuration breaks, measured -----------------------------------------------

# OpenAI defaults: ChatOpenAI leaves `store` unset and asks for no encrypted reasoning (L10).
STATEFUL = frozenset({"openai.store_false", "openai.reasoning_requested"})
# Gemini, every configuration: langchain-google-genai resends the model's functionCall parts and
# its functionResponse parts without their ids (no setting keeps them): L5.
NO_GEMINI_IDS = frozenset({"L5"})
# Defaults at the budget: the agent node replaces the last turn, still asking for tools, with
# "Sorry, need more steps to process this request." — pending requests neither run nor
# answered, no closing call, and that sentence is the answer.
CANNED_ENDING = frozenset({"L11", "L12", "L14", "expect.ending"})
# Wrapped on Gemini: the closing request carries the "Not executed" results without ids (as
# every Gemini result here); they answer the pending requests by position, as Gemini pairs
# them, so the lost ids are L5 alone (tests/checks/test_lost_gemini_ids.py).
# Defaults on the parallel scenario: one Send per tool call, run on a thread pool at once: L4,
# in every run (a tool run off the loop's thread waits for a partner, harness/tools.py), and
# test_defaults_run_one_turns_tools_at_once shows the cause (the runs went to several threads).
CONCURRENT = "L4"


def expected(config: str, scenario: str, provider: Provider) -> frozenset[str]:
    rules: set[str] = set()
    if provider == "openai" and config == "defaults":
        rules |= STATEFUL
    if provider == "gemini":
        rules |= NO_GEMINI_IDS
    if scenario in LIMITS and config in ("defaults", "conforming"):
        rules |= CANNED_ENDING
    if config == "defaults" and scenario == "parallel_requests_one_turn":
        rules.add(CONCURRENT)
    return frozenset(rules)


# ---- running the cells ----------------------------------------------------------------------


def limit_without_the_spare_step(call: LoopCall) -> LoopResult:
    """defaults with recursion_limit = 2 × rounds + 1, the super-steps the budget takes."""
    return langgraph_agent.run(call, recursion_limit=2 * call.max_rounds + 1)


LOOPS: dict[str, Loop] = {
    "defaults": langgraph_agent.defaults,
    "conforming": langgraph_agent.conforming,
    "wrapped": langgraph_agent.wrapped,
    "2 x rounds + 1": limit_without_the_spare_step,
}
Ran = tuple[CellRun, tuple[Finding, ...]]


class Cells:
    """Each cell runs once per module (on the check tests' scripted source); tests share it."""

    def __init__(self) -> None:
        self.runs = Runs()
        self.done: dict[tuple[str, str, Provider, bool, float], Ran] = {}

    def __call__(self, config: str, scenario: str, provider: Provider, stream: bool) -> Ran:
        """The cell's run, once per rendezvous window (tests/frameworks/overlap.py)."""
        key = (config, scenario, provider, stream, tools.RENDEZVOUS_SECONDS)
        if key not in self.done:
            run = self.runs.run(scenario, provider, stream, LOOPS[config])
            self.done[key] = (run, tuple(cell_findings(run)))
        return self.done[key]


@pytest.fixture(scope="module")
def ran() -> Iterator[Cells]:
    cells = Cells()
    yield cells
    cells.runs.close()


def cases(configs: tuple[str, ...], scenarios: tuple[str, ...]) -> list[pytest.ParameterSet]:
    return [
        pytest.param(c, s, p, stream, id=f"{c}-{s}-{p}{'-stream' if stream else ''}")
        for c in configs
        for s in scenarios
        for p in PROVIDERS
        for stream in (False, True)
    ]


ALL = cases(("defaults", "conforming", "wrapped"), ANSWERS + LIMITS)


@pytest.mark.parametrize(("config", "scenario", "provider", "stream"), ALL)
def test_a_configuration_breaks_exactly_the_measured_rules(
    ran: Cells,
    config: str,
    scenario: str,
    provider: Provider,
    stream: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    want = expected(config, scenario, provider)
    patient_if_overlapping(monkeypatch, want)
    _, found = ran(config, scenario, provider, stream)
    rules = {f.rule for f in found}
    assert rules == want, explain(list(found))


# ---- the behaviours behind the tables, stated directly -------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_defaults_run_one_turns_tools_at_once_and_conforming_one_at_a_time(
    ran: Cells, provider: Provider
) -> None:
    defaults, _ = ran("defaults", "parallel_requests_one_turn", provider, False)
    assert len({r.thread for r in defaults.tool_runs}) > 1, "defaults used one thread"
    conforming, found = ran("conforming", "parallel_requests_one_turn", provider, False)
    runs = sorted(conforming.tool_runs, key=lambda r: r.started)
    assert all(later.started >= earlier.ended for earlier, later in pairwise(runs))
    exercises = [r.arguments["exercise"] for r in runs]
    assert exercises == ["squat", "bench press", "deadlift"]  # the order the model listed
    assert "L4" not in {f.rule for f in found}


def ran_only_the_expected_tools(run: CellRun, scenario: str) -> bool:
    expect = LIBRARY[scenario].messages[0].expect
    return expect is not None and [r.name for r in run.tool_runs] == list(expect.tools)


@pytest.mark.parametrize("scenario", LIMITS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_at_the_budget_defaults_answer_with_the_canned_sentence_and_run_nothing_pending(
    ran: Cells, scenario: str, provider: Provider
) -> None:
    run, _ = ran("defaults", scenario, provider, False)
    assert run.queries[0].answer == CANNED
    assert ran_only_the_expected_tools(run, scenario)  # the pending ones stayed unrun


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_limit_of_exactly_the_budgets_steps_raises_even_when_the_last_call_answers(
    ran: Cells, provider: Provider
) -> None:
    run, found = ran("2 x rounds + 1", "exactly_max_rounds_then_answer", provider, False)
    query = run.queries[0]
    assert query.answer == "" and (query.error or "").startswith("GraphRecursionError")
    assert len(query.exchanges) == LIBRARY["exactly_max_rounds_then_answer"].max_rounds + 1
    assert {"L15", "expect.ending"} <= {f.rule for f in found}
    run, found = ran("defaults", "exactly_max_rounds_then_answer", provider, False)
    assert run.queries[0].error is None  # one step more: the answer on the last call arrives
    assert not {f.rule for f in found} - STATEFUL - NO_GEMINI_IDS, explain(list(found))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_at_the_budget_that_limit_raises_instead_of_the_canned_sentence(
    ran: Cells, provider: Provider
) -> None:
    run, found = ran("2 x rounds + 1", "limit_reached_pending_write", provider, False)
    assert (run.queries[0].error or "").startswith("GraphRecursionError")
    assert [r.name for r in run.tool_runs] == ["get_personal_record"]  # save_goal not run
    assert {"L11", "L12", "L15"} <= {f.rule for f in found}


@pytest.mark.parametrize("scenario", LIMITS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_wrapped_answers_pending_requests_not_executed_then_closes_without_tools(
    ran: Cells, scenario: str, provider: Provider
) -> None:
    run, _ = ran("wrapped", scenario, provider, False)
    query = run.queries[0]
    assert query.error is None
    pending = [
        m for m in run.chat if isinstance(m, ToolMessage) and m.content == NOT_EXECUTED_RESULT
    ]
    asked = [m for m in run.chat if isinstance(m, AssistantMessage) and m.tool_calls][-1]
    assert [m.call_id for m in pending] == [c.id for c in asked.tool_calls]
    assert ran_only_the_expected_tools(run, scenario)
    assert "step limit" in query.answer


@pytest.mark.parametrize("provider", ("anthropic", "openai"))
@pytest.mark.parametrize("config", ("conforming", "wrapped"))
def test_a_failing_tool_goes_back_as_an_error_result(
    ran: Cells, config: str, provider: Provider
) -> None:
    run, found = ran(config, "answer_after_failing_tool", provider, False)
    assert not found, explain(list(found))
    assert [r.is_error for r in run.tool_runs] == [True]


def test_the_framework_lists_its_configurations_and_traps() -> None:
    assert FRAMEWORK.name == "langgraph"
    assert [c.name for c in FRAMEWORK.configs] == ["defaults", "conforming", "wrapped"]
    for config in FRAMEWORK.configs:
        module, function = config.loop.split(":")
        assert module == langgraph_agent.__name__ and callable(getattr(langgraph_agent, function))
        assert config.providers == PROVIDERS
    assert len(FRAMEWORK.traps) >= 3


# ---- the traps, verified on the installed versions ------------------------------------------


def test_google_genai_replaces_a_client_passed_to_the_constructor() -> None:
    from google import genai
    from langchain_google_genai import ChatGoogleGenerativeAI

    passed = genai.Client(api_key="dummy", http_options={"base_url": "http://127.0.0.1:9"})
    model = ChatGoogleGenerativeAI(model="gemini-3-flash", google_api_key="dummy", client=passed)
    assert model.client is not passed  # why the adapter passes base_url= instead


def test_anthropic_tool_choice_none_as_a_string_forces_a_tool_named_none() -> None:
    from langchain_anthropic import ChatAnthropic

    model = ChatAnthropic(model="claude-sonnet-4-6", api_key="dummy", base_url="http://127.0.0.1:9")
    tool = {"name": "lookup", "description": "d", "input_schema": {"type": "object"}}
    assert model.bind_tools([tool], tool_choice="none").kwargs["tool_choice"] == {
        "type": "tool",
        "name": "none",
    }
    bound = model.bind_tools([tool], tool_choice=langgraph_agent.NO_TOOLS["anthropic"])
    assert bound.kwargs["tool_choice"] == {"type": "none"}


@pytest.mark.parametrize("handled", [False, True])
def test_toolnode_sends_a_tool_exception_back_only_when_the_tool_handles_it(
    handled: bool,
) -> None:
    from langchain_core.messages import AIMessage
    from langchain_core.tools import StructuredTool, ToolException
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    def unreachable() -> str:
        raise ToolException("the log is unreachable")

    tool = StructuredTool.from_function(
        func=unreachable,
        name="log",
        description="d",
        args_schema={"type": "object", "properties": {}},
        handle_tool_error=handled,
    )
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode([tool]))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    asked = AIMessage(content="", tool_calls=[{"id": "c1", "name": "log", "args": {}}])
    if not handled:
        with pytest.raises(ToolException):
            graph.compile().invoke({"messages": [asked]})
        return
    result = graph.compile().invoke({"messages": [asked]})["messages"][-1]
    assert (result.status, result.content) == ("error", "the log is unreachable")


def test_the_adapter_reads_no_private_attribute() -> None:
    tree = ast.parse(inspect.getsource(langgraph_agent))
    private = [
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
    ]
    assert private == []


def test_an_error_in_the_graph_is_returned_not_shown(ran: Cells) -> None:
    run, found = ran("defaults", "provider_keeps_failing", "anthropic", False)
    query = run.queries[0]
    assert query.answer == "" and query.error and "RateLimitError" in query.error
    assert not found, explain(list(found))


class _TraceCollector(BaseHTTPRequestHandler):
    """A stand-in LangSmith endpoint on 127.0.0.1 that records what reaches it."""

    received: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self._answer()

    def _answer(self) -> None:
        self.received.append(f"{self.command} {self.path}")
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def langsmith_endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """LANGSMITH_TRACING=true in the environment, its endpoint a local collector."""
    from langsmith.utils import get_env_var

    server = HTTPServer(("127.0.0.1", 0), _TraceCollector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    monkeypatch.setenv("LANGCHAIN_TRACING_V2", "true")  # the offline switches set it false
    monkeypatch.setenv("LANGSMITH_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setenv("LANGSMITH_API_KEY", "dummy")
    get_env_var.cache_clear()  # langsmith caches what it read from the environment
    _TraceCollector.received = []
    yield _TraceCollector.received
    server.shutdown()
    server.server_close()
    monkeypatch.undo()
    get_env_var.cache_clear()


def test_langsmith_tracing_in_the_environment_sends_nothing_from_the_adapter(
    ran: Cells,
    langsmith_endpoint: list[str],
) -> None:
    from langchain_core.runnables import RunnableLambda
    from langchain_core.tracers.langchain import wait_for_all_tracers

    run = ran.runs.run("one_tool_then_answer", "anthropic", False, langgraph_agent.defaults)
    wait_for_all_tracers()
    assert run.queries[0].error is None
    assert langsmith_endpoint == []
    RunnableLambda(lambda x: x).invoke(1)  # the same process, traced as the environment says
    wait_for_all_tracers()
    assert any("/runs" in request for request in langsmith_endpoint)
