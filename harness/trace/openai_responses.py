"""OpenAI Responses (`POST /v1/responses`) read into the neutral trace. The request's `input`
items are grouped into messages (a run of consecutive output items is one model turn, a run of
`function_call_output` items one tool message); the response is the JSON body, or the final
response of the stream (`response.completed`, else the `response.output_item.done` items)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Literal

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
    Opaque,
    ToolChoice,
    WireMessage,
    WireRequest,
    WireResponse,
    WireToolCall,
    WireToolResult,
)

ERROR_TYPE_KEYS = ("type", "code")  # {"error":{"message","type","param","code"}}
EXTRA_KEYS = ("reasoning", "max_output_tokens", "max_tool_calls", "truncation", "text")

SIMPLE_TOOL_CHOICES: dict[str, ToolChoice] = {
    "none": "none",
    "auto": "auto",
    "required": "required",
}
TEXT_PARTS = frozenset({"input_text", "output_text", "text", "summary_text", "reasoning_text"})
MEDIA_PARTS = frozenset({"input_image", "input_file", "input_audio"})
CALL_ITEMS = frozenset({"function_call", "custom_tool_call"})
RESULT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output"})
# Items of hosted/built-in tools (run by OpenAI, or the computer/shell tools the client runs
# under their own protocol) and references to stored items: part of the model's side of the
# conversation, kept in `raw`, but not function calls the loop answers.
OTHER_MODEL_ITEMS = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "computer_call",
        "computer_call_output",
        "local_shell_call",
        "local_shell_call_output",
        "shell_call",
        "shell_call_output",
        "apply_patch_call",
        "apply_patch_call_output",
        "item_reference",
        "compaction",
    }
)
SYSTEM_ROLES = frozenset({"system", "developer"})

# Which side of the conversation an input item is on; runs of `model` or `tool` items
# make one message each.
Side = Literal["user", "system", "model", "tool"]
Role = Literal["model", "tool"]
SIDE_OF_ROLE: dict[str, Side] = {"user": "user", "assistant": "model", "system": "system"}
NAMED_KINDS = frozenset({"function", "custom"})  # tool choices that must carry a name
# Equivalent spellings of one request, for the replay's drift check (`RequestSpelling`).
# providers.md §3: tool_choice auto and `parallel_tool_calls` true are the defaults; an input
# message is `{"role","content"}` with or without `type:"message"`, its content a string or
# `input_text` parts, as `function_call_output.output` is; an output message echoed back has
# `annotations: []` on its text; an input item's `status` is the API's bookkeeping.
REQUEST_SPELLING = RequestSpelling(
    defaults={
        "stream": False,
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "input.type": "message",
        "input.content.annotations": [],
        "input.content.logprobs": [],
    },
    text_blocks={"input.content": "input_text", "input.output": "input_text"},
    not_compared=frozenset(
        {"max_output_tokens", "temperature", "top_p", "metadata", "user", "service_tier"}
        | {"prompt_cache_key", "safety_identifier", "input.status"}
    ),
    free_form=frozenset({"tools.parameters"}),
)


# ---- request ---------------------------------------------------------------------------


def request_from_openai_responses(request: HttpRequest, problems: Problems) -> WireRequest:
    body = obj(request.body)
    if body is None:
        return empty_request("openai-responses", request.body, problems)
    choice, name = tool_choice_from_openai(body.get("tool_choice"), problems)
    system = [_instructions(body.get("instructions"), problems)]
    messages = tuple(_conversation(body.get("input"), system, problems))
    return WireRequest(
        api="openai-responses",
        model=text_of(body.get("model")),
        stream=body.get("stream") is True,
        declared_tools=_tool_names(body.get("tools"), problems),
        tool_choice=choice,
        tool_choice_name=name,
        system="\n".join(s for s in system if s),
        messages=messages,
        store=opt_bool(body.get("store")),
        previous_response_id=opt_str(body.get("previous_response_id")),
        include=tuple(i for i in items(body.get("include")) if isinstance(i, str)),
        parallel_tool_calls=opt_bool(body.get("parallel_tool_calls")),
        size_bytes=size_bytes(body),
        extra=picked(body, EXTRA_KEYS),
    )


def _tool_names(tools: Any, problems: Problems) -> tuple[str, ...]:
    """Function and custom tools by name; hosted tools (web_search, …) by their type."""
    names: list[str] = []
    for i, tool in enumerate(items(tools)):
        data = obj(tool) or {}
        name = opt_str(data.get("name")) or opt_str(data.get("type"))
        if name is None:
            problems.add("tool without a name or type", f"tools[{i}]")
        else:
            names.append(name)
    return tuple(names)


def tool_choice_from_openai(raw: Any, problems: Problems) -> tuple[ToolChoice, str | None]:
    """Responses spelling: a string, `{"type":"function","name"}`, `{"type":"allowed_tools",
    "mode"}`, or a hosted tool's `{"type": …}` (named after its type)."""
    if raw is None:
        return "unset", None
    if isinstance(raw, str) and raw in SIMPLE_TOOL_CHOICES:
        return SIMPLE_TOOL_CHOICES[raw], None
    data = obj(raw) or {}
    kind = opt_str(data.get("type"))
    mode = text_of(data.get("mode"))
    if kind == "allowed_tools" and mode in SIMPLE_TOOL_CHOICES:
        return SIMPLE_TOOL_CHOICES[mode], None
    name = opt_str(data.get("name"))
    if kind in NAMED_KINDS and name is not None:
        return "named", name
    if kind is not None and kind != "allowed_tools" and kind not in NAMED_KINDS:
        return "named", kind  # a hosted tool is named by its type
    problems.add(f"unknown tool_choice {compact(raw)}", "tool_choice")
    return "unset", None


def _instructions(raw: Any, problems: Problems) -> str:
    if raw is None or isinstance(raw, str):
        return raw or ""
    if isinstance(raw, list):
        return "\n".join(
            _content(i.get("content"), f"instructions[{n}].content", problems)
            for n, i in enumerate(raw)
            if obj(i) is not None
        )
    problems.add("instructions is neither a string nor a list of items", "instructions")
    return ""


@dataclass
class _Run:
    """A run of consecutive items of one side: output items (a model turn) or results."""

    role: Role
    path: str
    raw: list[Any] = field(default_factory=list)
    turn: TurnBuilder = field(default_factory=TurnBuilder)
    results: list[WireToolResult] = field(default_factory=list)

    def message(self) -> WireMessage:
        if self.role == "tool":
            return WireMessage(
                role="tool", results=tuple(self.results), path=self.path, raw=self.raw
            )
        turn = self.turn.turn()
        return WireMessage(
            role="model",
            text=turn.text,
            calls=turn.calls,
            opaque=turn.opaque,
            path=self.path,
            raw=self.raw,
        )


# A response's output items share the 16-hex-digit segment after the kind in their ids with the
# response id (realwire `llm__responses_store_false_encrypted_reasoning_3rounds`:
# `resp_0f4809b27460351d0169fab217db…`, `rs_0f4809b27460351d0169fab21897…`).
RESPONSE_SEGMENT = re.compile(r"^(?:fc|ctc|rs|msg)_([0-9a-f]{16})")


def response_of(item: dict[str, Any]) -> str | None:
    """The response an output item came from, read from its id (None without one)."""
    found = RESPONSE_SEGMENT.match(text_of(item.get("id")))
    return found.group(1) if found else None


def fold_interleaved(raw: list[Any]) -> list[tuple[int, Any]]:
    """(original index, item), with a turn's calls brought together before their outputs when
    a loop sent them back interleaved — call, output, call, output, as OpenAI's own
    function-calling guide appends them, and the API accepts. A call of the same response (by
    its id) as the latest run of output items, with only outputs since, joins that run."""
    out: list[tuple[int, Any]] = []
    run_end, run_response = -1, None  # the latest run of output items: its end, its response
    for index, item in enumerate(raw):
        data = obj(item) or {}
        side = _side(data)
        since = out[run_end + 1 :]
        if (
            kind_of(data) in CALL_ITEMS
            and run_end >= 0
            and since
            and response_of(data) is not None
            and response_of(data) == run_response
            and all(kind_of(obj(i) or {}) in RESULT_ITEMS for _, i in since)
        ):
            out.insert(run_end + 1, (index, item))
            run_end += 1
            continue
        out.append((index, item))
        if side == "model":
            continues = len(out) >= 2 and _side(obj(out[-2][1]) or {}) == "model"
            run_response = (run_response if continues else None) or response_of(data)
            run_end = len(out) - 1
        elif side != "tool":
            run_end, run_response = -1, None  # a user or system message ends the turn
    return out


def _conversation(raw: Any, system: list[str], problems: Problems) -> Iterator[WireMessage]:
    if isinstance(raw, str):
        yield WireMessage(role="user", text=raw, path="input", raw=raw)
        return
    if not isinstance(raw, list):
        problems.add("input is neither a string nor a list of items", "input")
        return
    run: _Run | None = None
    for i, item in fold_interleaved(raw):
        path, data = f"input[{i}]", obj(item) or {}
        side = _side(data)
        if run is not None and run.role != side:
            yield run.message()
            run = None
        if side == "user":
            text = _content(data.get("content"), f"{path}.content", problems)
            yield WireMessage(role="user", text=text, path=path, raw=item)
        elif side == "system":
            system.append(_content(data.get("content"), f"{path}.content", problems))
        elif side is not None:
            run = run or _Run(role=side, path=path)
            run.raw.append(item)
            _add_item(run, data, path, problems)
        else:
            problems.add(f"unknown input item type {kind_of(item)!r}", path)
    if run is not None:
        yield run.message()


def _side(item: dict[str, Any]) -> Side | None:
    kind, role = kind_of(item), text_of(item.get("role"))
    if kind is None or kind == "message":
        return "system" if role in SYSTEM_ROLES else SIDE_OF_ROLE.get(role)
    if kind in RESULT_ITEMS:
        return "tool"
    if kind in CALL_ITEMS or kind == "reasoning" or kind in OTHER_MODEL_ITEMS:
        return "model"
    return None


def _add_item(run: _Run, item: dict[str, Any], path: str, problems: Problems) -> None:
    if run.role == "tool":
        output = item.get("output")
        parts = items(output)
        if parts and all(kind_of(p) in TEXT_PARTS for p in parts):
            output = "".join(text_of(p.get("text")) for p in parts)
        run.results.append(
            WireToolResult(
                call_id=opt_str(item.get("call_id")),
                name=None,
                content=content_text(output),
                is_error=False,  # the Responses API has no error flag on outputs
                path=path,
            )
        )
    else:
        add_output_item(run.turn, item, path, problems)


def _content(content: Any, path: str, problems: Problems) -> str:
    """A message's text: a string, or its text/refusal parts (media parts carry none)."""
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


# ---- output items (request history and response) ---------------------------------------


def add_output_item(turn: TurnBuilder, item: dict[str, Any], path: str, problems: Problems) -> None:
    kind = kind_of(item)
    if kind is None or kind == "message":
        turn.texts.append(_content(item.get("content"), f"{path}.content", problems))
    elif kind == "function_call":
        arguments = decode_arguments(item.get("arguments"), path, problems)
        turn.calls.append(_call(item, arguments, path))
    elif kind == "custom_tool_call":
        # Custom tools take free text, not JSON: `input` is the argument as sent.
        turn.calls.append(_call(item, item.get("input"), path))
    elif kind == "reasoning":
        turn.opaque.append(_reasoning(item, path))
    elif kind not in OTHER_MODEL_ITEMS:
        problems.add(f"unknown output item type {kind!r}", path)


def _call(item: dict[str, Any], arguments: Any, path: str) -> WireToolCall:
    return WireToolCall(
        id=opt_str(item.get("call_id")),
        name=text_of(item.get("name")),
        arguments=arguments,
        path=path,
        item_id=opt_str(item.get("id")),
    )


def _reasoning(item: dict[str, Any], path: str) -> Opaque:
    summary = [text_of(s.get("text")) for s in items(item.get("summary")) if obj(s) is not None]
    return Opaque(
        kind="reasoning",
        id=opt_str(item.get("id")),
        token=opt_str(item.get("encrypted_content")),
        text="\n".join(summary) if summary else None,
        path=path,
        raw=item,
    )


def turn_from_output(output: Any, problems: Problems) -> Turn:
    turn = TurnBuilder()
    for i, item in enumerate(items(output)):
        data = obj(item)
        if data is None:
            problems.add("output item is not an object", f"output[{i}]")
        else:
            add_output_item(turn, data, f"output[{i}]", problems)
    return turn.turn()


# ---- response --------------------------------------------------------------------------


def response_from_openai_responses(reply: HttpReply, problems: Problems) -> WireResponse:
    if reply.events is None:
        folded = json_body(reply, problems)
    else:
        folded = _response_from_stream(reply.events, reply.transport_error, problems)
    if folded is None:
        return unreadable(reply)
    response, error = folded.body, folded.error
    turn = turn_from_output(response.get("output"), folded.turn_problems(problems))
    opaque = turn.opaque
    if reply.events is not None:
        opaque = _with_streamed_blobs(opaque, reply.events)
    failed = obj(response.get("error"))
    if error is None and failed is not None:
        error = (text_of(failed.get("message")), opt_str(failed.get("code")))
    return WireResponse(
        status=reply.status,
        text=turn.text,
        calls=turn.calls,
        opaque=opaque,
        stop_reason=_stop_reason(response),
        usage=flat_usage(response.get("usage")),
        error=error[0] if error else reply.transport_error,
        error_type=error[1] if error else None,
        streamed=reply.events is not None,
        id=opt_str(response.get("id")),
        raw=response.get("output"),
    )


def _stop_reason(response: dict[str, Any]) -> str | None:
    """`completed`, `failed`, …; for an incomplete response its reason (`max_output_tokens`)."""
    reason = opt_str((obj(response.get("incomplete_details")) or {}).get("reason"))
    return reason or opt_str(response.get("status"))


def _with_streamed_blobs(
    opaque: tuple[Opaque, ...], events: tuple[SseEvent, ...]
) -> tuple[Opaque, ...]:
    """Each reasoning item with the other encrypted_content values its stream's item events
    gave it (each a valid encryption of the same reasoning)."""
    blobs: dict[str, list[str]] = {}
    for event in events:
        data = obj(event.data) or {}
        item = obj(data.get("item")) or {}
        if text_of(data.get("type")).startswith("response.output_item.") and kind_of(item) == (
            "reasoning"
        ):
            item_id, blob = opt_str(item.get("id")), opt_str(item.get("encrypted_content"))
            if item_id and blob:
                blobs.setdefault(item_id, []).append(blob)
    return tuple(
        replace(
            o,
            alternates=tuple(dict.fromkeys(b for b in blobs.get(o.id or "", ()) if b != o.token)),
        )
        for o in opaque
    )


# The events that end a Responses stream with the whole response in them (providers.md §6):
# a client that stops reading after one has the reply, whoever closes the connection.
FINAL_EVENTS = frozenset({"response.completed", "response.failed", "response.incomplete"})
TERMINAL_EVENTS = FINAL_EVENTS


def _response_from_stream(
    events: tuple[SseEvent, ...], transport_error: str | None, problems: Problems
) -> Reassembled:
    """The final response event's `response` (the SDK reads the JSON `type`, not the SSE
    event name); without one, the items of `response.output_item.done` in output order."""
    final: dict[str, Any] | None = None
    started: dict[str, Any] = {}
    done: dict[int, Any] = {}
    error: tuple[str, str | None] | None = None
    for n, event in enumerate(events):
        data = obj(event.data)
        kind = text_of((data or {}).get("type"))
        if data is None:
            problems.add("stream event data is not a JSON object", f"events[{n}]")
        elif kind in FINAL_EVENTS:
            final = obj(data.get("response")) or {}
        elif kind == "response.created":
            started = obj(data.get("response")) or {}
        elif kind == "response.output_item.done":
            index = data.get("output_index")
            done[index if isinstance(index, int) else len(done)] = data.get("item")
        elif kind == "error":
            error = (text_of(data.get("message")), opt_str(data.get("code")))
        elif not kind.startswith("response."):
            problems.add(f"unknown stream event type {kind!r}", f"events[{n}]")
    if final is not None:
        return Reassembled(body=final, error=error, complete=error is None)
    if error is None and transport_error is None:
        problems.add("stream ended without response.completed", "events")
    output = [done[i] for i in sorted(done)]
    body = {**started, "status": None, "output": output}
    return Reassembled(body=body, error=error, complete=False)


def stream_completed(events: tuple[SseEvent, ...]) -> bool:
    """A final event (`TERMINAL_EVENTS`, read from the JSON `type` as the SDK does) arrived."""
    return any(text_of((obj(e.data) or {}).get("type")) in TERMINAL_EVENTS for e in events)


def response_from_stream(events: tuple[SseEvent, ...]) -> dict[str, Any]:
    """The response JSON the non-streaming call returns: the final event's `response`."""
    return _response_from_stream(events, None, Problems("response")).body
