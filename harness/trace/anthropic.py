"""Anthropic Messages (`POST /v1/messages`) read into the neutral trace: the request's
messages and settings, and the response — JSON, or reassembled from the SSE stream as the
`anthropic` SDK's `MessageStream` does."""

from __future__ import annotations

import json
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
    empty_request,
    flat_usage,
    items,
    json_body,
    kind_of,
    obj,
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

ERROR_TYPE_KEYS = ("type",)  # {"type":"error","error":{"type":"invalid_request_error",…}}
# A stream whose message is whole (providers.md §6): `message_delta` carries the stop reason
# and final usage, `message_stop` closes it. A client that stops reading after either has the
# whole reply, whoever then closes the connection (issue 11).
TERMINAL_EVENTS = frozenset({"message_delta", "message_stop"})
EXTRA_KEYS = ("max_tokens", "thinking", "temperature", "output_config")

# providers.md §2: tool_choice forms {"type": "auto"|"any"|"none"} and {"type":"tool","name"}.
TOOL_CHOICES: dict[str, ToolChoice] = {
    "auto": "auto",
    "any": "required",
    "none": "none",
    "tool": "named",
}
# User-side blocks that are neither text nor a tool result (media, retrieved sources).
USER_MEDIA_BLOCKS = frozenset({"image", "document", "search_result", "container_upload"})
# Server-tool blocks run by Anthropic itself, not by the loop: kept in `raw`, not calls.
SERVER_TOOL_BLOCKS = frozenset(
    {
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
        "mcp_tool_use",
        "mcp_tool_result",
        "container_upload",
    }
)

# Equivalent spellings of one request, for the replay's drift check (`RequestSpelling`).
REQUEST_SPELLING = RequestSpelling(
    defaults={
        "stream": False,
        # providers.md §2: `is_error:true` marks a failed tool; `tool_result{…,is_error?}`.
        "messages.content.is_error": False,
        # The API's default tool choice is auto, parallel calls allowed (providers.md §1:
        # `disable_parallel_tool_use:true` is the switch, so false is the default).
        "tool_choice.disable_parallel_tool_use": False,
        "tool_choice": {"type": "auto"},
        "thinking": {"type": "disabled"},  # extended thinking is off unless enabled
    },
    # providers.md §2: `tool_result.content` is a string or a list of blocks; `system` and a
    # message's `content` likewise take a string for one text block.
    text_blocks={"system": "text", "messages.content": "text", "messages.content.content": "text"},
    not_compared=frozenset(
        {
            *("max_tokens", "temperature", "top_p", "top_k", "metadata", "service_tier"),
            # Prompt-caching marks change the bill, not what the model reads.
            "system.cache_control",
            "tools.cache_control",
            "messages.content.cache_control",
            "messages.content.content.cache_control",
        }
    ),
    free_form=frozenset({"messages.content.input", "tools.input_schema"}),
)


# ---- request ---------------------------------------------------------------------------


def request_from_anthropic(request: HttpRequest, problems: Problems) -> WireRequest:
    body = obj(request.body)
    if body is None:
        return empty_request("anthropic", request.body, problems)
    choice, name, parallel = _tool_choice(body.get("tool_choice"), problems)
    return WireRequest(
        api="anthropic",
        model=text_of(body.get("model")),
        stream=body.get("stream") is True,
        declared_tools=_tool_names(body.get("tools"), problems),
        tool_choice=choice,
        tool_choice_name=name,
        system=_system(body.get("system"), problems),
        messages=tuple(_messages(body.get("messages"), problems)),
        parallel_tool_calls=parallel,
        size_bytes=size_bytes(body),
        extra=picked(body, EXTRA_KEYS),
    )


def _tool_names(tools: Any, problems: Problems) -> tuple[str, ...]:
    names: list[str] = []
    for i, tool in enumerate(items(tools)):
        name = opt_str((obj(tool) or {}).get("name"))
        if name is None:
            problems.add("tool without a name", f"tools[{i}]")
        else:
            names.append(name)
    return tuple(names)


def _tool_choice(raw: Any, problems: Problems) -> tuple[ToolChoice, str | None, bool | None]:
    """(choice, name, parallel): `disable_parallel_tool_use` is Anthropic's parallel switch."""
    if raw is None:
        return "unset", None, None
    data = obj(raw) or {}
    choice = TOOL_CHOICES.get(text_of(data.get("type")))
    if choice is None:
        problems.add(f"unknown tool_choice {compact(raw)}", "tool_choice")
        return "unset", None, None
    disable = data.get("disable_parallel_tool_use")
    parallel = None if not isinstance(disable, bool) else not disable
    name = opt_str(data.get("name")) if choice == "named" else None
    return choice, name, parallel


def _system(raw: Any, problems: Problems) -> str:
    if raw is None or isinstance(raw, str):
        return raw or ""
    texts: list[str] = []
    for i, block in enumerate(items(raw)):
        if kind_of(block) == "text":
            texts.append(text_of(block.get("text")))
        else:
            problems.add(f"system block of type {kind_of(block)!r} is not text", f"system[{i}]")
    if not isinstance(raw, list):
        problems.add("system is neither a string nor a list of text blocks", "system")
    return "\n".join(texts)


def _messages(raw: Any, problems: Problems) -> Iterator[WireMessage]:
    if not isinstance(raw, list):
        problems.add("messages is not a list", "messages")
        return
    for i, message in enumerate(raw):
        path = f"messages[{i}]"
        data = obj(message) or {}
        role, content = data.get("role"), data.get("content")
        if role == "assistant":
            turn = turn_from_anthropic(content, f"{path}.content", problems)
            yield WireMessage(
                role="model",
                text=turn.text,
                calls=turn.calls,
                opaque=turn.opaque,
                path=path,
                raw=message,
            )
        elif role == "user":
            yield _user_message(content, path, problems, message)
        else:
            problems.add(f"message role {role!r} is neither user nor assistant", path)


def _user_message(content: Any, path: str, problems: Problems, raw: Any) -> WireMessage:
    """A user message; a `tool` message when it holds tool_result blocks."""
    if isinstance(content, str):
        return WireMessage(role="user", text=content, path=path, raw=raw)
    texts: list[str] = []
    results: list[WireToolResult] = []
    other_seen, results_first = False, True
    for k, block in enumerate(items(content)):
        where, kind = f"{path}.content[{k}]", kind_of(block)
        if kind == "tool_result":
            results.append(_result(block, where))
            results_first = results_first and not other_seen
            continue
        other_seen = True
        if kind == "text":
            texts.append(text_of(block.get("text")))
        elif kind not in USER_MEDIA_BLOCKS:
            problems.add(f"unknown user content block type {kind!r}", where)
    if not isinstance(content, list):
        problems.add("content is neither a string nor a list of blocks", f"{path}.content")
    return WireMessage(
        role="tool" if results else "user",
        text="".join(texts),
        results=tuple(results),
        results_first=results_first,
        path=path,
        raw=raw,
    )


def _result(block: dict[str, Any], path: str) -> WireToolResult:
    content = block.get("content")
    blocks = items(content)
    if blocks and all(kind_of(b) == "text" for b in blocks):
        content = "".join(text_of(b.get("text")) for b in blocks)
    return WireToolResult(
        call_id=opt_str(block.get("tool_use_id")),
        name=None,
        content=content_text(content),
        is_error=block.get("is_error") is True,
        path=path,
    )


def turn_from_anthropic(content: Any, path: str, problems: Problems) -> Turn:
    """An assistant turn's content (request message or response), block by block."""
    if isinstance(content, str):
        return Turn(text=content)
    if not isinstance(content, list):
        problems.add("content is neither a string nor a list of blocks", path)
    turn = TurnBuilder()
    for k, block in enumerate(items(content)):
        where, kind = f"{path}[{k}]", kind_of(block)
        if kind == "text":
            turn.texts.append(text_of(block.get("text")))
        elif kind == "tool_use":
            turn.calls.append(
                WireToolCall(
                    id=opt_str(block.get("id")),
                    name=text_of(block.get("name")),
                    arguments=block.get("input"),
                    path=where,
                )
            )
        elif kind in ("thinking", "redacted_thinking"):
            turn.opaque.append(_opaque(block, where))
        elif kind not in SERVER_TOOL_BLOCKS:
            problems.add(f"unknown assistant content block type {kind!r}", where)
    return turn.turn()


def _opaque(block: dict[str, Any], path: str) -> Opaque:
    if block.get("type") == "thinking":
        return Opaque(
            kind="thinking",
            id=None,
            token=opt_str(block.get("signature")),
            text=text_of(block.get("thinking")),
            path=path,
            raw=block,
        )
    return Opaque(
        kind="redacted_thinking",
        id=None,
        token=opt_str(block.get("data")),
        text=None,
        path=path,
        raw=block,
    )


# ---- response --------------------------------------------------------------------------


def response_from_anthropic(reply: HttpReply, problems: Problems) -> WireResponse:
    if reply.events is None:
        folded = json_body(reply, problems)
    else:
        folded = _message_from_stream(reply.events, reply.transport_error, problems)
    if folded is None:
        return unreadable(reply)
    message, error = folded.body, folded.error
    turn = turn_from_anthropic(message.get("content"), "content", folded.turn_problems(problems))
    return WireResponse(
        status=reply.status,
        text=turn.text,
        calls=turn.calls,
        opaque=turn.opaque,
        stop_reason=opt_str(message.get("stop_reason")),
        usage=flat_usage(message.get("usage")),
        error=error[0] if error else reply.transport_error,
        error_type=error[1] if error else None,
        streamed=reply.events is not None,
        id=opt_str(message.get("id")),
        raw=message.get("content"),
    )


class _Stream:
    """The SDK's accumulation: `message_start` opens the message, blocks grow from deltas
    (tool input from `input_json_delta` fragments), `message_delta` sets the stop reason and
    updates usage."""

    def __init__(self, problems: Problems) -> None:
        self.problems = problems
        self.message: dict[str, Any] = {}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json_parts: dict[int, str] = {}
        self.usage: dict[str, Any] = {}
        self.error: tuple[str, str | None] | None = None
        self.stopped = False

    def feed(self, data: dict[str, Any], where: str) -> None:
        kind = data.get("type")
        if kind == "message_start":
            self.message = dict(obj(data.get("message")) or {})
            self.usage = dict(obj(self.message.get("usage")) or {})
        elif kind == "content_block_start":
            self.blocks[_index(data)] = dict(obj(data.get("content_block")) or {})
        elif kind == "content_block_delta":
            self._delta(_index(data), obj(data.get("delta")) or {}, where)
        elif kind == "content_block_stop":
            self._finish_block(_index(data), where)
        elif kind == "message_delta":
            delta = obj(data.get("delta")) or {}
            self.message.update({k: v for k, v in delta.items() if k != "type"})
            usage = obj(data.get("usage")) or {}
            self.usage.update({k: v for k, v in usage.items() if v is not None})
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error":
            error = obj(data.get("error")) or {}
            self.error = (text_of(error.get("message")), opt_str(error.get("type")))
        elif kind != "ping":
            self.problems.add(f"unknown stream event type {kind!r}", where)

    def _delta(self, index: int, delta: dict[str, Any], where: str) -> None:
        block = self.blocks.setdefault(index, {})
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = text_of(block.get("text")) + text_of(delta.get("text"))
        elif kind == "input_json_delta":
            self.json_parts[index] = self.json_parts.get(index, "") + text_of(
                delta.get("partial_json")
            )
        elif kind == "thinking_delta":
            block["thinking"] = text_of(block.get("thinking")) + text_of(delta.get("thinking"))
        elif kind == "signature_delta":
            block["signature"] = text_of(delta.get("signature"))
        elif kind == "citations_delta":
            block["citations"] = [*items(block.get("citations")), delta.get("citation")]
        else:
            self.problems.add(f"unknown content_block_delta type {kind!r}", where)

    def _finish_block(self, index: int, where: str, report: bool = True) -> None:
        partial = self.json_parts.pop(index, "")
        if not partial:
            return  # the SDK keeps the start block's `input` ({}) for an argument-less tool
        try:
            self.blocks.setdefault(index, {})["input"] = json.loads(partial)
        except json.JSONDecodeError as exc:
            if report:
                self.problems.add(f"streamed tool input is not valid JSON ({exc.msg})", where)
            self.blocks[index]["input"] = partial

    def result(self, complete: bool) -> dict[str, Any]:
        """The message; blocks never stopped (a cut stream) keep their partial input."""
        for index in list(self.json_parts):
            self._finish_block(index, "events", report=complete)
        content = [self.blocks[i] for i in sorted(self.blocks)]
        return {**self.message, "content": content, "usage": self.usage}


def _message_from_stream(
    events: tuple[SseEvent, ...], transport_error: str | None, problems: Problems
) -> Reassembled:
    stream = _Stream(problems)
    for n, event in enumerate(events):
        where = f"events[{n}]"
        data = obj(event.data)
        if event.event is None:
            # The SDK drops every frame without an `event:` line (providers.md §6 trap).
            problems.add("stream frame without an `event:` line (the SDK ignores it)", where)
        elif data is None:
            problems.add(f"stream event {event.event!r} data is not a JSON object", where)
        else:
            stream.feed(data, where)
    complete = stream.stopped and stream.error is None
    if not stream.stopped and stream.error is None and transport_error is None:
        problems.add("stream ended without message_stop", "events")
    return Reassembled(body=stream.result(complete), error=stream.error, complete=complete)


def _index(data: dict[str, Any]) -> int:
    index = data.get("index")
    return index if isinstance(index, int) else -1


def stream_completed(events: tuple[SseEvent, ...]) -> bool:
    """The message's terminal event arrived (`TERMINAL_EVENTS`), no error before it."""
    for event in events:
        kind = text_of((obj(event.data) or {}).get("type")) or event.event
        if kind == "error":
            return False
        if kind in TERMINAL_EVENTS:
            return True
    return False


def message_from_stream(events: tuple[SseEvent, ...]) -> dict[str, Any]:
    """The `Message` JSON the non-streaming call returns, folded from a stream's events."""
    return _message_from_stream(events, None, Problems("response")).body
