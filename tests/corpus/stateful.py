"""OpenAI Responses chained by `previous_response_id`, `store` left unset.

The shape of the OpenAI Agents SDK run with `previous_response_id` and of the pydantic-ai and
openinference recordings the README describes: the first call sends the context and the user
message; every later call names the previous response and sends only the new
`function_call_output` items, relying on the API's default `store: true`. `include` is never
asked for (nothing needs to travel back: the API keeps the reasoning). Everything else is
done right: the budget, the pending requests answered "Not executed", one closing call with
tool choice "none" and the step-limit order in `instructions` (sent on every call, as the API
does not carry it over).
"""

from __future__ import annotations

from typing import Any

from harness.chat import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from harness.loop.adapters.openai import parse_arguments, saved_to_openai, tool_to_openai
from harness.loop.closing import NOT_EXECUTED_RESULT, closing_system
from harness.loop.contract import LoopCall, LoopResult, ToolError
from harness.loop.selection import select_context


def chained_responses(call: LoopCall) -> LoopResult:
    tools = [tool_to_openai(t) for t in call.tools]
    by_name = {t.name: t for t in call.tools}
    items: list[dict[str, Any]] = [*saved_to_openai(select_context(call.history))]
    items.append({"role": "user", "content": call.message})
    saved: list[Message] = [*call.history, UserMessage(text=call.message)]
    previous: str | None = None
    for number in range(1, call.max_rounds + 3):
        closing = number == call.max_rounds + 2
        params: dict[str, Any] = {
            "model": call.model,
            "instructions": closing_system(call.system) if closing else call.system,
            "input": items,
            "tools": tools,
        }
        if closing:
            params["tool_choice"] = "none"
        if previous is not None:
            params["previous_response_id"] = previous
        response = _create(call, params)
        previous = response.id
        requests = [i for i in response.output if i.type == "function_call"]
        if closing or not requests:
            saved.append(AssistantMessage(text=response.output_text))
            return LoopResult(answer=response.output_text, chat=tuple(saved))
        pending = number > call.max_rounds
        items = []
        saved.append(
            AssistantMessage(
                text=response.output_text,
                tool_calls=tuple(
                    ToolCall(id=r.call_id, name=r.name, arguments=parse_arguments(r.arguments)[0])
                    for r in requests
                ),
            )
        )
        for request in requests:
            output = NOT_EXECUTED_RESULT if pending else _run(by_name, request)
            items.append(
                {"type": "function_call_output", "call_id": request.call_id, "output": output}
            )
            saved.append(ToolMessage(call_id=request.call_id, name=request.name, content=output))
    raise AssertionError("unreachable")


def _create(call: LoopCall, params: dict[str, Any]) -> Any:
    if not call.stream:
        return call.client.responses.create(**params)
    with call.client.responses.stream(**params) as stream:
        return stream.get_final_response()


def _run(by_name: dict[str, Any], request: Any) -> str:
    try:
        return str(by_name[request.name](parse_arguments(request.arguments)[0]))
    except ToolError as exc:
        return f"Error: {exc}"
