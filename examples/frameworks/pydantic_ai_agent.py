"""pydantic-ai on the loop contract: one `Agent` per query, on all three providers.

- `defaults`: the quick start — `Agent(model, instructions=…, tools=…)` and
  `agent.run(message, message_history=…, usage_limits=UsageLimits(request_limit=…))`, only
  wired to the endpoint, with the step limit from the round budget.
- `conforming`: the best its public settings allow — tools run one at a time
  (`ToolManager.parallel_execution_mode("sequential")`), OpenAI Responses with
  `openai_store=False` (encrypted reasoning is asked for by the model profile), and the saved
  history cut by the harness's selection rule (the last 20 messages, never inside a chain).
- `wrapped`: `conforming` driven through `agent.iter()`, stopping before the tools run when the
  budget is spent: each pending request is answered "Not executed", and one closing run with
  `tool_choice="none"` and the step-limit order in its instructions (L11–L13).

Run: `harness run --source scripted --loop examples.frameworks.pydantic_ai_agent:defaults`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from examples.frameworks.base import Config, Framework
from harness.chat import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from harness.loop import LoopCall, LoopResult, ToolError
from harness.loop.selection import select_context
from harness.scenario.model import Provider

NOT_EXECUTED = "Not executed: the step limit for this answer was reached."
LIMIT = (
    "You reached the step limit for this answer. Answer with what you already know, explain "
    "the limit, say what was left undone, and ask whether to continue."
)
MODULE = "examples.frameworks.pydantic_ai_agent"
PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai", "gemini")

FRAMEWORK = Framework(
    name="pydantic-ai",
    packages=("pydantic-ai-slim",),
    configs=(
        Config(
            name="defaults",
            loop=f"{MODULE}:defaults",
            summary="Agent(model, instructions, tools); agent.run with "
            "UsageLimits(request_limit=max_rounds + 1); the whole saved history",
            providers=PROVIDERS,
        ),
        Config(
            name="conforming",
            loop=f"{MODULE}:conforming",
            summary="defaults + parallel_execution_mode('sequential'), openai_store=False, "
            "the history cut to the last 20 messages without splitting a chain, Gemini "
            "requests over the size limit trimmed by a ProcessHistory capability",
            providers=PROVIDERS,
        ),
        Config(
            name="wrapped",
            loop=f"{MODULE}:wrapped",
            summary="conforming driven by agent.iter(): at the budget the pending requests are "
            "answered 'Not executed' and one closing run with tool_choice='none' + the limit "
            "order in its instructions",
            providers=PROVIDERS,
        ),
    ),
    traps=(
        "Agent(system_prompt=...) is not sent at all when message_history is given (every "
        "query after the first): the adapter passes the system prompt as instructions=.",
        "A failing tool raises ToolFailed, not ModelRetry: ModelRetry adds 'Fix the errors and "
        "try again' to the result and spends the tool's retry budget.",
        "UsageLimits counts model requests, not rounds: request_limit=max_rounds + 1; it is "
        "checked before the next request, after the last turn's tools already ran. "
        "tool_calls_limit is checked before tools run but counts calls, not rounds; both raise "
        "UsageLimitExceeded instead of a closing call (only wrapped gives one).",
    ),
)


async def defaults(call: LoopCall) -> LoopResult:
    """The quick start: only the endpoint and the step limit are set."""
    return await _answer(call, conforming=False)


async def conforming(call: LoopCall) -> LoopResult:
    """The best the public settings allow; no closing call (pydantic-ai has none)."""
    with _sequential():
        return await _answer(call, conforming=True)


async def wrapped(call: LoopCall) -> LoopResult:
    """`conforming` plus the loop rules' ending: stop before the tools at the budget."""
    with _sequential():
        try:
            return await _wrapped_answer(call)
        except Exception as exc:  # what the app would show: an error, never a half answer
            return _failed(call, exc)


# ---- the agent ------------------------------------------------------------------------------


def _model(call: LoopCall) -> Any:
    """The provider's model class, pointed at the harness endpoint."""
    if call.provider == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        return AnthropicModel(
            call.model, provider=AnthropicProvider(api_key=call.api_key, base_url=call.base_url)
        )
    if call.provider == "openai":
        from pydantic_ai.models.openai import OpenAIResponsesModel
        from pydantic_ai.providers.openai import OpenAIProvider

        return OpenAIResponsesModel(
            call.model, provider=OpenAIProvider(api_key=call.api_key, base_url=call.base_url)
        )
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    return GoogleModel(
        call.model, provider=GoogleProvider(api_key=call.api_key, base_url=call.base_url)
    )


def _settings(call: LoopCall, *, conforming: bool) -> dict[str, Any]:
    if conforming and call.provider == "openai":
        return {"openai_store": False}  # L10; without it `store` is left unset
    return {}


def _tools(call: LoopCall) -> list[Any]:
    """Each ToolSpec as a pydantic-ai tool with its JSON schema passed through."""
    from pydantic_ai import Tool
    from pydantic_ai.exceptions import ToolFailed

    def tool(spec: Any) -> Any:
        def run(**arguments: Any) -> str:
            try:
                return str(spec(arguments))
            except ToolError as exc:
                raise ToolFailed(str(exc)) from None

        return Tool.from_schema(run, spec.name, spec.description, dict(spec.parameters))

    return [tool(spec) for spec in call.tools]


def _agent(call: LoopCall, *, conforming: bool) -> Any:
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory

    trims = conforming and call.provider == "gemini" and call.request_size_limit is not None
    return Agent(
        _model(call),
        instructions=call.system,  # not system_prompt=: dropped when message_history is given
        tools=_tools(call),
        capabilities=[ProcessHistory(_trimmer(call.request_size_limit or 0))] if trims else [],
    )


def _trimmer(limit: int) -> Any:
    """L9: drop whole old exchanges, oldest first, while the messages are over `limit` bytes
    (measured as pydantic-ai's JSON, longer than Gemini's wire: it errs on trimming more)."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    def trim(messages: list[Any]) -> list[Any]:
        active = _active_start(messages)
        starts = [i for i in range(active) if _user_prompt(messages[i])]
        for start in [*starts, active]:
            if len(ModelMessagesTypeAdapter.dump_json(messages[start:])) <= limit:
                return messages[start:]
        return messages[active:]  # the active turn is never cut, even when still too big

    return trim


@contextmanager
def _sequential() -> Iterator[None]:
    """L4: the tools one turn asks for run one at a time, in order."""
    from pydantic_ai.tool_manager import ToolManager

    with ToolManager.parallel_execution_mode("sequential"):
        yield


async def _answer(call: LoopCall, *, conforming: bool) -> LoopResult:
    from pydantic_ai.usage import UsageLimits

    history = select_context(call.history) if conforming else call.history
    try:
        result = await _agent(call, conforming=conforming).run(
            call.message,
            message_history=history_to_pydantic(history),
            model_settings=_settings(call, conforming=conforming),
            usage_limits=UsageLimits(request_limit=call.max_rounds + 1),
            event_stream_handler=_drain if call.stream else None,
        )
    except Exception as exc:  # UsageLimitExceeded at the limit, or a provider error
        return _failed(call, exc)
    return _finished(call, result.output, result.all_messages())


async def _drain(_: Any, events: Any) -> None:
    """Streaming: pydantic-ai uses the provider's streaming calls when a handler is given."""
    async for _event in events:
        pass


async def _wrapped_answer(call: LoopCall) -> LoopResult:
    """Drive the run node by node; at the budget, leave before the tools node runs."""
    from pydantic_ai import Agent

    agent = _agent(call, conforming=True)
    settings = _settings(call, conforming=True)
    history = history_to_pydantic(select_context(call.history))
    responses = 0
    async with agent.iter(call.message, message_history=history, model_settings=settings) as run:
        async for node in run:
            if call.stream and Agent.is_model_request_node(node):
                await _stream_request(node, run.ctx)
            elif Agent.is_call_tools_node(node):
                responses += 1
                if node.model_response.tool_calls and responses > call.max_rounds:
                    # The budget is spent: the pending requests are not run (L11).
                    messages = [*run.all_messages()]
                    return await _closing(call, agent, settings, messages, node.model_response)
            elif Agent.is_end_node(node):
                return _finished(call, node.data.output, run.all_messages())
    raise AssertionError("an agent run ends with an End node")


async def _stream_request(node: Any, ctx: Any) -> None:
    """Streaming under `agent.iter()`: the request node is streamed (and drained) by hand."""
    async with node.stream(ctx) as events:
        await _drain(None, events)


async def _closing(
    call: LoopCall, agent: Any, settings: dict[str, Any], messages: list[Any], pending: Any
) -> LoopResult:
    """One text-only run: tools stay declared, tool_choice 'none', the order in the
    instructions, after the 'Not executed' answers (L11–L13)."""
    from pydantic_ai.messages import ModelRequest, ToolReturnPart

    if not messages or messages[-1] is not pending:
        messages.append(pending)
    answers = ModelRequest(
        parts=[
            ToolReturnPart(tool_name=c.tool_name, content=NOT_EXECUTED, tool_call_id=c.tool_call_id)
            for c in pending.tool_calls
        ]
    )
    result = await agent.run(
        None,
        message_history=[*messages, answers],
        instructions=LIMIT,
        model_settings={**settings, "tool_choice": "none"},
        event_stream_handler=_drain if call.stream else None,
    )
    return _finished(call, result.output, result.all_messages())


def _failed(call: LoopCall, exc: Exception) -> LoopResult:
    chat = (*call.history, UserMessage(text=call.message))
    return LoopResult(answer="", chat=chat, error=f"{type(exc).__name__}: {exc}")


def _finished(call: LoopCall, output: Any, messages: Sequence[Any]) -> LoopResult:
    """The saved chat: the history as given plus this query's messages, from its prompt on
    (not `new_messages()`: a history processor that trims shifts its index)."""
    steps = history_from_pydantic(messages[_active_start(messages) :])
    return LoopResult(answer=str(output), chat=(*call.history, *steps))


def _user_prompt(message: Any) -> bool:
    return any(part.part_kind == "user-prompt" for part in getattr(message, "parts", ()))


def _active_start(messages: Sequence[Any]) -> int:
    """Where this query starts: its user prompt, the last one in the messages."""
    return max((i for i, m in enumerate(messages) if _user_prompt(m)), default=0)


# ---- the chat, both ways ---------------------------------------------------------------------


def history_to_pydantic(history: Sequence[Message]) -> list[Any]:
    """Saved chat → pydantic-ai messages; consecutive tool results share one request."""
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    out: list[Any] = []
    results: list[Any] = []  # the tool results that follow one model turn
    for message in history:
        if isinstance(message, ToolMessage):
            results.append(
                ToolReturnPart(
                    tool_name=message.name,
                    content=message.content,
                    tool_call_id=message.call_id,
                    outcome="failed" if message.is_error else "success",
                )
            )
            continue
        if results:
            out.append(ModelRequest(parts=results))
            results = []
        if isinstance(message, UserMessage):
            out.append(ModelRequest(parts=[UserPromptPart(content=message.text)]))
        else:
            text = [TextPart(content=message.text)] if message.text else []
            calls = [
                ToolCallPart(tool_name=c.name, args=dict(c.arguments), tool_call_id=c.id)
                for c in message.tool_calls
            ]
            out.append(ModelResponse(parts=[*text, *calls]))
    if results:
        out.append(ModelRequest(parts=results))
    return out


def history_from_pydantic(messages: Sequence[Any]) -> list[Message]:
    """pydantic-ai messages → the chat as the app saves it (text, calls, results)."""
    from pydantic_ai.messages import ModelResponse

    out: list[Message] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            out.append(_assistant(message))
            continue
        for part in message.parts:
            kind = part.part_kind
            if kind == "user-prompt":
                out.append(UserMessage(text=str(part.content)))
            elif kind in ("tool-return", "retry-prompt") and part.tool_name:
                out.append(_tool_message(part))
    return out


def _tool_message(part: Any) -> ToolMessage:
    """A tool's result as saved: its text (a failure without pydantic-ai's error wrapping)."""
    if part.part_kind == "retry-prompt":
        return ToolMessage(
            call_id=part.tool_call_id,
            name=part.tool_name,
            content=part.model_response(),
            is_error=True,
        )
    return ToolMessage(
        call_id=part.tool_call_id,
        name=part.tool_name,
        content=part.model_response_str(wrap_if_error=False),
        is_error=part.outcome == "failed",
    )


def _assistant(response: Any) -> AssistantMessage:
    calls = tuple(
        ToolCall(id=c.tool_call_id, name=c.tool_name, arguments=c.args_as_dict())
        for c in response.tool_calls
    )
    return AssistantMessage(text=response.text or "", tool_calls=calls)
