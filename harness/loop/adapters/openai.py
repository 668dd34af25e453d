"""OpenAI Responses, stateless: spells the loop's requests and reads its turns (providers.md
§3, §9; rule L10).

Quirks kept here, each with its evidence:
- `store: false` on every call and never `previous_response_id`: with nothing stored the lookup
  fails (O4: ``Previous response with id 'resp_…' not found.``), so every call carries the
  selected context and the whole active sequence.
- `instructions` is sent on every call: it is not carried over between responses (§3).
- `include: ["reasoning.encrypted_content"]` asks for the reasoning blob, and each turn's output
  items (reasoning, message, function_call) go back verbatim and in place within the query.
  Dropping one side of a pair is rejected (O5: ``Item 'fc_…' of type 'function_call' was
  provided without its required 'reasoning' item``; O6: ``Item 'rs_…' of type 'reasoning' was
  provided without its required following item.``). They are never saved to the chat (L10).
- Results are `function_call_output` items tied by `call_id`, not by the item `id` (§3; O1:
  ``No tool output found for function call call_XXX.``).
- Tools are declared with `strict: false`: the scenario's schemas are arbitrary JSON Schema, and
  strict mode only accepts schemas with every property required and no additional properties.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import httpx2
import openai
from openai.types.responses import (
    Response,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputRefusal,
    ResponseOutputText,
    ResponseReasoningItem,
)

from harness.chat import AssistantMessage, ToolCall, ToolMessage, UserMessage
from harness.chat import Message as SavedMessage
from harness.loop.adapters import ProviderCallError, Request, Turn, describe_error
from harness.loop.contract import LoopCall, ToolSpec

Item: TypeAlias = dict[str, Any]
Items: TypeAlias = tuple[Item, ...]

TOOL_CHOICE_NONE = "none"  # L12, OpenAI's spelling
INCLUDE = ("reasoning.encrypted_content",)
SDK_ERRORS: tuple[type[BaseException], ...] = (openai.OpenAIError, httpx2.HTTPError)
# A stream frame whose data is not JSON (json.JSONDecodeError, a ValueError) is a reply the loop
# cannot read; caught around the stream only.
STREAM_ERRORS: tuple[type[BaseException], ...] = (ValueError,)
FINAL_EVENTS = frozenset({"response.completed", "response.incomplete"})


@dataclass(frozen=True, kw_only=True)
class OpenAIAdapter:
    client: openai.OpenAI
    model: str
    stream: bool = False
    async_client: openai.AsyncOpenAI | None = None

    def send(self, request: Request[Items]) -> Turn[Items]:
        params = request_to_openai(request, model=self.model)
        try:
            response = self._streamed(params) if self.stream else self._whole(params)
        except SDK_ERRORS as exc:
            raise ProviderCallError(describe_error(exc)) from exc
        return turn_from_openai(response)

    async def send_async(self, request: Request[Items]) -> Turn[Items]:
        """`send` on the async client (the same request, the same reading of the reply)."""
        params = request_to_openai(request, model=self.model)
        try:
            if self.stream:
                response = await self._streamed_async(params)
            else:
                response = await self._aclient().responses.create(**params)
        except SDK_ERRORS as exc:
            raise ProviderCallError(describe_error(exc)) from exc
        return turn_from_openai(response)

    def _whole(self, params: dict[str, Any]) -> Response:
        response: Response = self.client.responses.create(**params)
        return response

    def _streamed(self, params: dict[str, Any]) -> Response:
        """The final response of the stream (`response.completed` carries every output item
        complete, reasoning blobs included)."""
        final: Response | None = None
        with self.client.responses.create(**params, stream=True) as events:
            try:
                for event in events:
                    final = final_of(event) or final
            except STREAM_ERRORS as exc:
                raise ProviderCallError(f"unreadable stream: {describe_error(exc)}") from exc
        if final is None:
            raise ProviderCallError("the stream ended without a response.completed event")
        return final

    async def _streamed_async(self, params: dict[str, Any]) -> Response:
        final: Response | None = None
        async with await self._aclient().responses.create(**params, stream=True) as events:
            try:
                async for event in events:
                    final = final_of(event) or final
            except STREAM_ERRORS as exc:
                raise ProviderCallError(f"unreadable stream: {describe_error(exc)}") from exc
        if final is None:
            raise ProviderCallError("the stream ended without a response.completed event")
        return final

    def _aclient(self) -> openai.AsyncOpenAI:
        if self.async_client is None:
            raise ProviderCallError("no async client was given (LoopCall.async_client)")
        return self.async_client


def final_of(event: Any) -> Response | None:
    """The response a stream event completes, None for any other event; a failure raises."""
    if event.type in FINAL_EVENTS:
        response: Response = event.response
        return response
    if event.type == "response.failed":
        raise ProviderCallError(f"response.failed: {failure_text(event.response)}")
    if event.type == "error":
        raise ProviderCallError(f"stream error {event.code}: {event.message}")
    return None


def make_adapter(call: LoopCall) -> OpenAIAdapter:
    return OpenAIAdapter(
        client=call.client, model=call.model, stream=call.stream, async_client=call.async_client
    )


def request_to_openai(request: Request[Items], *, model: str) -> dict[str, Any]:
    """The keyword arguments of `responses.create` for this request."""
    params: dict[str, Any] = {
        "model": model,
        "store": False,
        "include": list(INCLUDE),
        "instructions": request.system,
        "input": input_to_openai(request),
    }
    if request.tools:
        params["tools"] = [tool_to_openai(tool) for tool in request.tools]
        if not request.tools_allowed:
            params["tool_choice"] = TOOL_CHOICE_NONE
    return params


def tool_to_openai(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": dict(tool.parameters),
        "strict": False,
    }


def input_to_openai(request: Request[Items]) -> list[Item]:
    """Selected context, the user message, then each turn's items verbatim and its outputs."""
    items = list(saved_to_openai(request.context))
    items.append({"role": "user", "content": request.message})
    for step in request.steps:
        items.extend(step.turn.native)
        items.extend(outputs_to_openai(step.results))
    return items


def saved_to_openai(saved: Sequence[SavedMessage]) -> Iterator[Item]:
    for message in saved:
        if isinstance(message, UserMessage):
            yield {"role": "user", "content": message.text}
        elif isinstance(message, AssistantMessage):
            if message.text:
                yield {"role": "assistant", "content": message.text}
            for call in message.tool_calls:
                yield {
                    "type": "function_call",
                    "call_id": call.id,
                    "name": call.name,
                    "arguments": json.dumps(call.arguments, ensure_ascii=False),
                }
        else:
            yield from outputs_to_openai([message])


def outputs_to_openai(results: Iterable[ToolMessage]) -> Iterator[Item]:
    """One `function_call_output` per result; OpenAI has no error flag, the text says it."""
    for result in results:
        yield {"type": "function_call_output", "call_id": result.call_id, "output": result.content}


def turn_from_openai(response: Response) -> Turn[Items]:
    """The neutral turn, and the output items as they came (dumped without None fields)."""
    if response.status == "failed":
        raise ProviderCallError(f"response failed: {failure_text(response)}")
    if response.status == "incomplete":
        # Cut by max_output_tokens or a content filter: the text is not the whole answer, and a
        # call's arguments may be cut too (L15: report it, never pass it off as the answer).
        details = response.incomplete_details
        reason = details.reason if details is not None else None
        raise ProviderCallError(f"response incomplete ({reason or 'no reason given'})")
    texts: list[str] = []
    calls: list[ToolCall] = []
    invalid: dict[int, str] = {}
    for item in response.output:
        if isinstance(item, ResponseOutputMessage):
            texts.extend(_message_text(item))
        elif isinstance(item, ResponseFunctionToolCall):
            arguments, problem = parse_arguments(item.arguments)
            if problem is not None:
                invalid[len(calls)] = problem
            calls.append(ToolCall(id=item.call_id, name=item.name, arguments=arguments))
        elif not isinstance(item, ResponseReasoningItem):
            raise ProviderCallError(
                f"the response holds an output item of type {item.type!r}, which this loop "
                "does not handle (it declares only function tools)"
            )
    native = tuple(
        item.model_dump(mode="json", by_alias=True, exclude_none=True) for item in response.output
    )
    message = AssistantMessage(text="".join(texts), tool_calls=tuple(calls))
    return Turn(message=message, native=native, invalid_arguments=invalid)


def _message_text(item: ResponseOutputMessage) -> Iterator[str]:
    for part in item.content:
        if isinstance(part, ResponseOutputText):
            yield part.text
        elif isinstance(part, ResponseOutputRefusal):
            yield part.refusal


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """The arguments object of a `function_call` (a JSON string), or {} and the problem."""
    try:
        value = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        return {}, f"not valid JSON ({exc.msg} at position {exc.pos}): {raw[:200]}"
    if not isinstance(value, dict):
        return {}, f"not a JSON object: {raw[:200]}"
    return value, None


def failure_text(response: Response) -> str:
    error = response.error
    if error is None:
        return f"status {response.status}"
    return f"{error.code}: {error.message}"
