"""Gemini (google-genai): spells the loop's requests and reads its turns (providers.md §4, §9;
rule L9).

Quirks kept here, each with its evidence:
- Automatic function calling stays off: tools are declared as `FunctionDeclaration`s (never
  Python callables, which turn AFC on) and `automatic_function_calling.disable` is set, so one
  SDK call is one model call and the loop, not the SDK, runs the tools (§4).
- The model `Content` goes back unchanged: all parts, same order, thought signatures kept (G3:
  ``Function call is missing a thought_signature in functionCall parts…``). Streamed chunks are
  merged part by part; a part that carries only a signature, or empty text, is kept.
- Results: exactly one `functionResponse` per `functionCall` of the turn (G1: ``Please ensure
  that the number of function response parts is equal to the number of function call parts of
  the function call turn.``), with the call's name, and its id only when the model gave one
  (§4 correction: real replies were seen without ids; pairing then goes by position).
- `response` must be an object: `{"output": text}`, or `{"error": text}` for a failed tool (§4).
- L9: over `request_size_limit`, the oldest whole exchanges of the selected context are dropped;
  the active sequence is never cut.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any

import httpx2
from google import genai
from google.genai import errors, types

from harness.chat import AssistantMessage, ToolCall, ToolMessage, UserMessage
from harness.chat import Message as SavedMessage
from harness.loop.adapters import (
    LOCAL_ID_PREFIX,
    ProviderCallError,
    Request,
    Turn,
    describe_error,
)
from harness.loop.contract import LoopCall, ToolSpec
from harness.loop.selection import split_exchanges

TOOL_CONFIG_NONE = types.ToolConfig(  # L12, Gemini's spelling
    function_calling_config=types.FunctionCallingConfig(mode=types.FunctionCallingConfigMode.NONE)
)
AFC_OFF = types.AutomaticFunctionCallingConfig(disable=True)
SDK_ERRORS: tuple[type[BaseException], ...] = (
    errors.APIError,
    errors.UnknownApiResponseError,
    httpx2.HTTPError,
)
# A chunk the SDK cannot decode (JSON or validation errors, both ValueError) is a reply the loop
# cannot read; caught around the stream only.
STREAM_ERRORS: tuple[type[BaseException], ...] = (ValueError,)
SIGNATURE_ONLY_FIELDS = frozenset({"thought", "thought_signature"})
# A whole reply ends with `finishReason: STOP` (function calls too: Gemini has no tool-specific
# reason, providers.md §1). Any other reason (MAX_TOKENS, SAFETY, RECITATION,
# MALFORMED_FUNCTION_CALL, …) means the reply was cut or withheld, so the loop reports an error
# (L15) instead of handing it over as the answer. A missing reason (stream chunks before the
# last) says nothing.
FINISHED = types.FinishReason.STOP


@dataclass(frozen=True, kw_only=True)
class GeminiRequest:
    """The `generate_content` arguments (besides the model) for one call."""

    contents: list[types.Content]
    config: types.GenerateContentConfig


@dataclass(frozen=True, kw_only=True)
class GeminiAdapter:
    client: genai.Client
    model: str
    stream: bool = False
    request_size_limit: int | None = None

    def send(self, request: Request[types.Content]) -> Turn[types.Content]:
        wire = fit_request(request, self.request_size_limit)
        try:
            content = self._streamed(wire) if self.stream else self._whole(wire)
        except SDK_ERRORS as exc:
            raise ProviderCallError(describe_error(exc)) from exc
        return turn_from_gemini(content)

    async def send_async(self, request: Request[types.Content]) -> Turn[types.Content]:
        """`send` on the client's `.aio` side (the same request, the same reading)."""
        wire = fit_request(request, self.request_size_limit)
        try:
            if self.stream:
                content = await self._streamed_async(wire)
            else:
                response = await self.client.aio.models.generate_content(
                    model=self.model, contents=wire.contents, config=wire.config
                )
                check_finish([response])
                content = first_content(response) or types.Content(role="model", parts=[])
        except SDK_ERRORS as exc:
            raise ProviderCallError(describe_error(exc)) from exc
        return turn_from_gemini(content)

    async def _streamed_async(self, wire: GeminiRequest) -> types.Content:
        seen: list[types.GenerateContentResponse] = []
        try:
            stream = await self.client.aio.models.generate_content_stream(
                model=self.model, contents=wire.contents, config=wire.config
            )
            chunks = [chunk async for chunk in stream]
            content = merge_chunks(_kept(chunks, seen))
        except STREAM_ERRORS as exc:
            raise ProviderCallError(f"unreadable stream: {describe_error(exc)}") from exc
        check_finish(seen)
        return content

    def _whole(self, wire: GeminiRequest) -> types.Content:
        response = self.client.models.generate_content(
            model=self.model, contents=wire.contents, config=wire.config
        )
        check_finish([response])
        return first_content(response) or types.Content(role="model", parts=[])

    def _streamed(self, wire: GeminiRequest) -> types.Content:
        chunks = self.client.models.generate_content_stream(
            model=self.model, contents=wire.contents, config=wire.config
        )
        seen: list[types.GenerateContentResponse] = []
        try:
            content = merge_chunks(_kept(chunks, seen))
        except STREAM_ERRORS as exc:
            raise ProviderCallError(f"unreadable stream: {describe_error(exc)}") from exc
        check_finish(seen)
        return content


def make_adapter(call: LoopCall) -> GeminiAdapter:
    return GeminiAdapter(
        client=call.client,
        model=call.model,
        stream=call.stream,
        request_size_limit=call.request_size_limit,
    )


def fit_request(request: Request[types.Content], limit: int | None) -> GeminiRequest:
    """L9: the request with as many of the newest selected exchanges as fit in `limit` bytes.

    Whole exchanges go, oldest first; the active sequence always stays whole, so a request
    still over the limit once the context is empty is sent as it is."""
    exchanges = split_exchanges(request.context)
    wire = request_to_gemini(request, context=request.context)
    for dropped in range(1, len(exchanges) + 1):
        if limit is None or request_size(wire) <= limit:
            break
        kept = tuple(message for exchange in exchanges[dropped:] for message in exchange)
        wire = request_to_gemini(request, context=kept)
    return wire


def request_to_gemini(
    request: Request[types.Content], *, context: Sequence[SavedMessage] | None = None
) -> GeminiRequest:
    """Context (the selection, or what is left of it after trimming), the user message, then
    each model `Content` unchanged and its results."""
    chosen = request.context if context is None else context
    contents = [*saved_to_gemini(chosen), user_content(request.message)]
    for step in request.steps:
        contents.append(step.turn.native)
        contents.append(results_to_gemini(step.turn.native, step.results))
    return GeminiRequest(contents=contents, config=config_for(request))


def config_for(request: Request[types.Content]) -> types.GenerateContentConfig:
    declared = bool(request.tools)
    return types.GenerateContentConfig(
        system_instruction=request.system or None,
        tools=[tools_to_gemini(request.tools)] if declared else None,
        tool_config=TOOL_CONFIG_NONE if declared and not request.tools_allowed else None,
        automatic_function_calling=AFC_OFF,
    )


def tools_to_gemini(tools: Iterable[ToolSpec]) -> types.Tool:
    return types.Tool(
        function_declarations=[
            types.FunctionDeclaration(
                name=tool.name,
                description=tool.description,
                parameters_json_schema=dict(tool.parameters),
            )
            for tool in tools
        ]
    )


def user_content(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def saved_to_gemini(saved: Sequence[SavedMessage]) -> list[types.Content]:
    """Saved chat messages; the results of one turn become one user content, and consecutive
    saved assistant messages one model content: Gemini rejects a function-call turn that does
    not follow a user or function-response turn (G2), e.g. a saved text reply followed by a
    saved tool request."""
    merged: list[types.Content] = []
    for content in _saved_contents(saved):
        last = merged[-1] if merged else None
        if last is not None and last.role == "model" == content.role:
            merged[-1] = types.Content(
                role="model", parts=[*(last.parts or []), *(content.parts or [])]
            )
        else:
            merged.append(content)
    return merged


def _saved_contents(saved: Sequence[SavedMessage]) -> Iterator[types.Content]:
    for is_result, group in groupby(saved, key=lambda m: isinstance(m, ToolMessage)):
        if is_result:
            parts = [_saved_response_part(m) for m in group if isinstance(m, ToolMessage)]
            yield types.Content(role="user", parts=parts)
            continue
        for message in group:
            content = _saved_content(message)
            if content is not None:
                yield content


def _saved_content(message: SavedMessage) -> types.Content | None:
    if isinstance(message, UserMessage):
        return user_content(message.text)
    if isinstance(message, AssistantMessage):
        parts = [types.Part(text=message.text)] if message.text else []
        parts.extend(
            types.Part(
                function_call=types.FunctionCall(
                    id=model_id(c.id), name=c.name, args=dict(c.arguments)
                )
            )
            for c in message.tool_calls
        )
        return types.Content(role="model", parts=parts) if parts else None
    raise TypeError(f"a tool result outside a result group: {message!r}")


def _saved_response_part(result: ToolMessage) -> types.Part:
    return response_part(id=model_id(result.call_id), name=result.name, result=result)


def model_id(call_id: str) -> str | None:
    """The id as the model gave it; None for an id the loop made up (never sent to Gemini)."""
    return None if call_id.startswith(LOCAL_ID_PREFIX) else call_id


def results_to_gemini(turn: types.Content, results: Sequence[ToolMessage]) -> types.Content:
    """One `functionResponse` per `functionCall` part of `turn`, by position (the loop keeps
    results in request order), with the call's name and its id only when it had one."""
    calls = [part.function_call for part in turn.parts or [] if part.function_call is not None]
    parts = [
        response_part(id=call.id, name=call.name or result.name, result=result)
        for call, result in zip(calls, results, strict=True)
    ]
    return types.Content(role="user", parts=parts)


def response_part(*, id: str | None, name: str, result: ToolMessage) -> types.Part:
    payload = {"error": result.content} if result.is_error else {"output": result.content}
    return types.Part(function_response=types.FunctionResponse(id=id, name=name, response=payload))


def request_size(wire: GeminiRequest) -> int:
    """Bytes of the JSON body the SDK sends for `wire`, measured the way it serialises
    (`json.dumps` with default separators); field names are dumped in snake_case, never
    shorter than the camelCase the SDK uses for some, so the estimate errs on the large side."""
    config = wire.config.model_dump(mode="json", exclude_none=True)
    system = config.pop("system_instruction", None)
    body: dict[str, Any] = {
        "contents": [c.model_dump(mode="json", exclude_none=True) for c in wire.contents],
        "generationConfig": {},
        **config,
    }
    if system is not None:
        body["systemInstruction"] = {"role": "user", "parts": [{"text": system}]}
    return len(json.dumps(body).encode("utf-8"))


def first_content(response: types.GenerateContentResponse) -> types.Content | None:
    if not response.candidates:
        return None
    return response.candidates[0].content


def _kept(
    chunks: Iterable[types.GenerateContentResponse], seen: list[types.GenerateContentResponse]
) -> Iterator[types.GenerateContentResponse]:
    for chunk in chunks:
        seen.append(chunk)
        yield chunk


def check_finish(responses: Sequence[types.GenerateContentResponse]) -> None:
    """Raise `ProviderCallError` when the last finish reason given is not STOP."""
    reasons = [
        r.candidates[0].finish_reason
        for r in responses
        if r.candidates and r.candidates[0].finish_reason is not None
    ]
    if reasons and reasons[-1] != FINISHED:
        reason = reasons[-1]
        name = reason.value if isinstance(reason, types.FinishReason) else str(reason)
        raise ProviderCallError(f"the reply was cut short or withheld (finishReason {name})")


def merge_chunks(chunks: Iterable[types.GenerateContentResponse]) -> types.Content:
    """One model `Content` from a stream: every part of every chunk, in order. Adjacent plain
    text parts are joined; a part with a signature (even on empty text) stays as it came."""
    parts: list[types.Part] = []
    role = "model"
    for chunk in chunks:
        content = first_content(chunk)
        if content is None:
            continue
        role = content.role or role
        for part in content.parts or []:
            _add_part(parts, part)
    return types.Content(role=role, parts=parts)


def _add_part(parts: list[types.Part], part: types.Part) -> None:
    last = parts[-1] if parts else None
    if (
        last is not None
        and _plain_text(last)
        and _plain_text(part)
        and last.thought == part.thought
    ):
        parts[-1] = last.model_copy(update={"text": (last.text or "") + (part.text or "")})
    else:
        parts.append(part)


def _plain_text(part: types.Part) -> bool:
    fields = set(part.model_dump(exclude_none=True))
    return part.text is not None and fields <= {"text", "thought"}


def turn_from_gemini(content: types.Content) -> Turn[types.Content]:
    """The neutral turn (thought text left out), and the `Content` as it came."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for part in content.parts or []:
        call = part.function_call
        if call is not None:
            calls.append(
                ToolCall(id=call.id or "", name=call.name or "", arguments=call.args or {})
            )
        elif part.text is not None:
            if not part.thought:
                texts.append(part.text)
        elif not (fields := set(part.model_dump(exclude_none=True))) <= SIGNATURE_ONLY_FIELDS:
            raise ProviderCallError(
                f"the reply holds a part this loop does not handle (fields {sorted(fields)})"
            )
    message = AssistantMessage(text="".join(texts), tool_calls=tuple(calls))
    return Turn(message=message, native=content)
