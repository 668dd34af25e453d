"""OpenAI Chat Completions (`POST /v1/chat/completions`) read into the neutral trace. A run of
consecutive `tool` messages is one tool message; the streamed response is rebuilt from the
chunk deltas keyed by choice and tool-call index, exactly as the `openai` SDK's
`accumulate_delta` does."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from harness.capture import SseEvent
from harness.trace.common import (
    HttpReply,
    HttpRequest,
    Problems,
    Reassembled,
    RequestSpelling,
    Turn,
    TurnBuilder,
    compact,
    content_text,
    decode_arguments,
    empty_request,
    flat_usage,
    items,
    json_body,
    kind_of,
    obj,
    opt_bool,
    opt_str,
    picked,
    size_bytes,
    text_of,
    unreadable,
)
from harness.trace.model import (
    ToolChoice,
    WireMessage,
    WireRequest,
    WireResponse,
    WireToolCall,
    WireToolResult,
)

ERROR_TYPE_KEYS = ("type", "code")  # {"error":{"message","type","param","code"}}
# The frame that ends a Chat Completions stream (providers.md §6): `data: [DONE]`; the SDK
# stops reading there, so a client closing right after it has the whole reply (issue 11).
TERMINAL_DATA = "[DONE]"
EXTRA_KEYS = ("stream_options", "n", "max_tokens", "max_completion_tokens", "reasoning_effort")

SIMPLE_TOOL_CHOICES: dict[str, ToolChoice] = {
    "none": "none",
    "auto": "auto",
    "required": "required",
}
TEXT_PARTS = frozenset({"text"})
MEDIA_PARTS = frozenset({"image_url", "input_audio", "file"})
SYSTEM_ROLES = frozenset({"system", "developer"})
RESULT_ROLES = frozenset({"tool", "function"})  # `function`: the legacy functions API
# Equivalent spellings of one request, for the replay's drift check (`RequestSpelling`).
# providers.md §3: tool_choice auto and `parallel_tool_calls` true are the defaults; a
# message's content is a string or `text` parts; an assistant message echoed from a response
# holds `content: null` and empty lists (nulls are dropped for every API).
REQUEST_SPELLING = RequestSpelling(
    defaults={
        "stream": False,
        "n": 1,
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "messages.tool_calls": [],
        "messages.annotations": [],
    },
    text_blocks={"messages.content": "text"},
    not_compared=frozenset(
        {"max_tokens", "max_completion_tokens", "temperature", "top_p", "seed", "user"}
        | {"metadata", "service_tier", "store", "prompt_cache_key", "safety_identifier"}
    ),
    free_form=frozenset({"tools.function.parameters"}),
)


# ---- request ---------------------------------------------------------------------------


def request_from_openai_chat(request: HttpRequest, problems: Problems) -> WireRequest:
    body = obj(request.body)
    if body is None:
        return empty_request("openai-chat", request.body, problems)
    choice, name = _tool_choice(body, problems)
    system: list[str] = []
    messages = tuple(_messages(body.get("messages"), system, problems))
    return WireRequest(
        api="openai-chat",
        model=text_of(body.get("model")),
        stream=body.get("stream") is True,
        declared_tools=_tool_names(body, problems),
        tool_choice=choice,
        tool_choice_name=name,
        system="\n".join(s for s in system if s),
        messages=messages,
        store=opt_bool(body.get("store")),
        parallel_tool_calls=opt_bool(body.get("parallel_tool_calls")),
        size_bytes=size_bytes(body),
        extra=picked(body, EXTRA_KEYS),
    )


def _tool_names(body: dict[str, Any], problems: Problems) -> tuple[str, ...]:
    """`tools[].function.name` (or `.custom.name`); the legacy `functions[].name`."""
    names: list[str] = []
    for i, tool in enumerate(items(body.get("tools"))):
        data = obj(tool) or {}
        spec = obj(data.get(text_of(data.get("type")))) or {}
        name = opt_str(spec.get("name"))
        if name is None:
            problems.add("tool without a function name", f"tools[{i}]")
        else:
            names.append(name)
    legacy = (opt_str((obj(f) or {}).get("name")) for f in items(body.get("functions")))
    names.extend(n for n in legacy if n is not None)
    return tuple(names)


def _tool_choice(body: dict[str, Any], problems: Problems) -> tuple[ToolChoice, str | None]:
    """`tool_choice` as a string, `{"type":"function","function":{"name"}}` or
    `{"type":"allowed_tools","allowed_tools":{"mode"}}`; else the legacy `function_call`."""
    raw = body.get("tool_choice", body.get("function_call"))
    if raw is None:
        return "unset", None
    if isinstance(raw, str) and raw in SIMPLE_TOOL_CHOICES:
        return SIMPLE_TOOL_CHOICES[raw], None
    data = obj(raw) or {}
    kind = opt_str(data.get("type"))
    spec = obj(data.get(kind)) if kind else data  # legacy function_call: {"name": …}
    mode = text_of((spec or {}).get("mode"))
    if kind == "allowed_tools" and mode in SIMPLE_TOOL_CHOICES:
        return SIMPLE_TOOL_CHOICES[mode], None
    if spec is not None and isinstance(spec.get("name"), str):
        return "named", spec["name"]
    where = "tool_choice" if "tool_choice" in body else "function_call"
    problems.add(f"unknown tool_choice {compact(raw)}", where)
    return "unset", None


def _messages(raw: Any, system: list[str], problems: Problems) -> Iterator[WireMessage]:
    if not isinstance(raw, list):
        problems.add("messages is not a list", "messages")
        return
    results: list[WireToolResult] = []
    run_raw: list[Any] = []
    run_path = ""
    for i, message in enumerate(raw):
        path, data = f"messages[{i}]", obj(message) or {}
        role = opt_str(data.get("role"))
        if role in RESULT_ROLES:
            run_path = run_path if results else path
            results.append(_result(data, path))
            run_raw.append(message)
            continue
        if results:
            yield WireMessage(role="tool", results=tuple(results), path=run_path, raw=run_raw)
            results, run_raw = [], []
        if role in SYSTEM_ROLES:
            system.append(_content(data.get("content"), f"{path}.content", problems))
        elif role == "user":
            text = _content(data.get("content"), f"{path}.content", problems)
            yield WireMessage(role="user", text=text, path=path, raw=message)
        elif role == "assistant":
            turn = turn_from_chat(data, path, problems)
            yield WireMessage(
                role="model",
                text=turn.text,
                calls=turn.calls,
                path=path,
                raw=message,
            )
        else:
            problems.add(f"unknown message role {role!r}", path)
    if results:
        yield WireMessage(role="tool", results=tuple(results), path=run_path, raw=run_raw)


def _result(message: dict[str, Any], path: str) -> WireToolResult:
    content = message.get("content")
    parts = items(content)
    if parts and all(kind_of(p) in TEXT_PARTS for p in parts):
        content = "".join(text_of(p.get("text")) for p in parts)
    return WireToolResult(
        call_id=opt_str(message.get("tool_call_id")),
        name=opt_str(message.get("name")),
        content=content_text(content),
        is_error=False,  # Chat has no error flag on tool messages
        path=path,
    )


def _content(content: Any, path: str, problems: Problems) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    texts: list[str] = []
    for k, part in enumerate(items(content)):
        kind = kind_of(part)
        if kind in TEXT_PARTS:
            texts.append(text_of(part.get("text")))
        elif kind == "refusal":
            texts.append(text_of(part.get("refusal")))
        elif kind not in MEDIA_PARTS:
            problems.add(f"unknown content part type {kind!r}", f"{path}[{k}]")
    if not isinstance(content, list):
        problems.add("content is neither a string nor a list of parts", path)
    return "".join(texts)


def turn_from_chat(message: dict[str, Any], path: str, problems: Problems) -> Turn:
    """An assistant message: content (or refusal), `tool_calls`, legacy `function_call`."""
    turn = TurnBuilder()
    turn.texts.append(_content(message.get("content"), f"{path}.content", problems))
    if not message.get("content") and isinstance(message.get("refusal"), str):
        turn.texts.append(message["refusal"])
    for k, call in enumerate(items(message.get("tool_calls"))):
        where = f"{path}.tool_calls[{k}]"
        data = obj(call) or {}
        kind = data.get("type", "function")
        if kind != "function" and kind != "custom":
            problems.add(f"unknown tool call type {kind!r}", where)
            continue
        spec = obj(data.get(kind)) or {}
        if kind == "function":
            arguments = decode_arguments(spec.get("arguments"), where, problems)
        else:  # a custom tool takes free text, not JSON
            arguments = spec.get("input")
        turn.calls.append(
            WireToolCall(
                id=opt_str(data.get("id")),
                name=text_of(spec.get("name")),
                arguments=arguments,
                path=where,
            )
        )
    legacy = obj(message.get("function_call"))
    if legacy is not None:
        where = f"{path}.function_call"
        arguments = decode_arguments(legacy.get("arguments"), where, problems)
        turn.calls.append(
            WireToolCall(id=None, name=text_of(legacy.get("name")), arguments=arguments, path=where)
        )
    return turn.turn()


# ---- response --------------------------------------------------------------------------


def response_from_openai_chat(reply: HttpReply, problems: Problems) -> WireResponse:
    if reply.events is None:
        folded = json_body(reply, problems)
    else:
        folded = _completion_from_stream(reply.events, reply.transport_error, problems)
    if folded is None:
        return unreadable(reply)
    completion, error = folded.body, folded.error
    choices = items(completion.get("choices"))
    first = obj(choices[0]) if choices else None
    message = obj((first or {}).get("message")) or {}
    turn_problems = folded.turn_problems(problems)
    if first is None:
        turn_problems.add("response has no choice", "choices")
    turn = turn_from_chat(message, "choices[0].message", turn_problems)
    return WireResponse(
        status=reply.status,
        text=turn.text,
        calls=turn.calls,
        stop_reason=opt_str((first or {}).get("finish_reason")),
        usage=flat_usage(completion.get("usage")),
        error=error[0] if error else reply.transport_error,
        error_type=error[1] if error else None,
        candidates=len(choices),
        streamed=reply.events is not None,
        id=opt_str(completion.get("id")),
        raw=message,
    )


def _completion_from_stream(
    events: tuple[SseEvent, ...], transport_error: str | None, problems: Problems
) -> Reassembled:
    """Chunks folded into one completion: each choice's deltas accumulated into its message,
    the last `finish_reason` and `usage` (the `include_usage` chunk has no choices)."""
    completion: dict[str, Any] = {}
    choices: dict[int, dict[str, Any]] = {}
    for n, event in enumerate(events):
        where = f"events[{n}]"
        if isinstance(event.data, str) and event.data.startswith(TERMINAL_DATA):
            return Reassembled(body=_folded(completion, choices))  # the SDK stops here
        chunk = obj(event.data)
        if chunk is None:
            problems.add("stream chunk is not a JSON object", where)
            continue
        if chunk.get("error"):
            # The SDK raises APIError on any chunk carrying `error` (openai/_streaming.py).
            error = obj(chunk["error"]) or {}
            message = opt_str(error.get("message")) or "An error occurred during streaming"
            failure = (message, opt_str(error.get("type")))
            return Reassembled(body=_folded(completion, choices), error=failure, complete=False)
        completion.update({k: v for k, v in chunk.items() if k not in ("choices", "usage")})
        if chunk.get("usage") is not None:
            completion["usage"] = chunk["usage"]
        for choice in items(chunk.get("choices")):
            _fold_choice(choices, obj(choice) or {}, where, problems)
    if transport_error is None:
        problems.add("stream ended without data: [DONE]", "events")
    return Reassembled(body=_folded(completion, choices), complete=False)


def _fold_choice(
    choices: dict[int, dict[str, Any]], choice: dict[str, Any], where: str, problems: Problems
) -> None:
    index = choice.get("index")
    if not isinstance(index, int):
        problems.add("stream choice without an integer index", where)
        return
    snapshot = choices.setdefault(index, {"index": index, "message": {}, "finish_reason": None})
    accumulate_delta(snapshot["message"], obj(choice.get("delta")) or {}, where, problems)
    if choice.get("finish_reason"):
        snapshot["finish_reason"] = choice["finish_reason"]


def _folded(completion: dict[str, Any], choices: dict[int, dict[str, Any]]) -> dict[str, Any]:
    return {**completion, "choices": [choices[i] for i in sorted(choices)]}


def accumulate_delta(
    acc: dict[str, Any], delta: dict[str, Any], where: str, problems: Problems
) -> None:
    """openai/lib/streaming/_deltas.py: strings and numbers concatenate/add (except `index`
    and `type`, which replace), dicts merge, lists of dicts merge entry by entry on their
    `index`, other lists extend."""
    for key, value in delta.items():
        current = acc.get(key)
        if current is None:
            # Copies: later deltas extend what is stored, and the events must stay as sent.
            acc[key] = [] if _indexed(value) else copy.deepcopy(value)
            if not _indexed(value):
                continue
            current = acc[key]
        if key in ("index", "type"):
            acc[key] = value
        elif _addable(current, value):
            acc[key] = current + value
        elif isinstance(current, dict) and isinstance(value, dict):
            accumulate_delta(current, value, where, problems)
        elif isinstance(current, list) and isinstance(value, list):
            _accumulate_list(current, value, where, problems)
        else:
            acc[key] = copy.deepcopy(value)


def _accumulate_list(acc: list[Any], delta: list[Any], where: str, problems: Problems) -> None:
    if not _indexed(delta):
        acc.extend(copy.deepcopy(delta))
        return
    for entry in delta:
        index = entry.get("index") if isinstance(entry, dict) else None
        if not isinstance(index, int) or index < 0:
            problems.add("list delta entry without a valid index", where)
        elif index < len(acc) and isinstance(acc[index], dict):
            accumulate_delta(acc[index], entry, where, problems)
        else:
            acc.insert(index, copy.deepcopy(entry))


def _indexed(value: Any) -> bool:
    return isinstance(value, list) and any(isinstance(v, dict) and "index" in v for v in value)


def _addable(current: Any, value: Any) -> bool:
    """Both strings, or both numbers (not booleans)."""
    if isinstance(current, str) or isinstance(value, str):
        return isinstance(current, str) and isinstance(value, str)
    numbers = (current, value)
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in numbers)


def stream_completed(events: tuple[SseEvent, ...]) -> bool:
    """`data: [DONE]` arrived (`TERMINAL_DATA`)."""
    return any(isinstance(e.data, str) and e.data.startswith(TERMINAL_DATA) for e in events)


def completion_from_stream(events: tuple[SseEvent, ...]) -> dict[str, Any]:
    """The `chat.completion` JSON the non-streaming call returns, folded from its chunks."""
    folded = _completion_from_stream(events, None, Problems("response")).body
    return {**folded, "object": "chat.completion"}
