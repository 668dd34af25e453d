"""The OpenAI Agents SDK (`openai-agents`) on the harness loop contract.

What a user of the SDK writes: an `Agent` with the query's tools, run by `Runner.run` (or
`Runner.run_streamed`) with `max_turns` from the round budget. One SDK turn is one model call,
so a budget of R tool rounds is `max_turns=R + 1` (L3: at most R + 1 ordinary calls).

Providers: OpenAI through the SDK's own Responses model (`OpenAIResponsesModel` on the cell's
`call.async_client`; an `AsyncOpenAI` built per query must be closed before its event loop
ends, or its transport is closed later on a dead loop: "Event loop is closed"); Anthropic and
Gemini through the SDK's LiteLLM extension
(`agents.extensions.models.litellm_model.LitellmModel`), which reaches their native APIs.

Configurations:
- `defaults`: the quick start's `Agent` + `Runner.run`, wired to the endpoint, `max_turns`
  from the budget, tracing off. At the budget the SDK runs the last turn's tools (the pending
  write too) and then raises `MaxTurnsExceeded`; it makes no closing call.
- `conforming`: the best the public settings allow: `parallel_tool_calls=False`,
  `store=False`, `response_include=["reasoning.encrypted_content"]` (OpenAI), and
  `ToolExecutionConfig(max_function_tool_concurrency=1)` so one turn's tools run one at a time.
  No setting stops the SDK from running the pending tools at the budget.
- `wrapped`: `conforming` plus a short wrapper that implements L11–L13 with public hooks: a
  `RunHooks` counter of model calls lets the tools answer "Not executed" (without running)
  when the last ordinary call still asks for tools, and the `max_turns` error handler makes
  the one closing call: the same agent cloned with the step-limit instruction and
  `tool_choice="none"`, tools still declared.

Measured on openai-agents 0.24.0 (tests/frameworks/test_openai_agents.py):
- `defaults` runs one turn's tools at the same time (L4) and, on OpenAI, leaves `store` unset
  and asks for no encrypted reasoning (L10); at the budget it runs the pending tools, the
  pending write too, and raises (L3, L11, L12, L15).
- `conforming` has no finding on the scenarios that end before the budget on OpenAI, and the
  same limit findings as `defaults`; `wrapped` has none at all on OpenAI.
- Through LitellmModel (Anthropic, Gemini) one parallel turn is resent as one assistant message
  per call, each followed by its result (L5): `LitellmModel._fix_tool_message_ordering` does
  it for every model named anthropic/claude/gemini, and no setting turns it off.

Run one: `harness run --source scripted --loop examples.frameworks.openai_agents_agent:wrapped`.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from examples.frameworks.base import Config, Framework
from examples.frameworks.litellm_agent import litellm_route, provider_id
from harness.chat import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from harness.loop import LoopCall, LoopResult, ToolError
from harness.loop.adapters.openai import saved_to_openai
from harness.loop.closing import NOT_EXECUTED_RESULT, closing_system
from harness.loop.selection import select_context
from harness.scenario.model import Provider

# The SDK exports traces to api.openai.com unless told not to (RunConfig below says so too).
# litellm_agent, imported above, keeps litellm's import from fetching its cost map.
os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

ALL: tuple[Provider, ...] = ("openai", "anthropic", "gemini")
MODULE = "examples.frameworks.openai_agents_agent"

FRAMEWORK = Framework(
    name="openai-agents",
    packages=("openai-agents", "openai", "litellm"),
    configs=(
        Config(
            name="defaults",
            loop=f"{MODULE}:defaults",
            summary="Agent + Runner.run as in the quick start; max_turns = rounds + 1",
            providers=ALL,
        ),
        Config(
            name="conforming",
            loop=f"{MODULE}:conforming",
            summary="parallel_tool_calls=False, store=False, encrypted reasoning included, "
            "max_function_tool_concurrency=1",
            providers=ALL,
        ),
        Config(
            name="wrapped",
            loop=f"{MODULE}:wrapped",
            summary="conforming + tools answer 'Not executed' at the budget and the max_turns "
            "error handler makes one closing call with tool_choice='none'",
            providers=ALL,
        ),
    ),
    traps=(
        "Tracing exports every run to api.openai.com unless disabled "
        "(OPENAI_AGENTS_DISABLE_TRACING=1 or RunConfig(tracing_disabled=True)).",
        "The SDK leaves `store` unset and asks for no encrypted reasoning: set "
        "ModelSettings(store=False, response_include=['reasoning.encrypted_content']).",
        "parallel_tool_calls=False only asks the model; the SDK itself runs one turn's function "
        "tools concurrently unless RunConfig(tool_execution=ToolExecutionConfig("
        "max_function_tool_concurrency=1)).",
        "Anthropic and Gemini go through LitellmModel, which imports litellm: set "
        "LITELLM_LOCAL_MODEL_COST_MAP=True first or the import fetches the cost map from "
        "the network; its Gemini base_url needs '/v1beta' (see the litellm adapter).",
    ),
)


@dataclass(frozen=True, kw_only=True)
class Setup:
    """What one configuration sets; the rest of the adapter is the same for all three."""

    settings: Mapping[str, Any]  # ModelSettings fields
    sequential: bool = False  # max_function_tool_concurrency=1
    stateless: bool = False  # OpenAI: store=False and the encrypted reasoning (L10)
    wrapped: bool = False  # L11-L13 around the SDK


DEFAULTS = Setup(settings={})
CONFORMING = Setup(settings={"parallel_tool_calls": False}, sequential=True, stateless=True)
OPENAI_STATELESS = {"store": False, "response_include": ["reasoning.encrypted_content"]}


async def defaults(call: LoopCall) -> LoopResult:
    return await _answer(call, DEFAULTS)


async def conforming(call: LoopCall) -> LoopResult:
    return await _answer(call, CONFORMING)


async def wrapped(call: LoopCall) -> LoopResult:
    return await _answer(call, replace(CONFORMING, wrapped=True))


async def _answer(call: LoopCall, setup: Setup) -> LoopResult:
    """Run the agent once; a raised error is what the app shows instead of an answer."""
    asked = [UserMessage(text=call.message)]
    try:
        answer, steps = await _run(call, setup)
    except Exception as exc:
        return LoopResult(
            answer="", chat=(*call.history, *asked), error=f"{type(exc).__name__}: {exc}"
        )
    return LoopResult(answer=answer, chat=(*call.history, *asked, *steps))


async def _run(call: LoopCall, setup: Setup) -> tuple[str, list[Message]]:
    from agents import Agent, RunConfig, RunHooks, ToolExecutionConfig

    calls = _Counter()

    class CountCalls(RunHooks[Any]):
        async def on_llm_start(self, *args: Any, **kwargs: Any) -> None:
            calls.value += 1

    # The last ordinary call is number R + 1: the tools it asks for are not run (L11).
    spent = (lambda: calls.value > call.max_rounds) if setup.wrapped else (lambda: False)
    agent = Agent(
        name="assistant",
        instructions=call.system,
        model=_model(call),
        model_settings=_settings(call, setup),
        tools=[_tool(spec, spent) for spec in call.tools],
    )
    config = RunConfig(
        tracing_disabled=True,
        tool_execution=ToolExecutionConfig(max_function_tool_concurrency=1)
        if setup.sequential
        else None,
    )
    items = _input(call)
    handlers: Any = {"max_turns": _closing_handler(call, agent, config)} if setup.wrapped else None
    result = await _run_agent(
        call,
        agent,
        items,
        max_turns=call.max_rounds + 1,
        run_config=config,
        hooks=CountCalls(),
        error_handlers=handlers,
    )
    new = result.to_input_list()[len(items) :]
    return str(result.final_output), _chat_from_items(new)


@dataclass
class _Counter:
    value: int = 0


def _model(call: LoopCall) -> Any:
    """OpenAI: the SDK's Responses model on the cell's AsyncOpenAI; others: its LiteLLM model."""
    if call.provider == "openai":
        from agents import OpenAIResponsesModel

        return OpenAIResponsesModel(model=call.model, openai_client=call.async_client)
    from agents.extensions.models.litellm_model import LitellmModel

    model, api_base = litellm_route(call)
    return LitellmModel(model=model, base_url=api_base, api_key=call.api_key)


def _settings(call: LoopCall, setup: Setup) -> Any:
    from agents import ModelSettings

    fields = dict(setup.settings)
    if setup.stateless and call.provider == "openai":
        fields.update(OPENAI_STATELESS)  # L10
    return ModelSettings(**fields)


def _tool(spec: Any, spent: Any) -> Any:
    """The ToolSpec as a FunctionTool, its JSON schema passed through unchanged."""
    from agents import FunctionTool

    async def invoke(_context: Any, arguments: str) -> str:
        if spent():
            return NOT_EXECUTED_RESULT
        try:
            # A blocking tool goes to a thread, as the SDK's own @function_tool runs a sync
            # function (agents/tool.py: `await asyncio.to_thread(the_func, ...)`).
            return str(await asyncio.to_thread(spec, json.loads(arguments or "{}")))
        except ToolError as exc:
            return str(exc)

    return FunctionTool(
        name=spec.name,
        description=spec.description,
        params_json_schema=dict(spec.parameters),
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )


def _closing_handler(call: LoopCall, agent: Any, config: Any) -> Any:
    """The `max_turns` handler: one text-only call with the step-limit instruction (L12, L13)."""
    from agents import RunErrorHandlerResult

    async def closing(data: Any) -> Any:
        settings = replace(agent.model_settings, tool_choice="none")
        last = agent.clone(instructions=closing_system(call.system), model_settings=settings)
        result = await _run_agent(call, last, data.run_data.history, max_turns=1, run_config=config)
        return RunErrorHandlerResult(final_output=result.final_output)

    return closing


async def _run_agent(call: LoopCall, agent: Any, items: list[Any], **options: Any) -> Any:
    """`Runner.run`, or `Runner.run_streamed` drained when the cell streams."""
    from agents import Runner

    if not call.stream:
        return await Runner.run(agent, items, **options)
    result = Runner.run_streamed(agent, items, **options)
    async for _event in result.stream_events():
        pass
    return result


def _input(call: LoopCall) -> list[Any]:
    """The selected saved chat (L7) as Responses input items, then the user message."""
    items: list[Any] = list(saved_to_openai(select_context(call.history)))
    items.append({"role": "user", "content": call.message})
    return items


def _chat_from_items(items: list[Any]) -> list[Message]:
    """The run's new Responses items as the app saves them: one assistant message per model
    turn (its text and tool calls), then one tool message per output."""
    chat: list[Message] = []
    text: list[str] = []
    calls: list[ToolCall] = []
    names: dict[str, str] = {}
    for item in items:
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") == "assistant":
            if calls:  # a new turn begins
                chat.append(AssistantMessage(text="".join(text), tool_calls=tuple(calls)))
                text, calls = [], []
            text.extend(_text_of(item.get("content")))
        elif kind == "function_call":
            names[item["call_id"]] = item["name"]
            calls.append(
                ToolCall(
                    id=provider_id(item["call_id"]),
                    name=item["name"],
                    arguments=json.loads(item.get("arguments") or "{}"),
                )
            )
        elif kind == "function_call_output":
            if calls or text:
                chat.append(AssistantMessage(text="".join(text), tool_calls=tuple(calls)))
                text, calls = [], []
            output = item["output"]
            chat.append(
                ToolMessage(
                    call_id=provider_id(item["call_id"]),
                    name=names.get(item["call_id"], ""),
                    content=output if isinstance(output, str) else json.dumps(output),
                    is_error=output == NOT_EXECUTED_RESULT,
                )
            )
    if text or calls:
        chat.append(AssistantMessage(text="".join(text), tool_calls=tuple(calls)))
    return chat


def _text_of(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [part.get("text", "") for part in content or [] if part.get("type") == "output_text"]
