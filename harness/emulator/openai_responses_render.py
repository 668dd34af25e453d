"""The emulated Responses API's answer: the Response object, and the same as an event stream.

Shapes follow realwire (`llm__responses_*__gpt-5.5.yaml`, `mirascope__responses_stream_*`):
output items `reasoning` (`summary: []`, `encrypted_content` when asked for), `message` (an
`output_text` part with `annotations: []`), `function_call` (`fc_` id, `call_` call_id, the
arguments as a JSON string, `status: completed`); the stream is `event:` + `data:` frames whose
JSON repeats `type` and carries `sequence_number`, with no `[DONE]` (providers.md §6).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.emulator.openai_common import (
    compact_json,
    created_at,
    estimate_tokens,
    obfuscation,
    pieces,
    request_id,
)
from harness.emulator.openai_responses_checks import input_items
from harness.emulator.openai_responses_ids import (
    MESSAGE_SLOT,
    REASONING_SLOT,
    ResponseIds,
    ResponseKey,
)
from harness.emulator.sse import named_event
from harness.emulator.wire import Context, Reply, Step, json_reply, sse_reply

ENCRYPTED_REASONING = "reasoning.encrypted_content"
Item = dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class Answer:
    """One response's id, items and usage, shared by the JSON and the streamed form."""

    response_id: str
    key: ResponseKey
    output: list[Item]
    usage: dict[str, Any]


def render_response(step: Step, body: Mapping[str, Any], ctx: Context) -> Reply:
    answer = build_answer(step, body, ctx)
    keep_response(answer, body, ctx)
    headers = {"x-request-id": request_id(answer.response_id)}
    if ctx.stream:
        return sse_reply(stream_frames(answer, body, ctx), headers)
    return json_reply(200, response_object(answer, body, ctx, completed=True), headers)


def build_answer(step: Step, body: Mapping[str, Any], ctx: Context) -> Answer:
    ids = ResponseIds(ctx.minter)
    turn = step.turn
    reasoning = ctx.options.openai_reasoning
    has_message = turn.is_answer or bool(turn.text)
    key = ids.key(
        step.user_index,
        step.turn_index,
        created_at(step.user_index, step.turn_index),
        reasoning=reasoning,
        call_follows_reasoning=reasoning and not has_message,
    )
    output: list[Item] = []
    if reasoning:
        output.append(_reasoning_item(ids, key, body))
    if has_message:
        output.append(
            _message_item(
                ids.mint("msg", key, MESSAGE_SLOT), turn.text, _phase(reasoning, turn.is_answer)
            )
        )
    for n, call in enumerate(turn.calls):
        output.append(
            {
                "id": ids.mint("fc", key, ids.call_slot(n)),
                "type": "function_call",
                "status": "completed",
                "arguments": compact_json(dict(call.arguments)),
                "call_id": ids.call_id(key, n),
                "name": call.name,
            }
        )
    return Answer(
        response_id=ids.mint("resp", key, "response"),
        key=key,
        output=output,
        usage=_usage(body, output, reasoning),
    )


def keep_response(answer: Answer, body: Mapping[str, Any], ctx: Context) -> None:
    """Under `store` true or unset (the API's default) the run keeps the response, so a later
    request can continue it by `previous_response_id`."""
    responses = ctx.responses
    if responses is None or body.get("store", True) is False:
        return
    raw = body.get("input")
    sent = [{"role": "user", "content": raw}] if isinstance(raw, str) else input_items(body)
    previous = body.get("previous_response_id")
    responses.keep(
        answer.response_id, previous if isinstance(previous, str) else None, sent, answer.output
    )


def _reasoning_item(ids: ResponseIds, key: ResponseKey, body: Mapping[str, Any]) -> Item:
    item_id = ids.mint("rs", key, REASONING_SLOT)
    item: Item = {"id": item_id, "type": "reasoning"}
    include = body.get("include")
    if isinstance(include, list) and ENCRYPTED_REASONING in include:
        item["encrypted_content"] = ids.encrypted_content(item_id, key.created)
    item["summary"] = []
    return item


def _phase(reasoning: bool, is_answer: bool) -> str | None:
    """gpt-5.5 marks messages `commentary` (before tool calls) or `final_answer` (realwire);
    older models send no phase."""
    if not reasoning:
        return None
    return "final_answer" if is_answer else "commentary"


def _message_item(item_id: str, text: str, phase: str | None) -> Item:
    item: Item = {
        "id": item_id,
        "type": "message",
        "status": "completed",
        "content": [_text_part(text)],
    }
    if phase is not None:
        item["phase"] = phase
    item["role"] = "assistant"
    return item


def _text_part(text: str) -> Item:
    return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}


def _usage(body: Mapping[str, Any], output: list[Item], reasoning: bool) -> dict[str, Any]:
    prompt = [body.get("instructions"), body.get("input"), body.get("tools")]
    input_tokens = estimate_tokens(prompt)
    reasoning_tokens = 48 + len(output) * 8 if reasoning else 0
    written = [i.get("arguments") or i.get("content") for i in output if i["type"] != "reasoning"]
    output_tokens = estimate_tokens(written) + reasoning_tokens
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
        "total_tokens": input_tokens + output_tokens,
    }


def response_object(
    answer: Answer, body: Mapping[str, Any], ctx: Context, *, completed: bool
) -> dict[str, Any]:
    """The Response object, echoing the request's settings as the real one does."""
    created = answer.key.created
    return {
        "id": answer.response_id,
        "object": "response",
        "created_at": created,
        "status": "completed" if completed else "in_progress",
        "background": False,
        "billing": {"payer": "developer"},
        "completed_at": created + 1 if completed else None,
        "error": None,
        "frequency_penalty": 0.0,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "max_tool_calls": body.get("max_tool_calls"),
        "model": ctx.model,
        "moderation": None,
        "output": answer.output if completed else [],
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "presence_penalty": 0.0,
        "previous_response_id": body.get("previous_response_id"),
        "prompt_cache_key": body.get("prompt_cache_key"),
        "prompt_cache_retention": body.get("prompt_cache_retention"),
        "reasoning": _reasoning_echo(body, ctx),
        "safety_identifier": body.get("safety_identifier"),
        "service_tier": "default" if completed else "auto",
        "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0),
        "text": {"format": {"type": "text"}, "verbosity": "medium", **_mapping(body.get("text"))},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": [_tool_echo(t) for t in body.get("tools") or [] if isinstance(t, Mapping)],
        "top_logprobs": body.get("top_logprobs", 0),
        "top_p": body.get("top_p", 1.0),
        "truncation": body.get("truncation", "disabled"),
        "usage": answer.usage if completed else None,
        "user": body.get("user"),
        "metadata": _mapping(body.get("metadata")),
    }


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _reasoning_echo(body: Mapping[str, Any], ctx: Context) -> dict[str, Any]:
    default_effort = "medium" if ctx.options.openai_reasoning else None
    given = _mapping(body.get("reasoning"))
    return {"effort": given.get("effort", default_effort), "summary": given.get("summary")}


def _tool_echo(tool: Mapping[str, Any]) -> dict[str, Any]:
    """Function tools come back with `strict` (default true) and, when strict,
    `additionalProperties: false` added to the schema (realwire gpt-5.5 responses)."""
    if tool.get("type") != "function":
        return dict(tool)
    strict = tool.get("strict", True) is not False
    parameters = _mapping(tool.get("parameters"))
    if strict and parameters.get("type") == "object":
        parameters.setdefault("additionalProperties", False)
    return {
        "type": "function",
        "description": tool.get("description"),
        "name": tool.get("name"),
        "parameters": parameters,
        "strict": strict,
    }


class _Frames:
    """Numbers events in order (`sequence_number`) and encodes them."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def add(self, event: str, **fields: Any) -> None:
        payload = {"type": event, **fields, "sequence_number": len(self.frames)}
        self.frames.append(named_event(event, payload))


def stream_frames(answer: Answer, body: Mapping[str, Any], ctx: Context) -> list[bytes]:
    frames = _Frames()
    opening = response_object(answer, body, ctx, completed=False)
    frames.add("response.created", response=opening)
    frames.add("response.in_progress", response=opening)
    for index, item in enumerate(answer.output):
        if item["type"] == "message":
            _message_events(frames, index, item, ctx)
        elif item["type"] == "function_call":
            _call_events(frames, index, item, ctx)
        else:
            # Reasoning: the blob is only complete in `output_item.done` (providers.md §3).
            added = {"id": item["id"], "type": "reasoning", "summary": []}
            frames.add("response.output_item.added", item=added, output_index=index)
            frames.add("response.output_item.done", item=item, output_index=index)
    frames.add("response.completed", response=response_object(answer, body, ctx, completed=True))
    return frames.frames


def _message_events(frames: _Frames, index: int, item: Item, ctx: Context) -> None:
    text: str = item["content"][0]["text"]
    added = {**item, "status": "in_progress", "content": []}
    where = {"item_id": item["id"], "output_index": index}
    frames.add("response.output_item.added", item=added, output_index=index)
    frames.add("response.content_part.added", content_index=0, **where, part=_text_part(""))
    for n, delta in enumerate(pieces(text) if text else []):
        frames.add(
            "response.output_text.delta",
            content_index=0,
            delta=delta,
            item_id=item["id"],
            logprobs=[],
            obfuscation=obfuscation(ctx.minter, item["id"], n, delta=delta),
            output_index=index,
        )
    frames.add(
        "response.output_text.done",
        content_index=0,
        item_id=item["id"],
        logprobs=[],
        output_index=index,
        text=text,
    )
    frames.add("response.content_part.done", content_index=0, **where, part=_text_part(text))
    frames.add("response.output_item.done", item=item, output_index=index)


def _call_events(frames: _Frames, index: int, item: Item, ctx: Context) -> None:
    arguments: str = item["arguments"]
    added = {**item, "status": "in_progress", "arguments": ""}
    frames.add("response.output_item.added", item=added, output_index=index)
    for n, delta in enumerate(pieces(arguments)):
        frames.add(
            "response.function_call_arguments.delta",
            delta=delta,
            item_id=item["id"],
            obfuscation=obfuscation(ctx.minter, item["id"], n, delta=delta),
            output_index=index,
        )
    frames.add(
        "response.function_call_arguments.done",
        arguments=arguments,
        item_id=item["id"],
        output_index=index,
    )
    frames.add("response.output_item.done", item=item, output_index=index)
