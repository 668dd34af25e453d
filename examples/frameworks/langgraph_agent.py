"""LangGraph's prebuilt ReAct agent (`create_react_agent`) on the harness loop contract.

The agent is the graph LangGraph's quick start builds: an `agent` node that calls a LangChain
chat model with the tools bound, and a `tools` node (`ToolNode`) that runs what it asked for,
cycling until the model answers without tools. The chat models: `ChatAnthropic`, `ChatOpenAI`
on the Responses API, `ChatGoogleGenerativeAI`. Three configurations:

- `defaults`: the quick start, wired to the endpoint, its step limit (`recursion_limit`) set from
  the round budget (`steps_for_rounds`);
- `conforming`: the same graph with the public settings the loop rules ask for (tools one at a
  time, `store: false` and encrypted reasoning on OpenAI);
- `wrapped`: `conforming` plus a `post_model_hook` and a per-turn model choice that implement
  the rules' ending (L11-L13): past the budget the pending requests are answered
  "Not executed…" without running, then one closing call with tool choice none and the limit
  in the system instructions.

Measured on the pinned versions (tests/frameworks/test_langgraph.py): the defaults run one
turn's tools at once (L4), leave OpenAI's `store` unset without encrypted reasoning (L10), and at
the budget answer "Sorry, need more steps to process this request." with the pending requests
neither run nor answered and no closing call (L11, L12, L14). langchain-google-genai resends
Gemini's calls and results without their ids in every configuration (L5): no setting keeps them.

Run one: `harness run --source scripted --loop examples.frameworks.langgraph_agent:wrapped`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from examples.frameworks.base import Config, Framework
from harness.chat import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from harness.loop import LoopCall, LoopResult, ToolError
from harness.loop.closing import NOT_EXECUTED_RESULT, closing_system
from harness.loop.selection import select_context
from harness.scenario.model import Provider

PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai", "gemini")
MODULE = "examples.frameworks.langgraph_agent"
# "Tool choice none" in each chat model's own spelling. ChatAnthropic.bind_tools reads any
# other string as a tool's name (tool_choice="none" forces a tool called "none"), so it gets
# the wire dict itself.
NO_TOOLS: Mapping[Provider, Any] = {
    "anthropic": {"type": "none"},
    "openai": "none",
    "gemini": "none",
}

FRAMEWORK = Framework(
    name="langgraph",
    packages=(
        "langgraph",
        "langgraph-prebuilt",
        "langchain-core",
        "langchain-anthropic",
        "langchain-openai",
        "langchain-google-genai",
    ),
    configs=(
        Config(
            name="defaults",
            loop=f"{MODULE}:defaults",
            summary="create_react_agent as in the quick start; recursion_limit = 2 × rounds + 2",
            providers=PROVIDERS,
        ),
        Config(
            name="conforming",
            loop=f"{MODULE}:conforming",
            summary="max_concurrency=1 (tools in order, one at a time); OpenAI store=False, "
            'include=["reasoning.encrypted_content"]; last 20 saved messages (Gemini call '
            "ids: no setting keeps them)",
            providers=PROVIDERS,
        ),
        Config(
            name="wrapped",
            loop=f"{MODULE}:wrapped",
            summary="conforming + a post_model_hook answering pending requests past the budget "
            '"Not executed", then one closing call with tool_choice none and the limit in '
            "the system prompt",
            providers=PROVIDERS,
        ),
    ),
    traps=(
        "recursion_limit = 2 × rounds + 1 (the super-steps the budget takes) raises "
        "GraphRecursionError even when the last call answers: the adapter sets one more.",
        "ChatGoogleGenerativeAI builds its own google-genai Client in a validator, replacing "
        "a `client=` passed to the constructor: point it at the endpoint with "
        "`base_url=` and `google_api_key=` instead.",
        'ChatAnthropic.bind_tools(tool_choice="none") forces a tool named "none"; the '
        'closing call passes {"type": "none"}.',
        "ToolNode re-raises a tool's exception (only invalid arguments become a result): "
        "tools raise ToolException with handle_tool_error=True to send the error back.",
        "LangSmith tracing follows LANGSMITH_TRACING from the environment: every run is "
        "wrapped in langsmith's tracing_context(enabled=False).",
        "create_react_agent is deprecated for langchain.agents.create_agent, which needs the "
        "`langchain` package (not in the extra); the adapter silences that warning.",
    ),
)


def defaults(call: LoopCall) -> LoopResult:
    """The quick start: the graph as built, tools as LangGraph runs them."""
    return run(call)


def conforming(call: LoopCall) -> LoopResult:
    """The best the public settings allow, without code around the graph."""
    return run(call, conforming=True)


def wrapped(call: LoopCall) -> LoopResult:
    """`conforming` plus the rules' ending at the budget (L11-L13), inside the graph."""
    return run(call, conforming=True, closing=True)


def steps_for_rounds(max_rounds: int) -> int:
    """The step limit for a round budget, measured on langgraph 1.2.24. The limit counts
    super-steps: `max_rounds` rounds and the answer take 2 × max_rounds + 1 (agent, tools, …,
    agent), yet that limit raises GraphRecursionError even when the last call answers. One
    more is the smallest limit that lets a query use its whole budget; with it, a last turn
    still asking for tools is replaced by the agent node's canned "Sorry, need more steps to
    process this request." (odd limits raise, even ones give the sentence)."""
    return 2 * max_rounds + 2


def run(
    call: LoopCall,
    *,
    conforming: bool = False,
    closing: bool = False,
    recursion_limit: int | None = None,
) -> LoopResult:
    """One query through the graph; `recursion_limit` overrides `steps_for_rounds`."""
    from langsmith import tracing_context

    history = select_context(call.history) if conforming else call.history
    start = [*_messages_to_langchain(history), _human(call.message)]
    if closing:
        # The hook ends the loop itself; each round is agent, hook, tools.
        limit = 3 * (call.max_rounds + 2) + 1
    else:
        limit = steps_for_rounds(call.max_rounds) if recursion_limit is None else recursion_limit
    config: dict[str, Any] = {"recursion_limit": limit}
    if conforming:
        # Pregel runs a super-step's tasks (the Sends of one turn's tool calls) and ToolNode its
        # calls on an executor of this size: one worker runs them one at a time, in order (L4).
        config["max_concurrency"] = 1
    try:
        with tracing_context(enabled=False):
            state = _graph(call, conforming=conforming, closing=closing).invoke(
                {"messages": start}, config
            )
    except Exception as exc:  # the framework raised: reported as an error, never shown (L15)
        chat = (*call.history, UserMessage(text=call.message))
        return LoopResult(answer="", chat=chat, error=f"{type(exc).__name__}: {exc}")
    steps = _messages_from_langchain(state["messages"][len(start) :])
    answer = steps[-1].text if steps and isinstance(steps[-1], AssistantMessage) else ""
    return LoopResult(answer=answer, chat=(*call.history, UserMessage(text=call.message), *steps))


def _graph(call: LoopCall, *, conforming: bool, closing: bool) -> Any:
    from langgraph.prebuilt import create_react_agent

    model = _chat_model(call, conforming=conforming)
    tools = _tools(call)
    with warnings.catch_warnings():  # deprecated for langchain.agents, not installed here
        warnings.simplefilter("ignore")
        if not closing:
            return create_react_agent(model, tools, prompt=call.system)
        return create_react_agent(
            _model_for_turn(call, model, tools),
            tools,
            prompt=_prompt_for_turn(call),
            post_model_hook=_not_executed_past_budget(call),
        )


# ---- the chat models -------------------------------------------------------------------------


def _chat_model(call: LoopCall, *, conforming: bool) -> Any:
    from pydantic import SecretStr

    if call.provider == "anthropic":
        from langchain_anthropic import ChatAnthropic

        # `model` and `max_tokens` as its quick start spells them; mypy knows only their
        # pydantic aliases (model_name, max_tokens_to_sample).
        return ChatAnthropic(  # type: ignore[call-arg]
            model=call.model,
            api_key=SecretStr(call.api_key),
            base_url=call.base_url,
            max_tokens=1024,
            streaming=call.stream,
        )
    if call.provider == "openai":
        from langchain_openai import ChatOpenAI

        stateless: dict[str, Any] = (
            {"store": False, "include": ["reasoning.encrypted_content"]} if conforming else {}
        )
        return ChatOpenAI(
            model=call.model,
            api_key=SecretStr(call.api_key),
            base_url=call.base_url,
            use_responses_api=True,
            streaming=call.stream,
            **stateless,
        )
    from langchain_google_genai import ChatGoogleGenerativeAI

    # Not `client=`: the model's validator replaces a passed client (see FRAMEWORK.traps).
    return ChatGoogleGenerativeAI(
        model=call.model,
        google_api_key=call.api_key,
        base_url=call.base_url,
        streaming=call.stream,
    )


# ---- the tools -------------------------------------------------------------------------------


def _tools(call: LoopCall) -> list[Any]:
    from langchain_core.tools import StructuredTool, ToolException

    def runner(spec: Any) -> Callable[..., str]:
        def run(**arguments: Any) -> str:
            try:
                return str(spec(arguments))
            except ToolError as exc:  # sent back as an error result, not raised
                raise ToolException(str(exc)) from exc

        return run

    return [
        StructuredTool.from_function(
            func=runner(spec),
            name=spec.name,
            description=spec.description,
            args_schema=dict(spec.parameters),  # the JSON schema, passed through
            handle_tool_error=True,
        )
        for spec in call.tools
    ]


# ---- the wrapper: the rules' ending around the graph ----------------------------------------


def _turns_this_query(messages: Sequence[Any]) -> list[Any]:
    """The model turns since the query's user message."""
    from langchain_core.messages import AIMessage, HumanMessage

    last_human = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    return [m for m in messages[last_human:] if isinstance(m, AIMessage)]


def _budget_spent(call: LoopCall, messages: Sequence[Any]) -> bool:
    """The query has made its `max_rounds + 1` ordinary calls (L3)."""
    return len(_turns_this_query(messages)) > call.max_rounds


def _not_executed_past_budget(call: LoopCall) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """After each model turn: past the budget, answer its requests without running them."""
    from langchain_core.messages import ToolMessage as LangChainToolMessage

    def hook(state: dict[str, Any]) -> dict[str, Any]:
        turn = state["messages"][-1]
        if not turn.tool_calls or not _budget_spent(call, state["messages"]):
            return {"messages": []}
        return {
            "messages": [
                LangChainToolMessage(
                    content=NOT_EXECUTED_RESULT,
                    tool_call_id=request["id"],
                    name=request["name"],
                    status="error",
                )
                for request in turn.tool_calls
            ]
        }

    return hook


def _model_for_turn(call: LoopCall, model: Any, tools: list[Any]) -> Callable[..., Any]:
    """The model with tools bound; once the budget is spent, with tool choice none (L12)."""
    ordinary = model.bind_tools(tools)
    closing = model.bind_tools(tools, tool_choice=NO_TOOLS[call.provider])

    def pick(state: dict[str, Any], runtime: Any) -> Any:
        return closing if _budget_spent(call, state["messages"]) else ordinary

    return pick


def _prompt_for_turn(call: LoopCall) -> Callable[[dict[str, Any]], list[Any]]:
    """The system prompt; on the closing call plus the limit instruction (L13)."""
    from langchain_core.messages import SystemMessage

    def prompt(state: dict[str, Any]) -> list[Any]:
        closing = _budget_spent(call, state["messages"])
        system = closing_system(call.system) if closing else call.system
        return [SystemMessage(content=system), *state["messages"]]

    return prompt


# ---- harness chat <-> LangChain messages -----------------------------------------------------


def _human(text: str) -> Any:
    from langchain_core.messages import HumanMessage

    return HumanMessage(content=text)


def _messages_to_langchain(history: Sequence[Message]) -> list[Any]:
    from langchain_core.messages import AIMessage
    from langchain_core.messages import ToolMessage as LangChainToolMessage

    out: list[Any] = []
    for message in history:
        if isinstance(message, UserMessage):
            out.append(_human(message.text))
        elif isinstance(message, AssistantMessage):
            calls = [
                {"id": c.id, "name": c.name, "args": dict(c.arguments), "type": "tool_call"}
                for c in message.tool_calls
            ]
            out.append(AIMessage(content=message.text, tool_calls=calls))
        elif isinstance(message, ToolMessage):
            out.append(
                LangChainToolMessage(
                    content=message.content,
                    tool_call_id=message.call_id,
                    name=message.name,
                    status="error" if message.is_error else "success",
                )
            )
        else:  # pragma: no cover - exhaustive over harness.chat.Message
            raise TypeError(f"unknown chat message {message!r}")
    return out


def _messages_from_langchain(messages: Sequence[Any]) -> list[Message]:
    from langchain_core.messages import AIMessage
    from langchain_core.messages import ToolMessage as LangChainToolMessage

    out: list[Message] = []
    for message in messages:
        if isinstance(message, AIMessage):
            calls = tuple(
                ToolCall(id=c["id"] or "", name=c["name"], arguments=c["args"])
                for c in message.tool_calls
            )
            out.append(AssistantMessage(text=message.text, tool_calls=calls))
        elif isinstance(message, LangChainToolMessage):
            out.append(
                ToolMessage(
                    call_id=message.tool_call_id,
                    name=message.name or "",
                    content=message.text,
                    is_error=message.status == "error",
                )
            )
        else:
            raise TypeError(f"unexpected message in the agent's output: {type(message).__name__}")
    return out
