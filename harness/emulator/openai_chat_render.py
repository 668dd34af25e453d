"""The emulated Chat Completions answer: the `chat.completion` object and its stream.

Shapes follow realwire (`llm__chat_completions_tool_chain_3rounds`,
`pydantic-ai__chat_completions_stream_tool_calls`): `call_` ids, arguments as a JSON string,
`finish_reason` `tool_calls` or `stop`; the stream is `data:`-only `chat.completion.chunk`
frames, tool-call deltas keyed by `index` with `id` and name only in the first, the
finish_reason in a chunk of its own, a usage chunk with `choices: []` when
`stream_options.include_usage`, then `data: [DONE]` (providers.md §6).
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
from harness.emulator.sse import data_event, done_event
from harness.emulator.tokens import Minter
from harness.emulator.wire import Context, Reply, Step, json_reply, sse_reply

Chunk = dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class Completion:
    """One answer, shared by the JSON and the streamed form."""

    id: str
    created: int
    text: str | None
    tool_calls: list[dict[str, Any]]
    usage: dict[str, Any]
    fingerprint: str

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"


def render_completion(step: Step, body: Mapping[str, Any], ctx: Context) -> Reply:
    completion = build_completion(step, body, ctx)
    headers = {"x-request-id": request_id(completion.id)}
    if ctx.stream:
        return sse_reply(stream_frames(completion, body, ctx), headers)
    return json_reply(200, completion_object(completion, ctx), headers)


def build_completion(step: Step, body: Mapping[str, Any], ctx: Context) -> Completion:
    minter, turn = ctx.minter, step.turn
    seed = (step.user_index, step.turn_index)
    calls = [
        {
            "id": "call_" + minter.alnum("chat-call", *seed, n, length=24),
            "type": "function",
            "function": {"name": c.name, "arguments": compact_json(dict(c.arguments))},
        }
        for n, c in enumerate(turn.calls)
    ]
    text = turn.text if (turn.text or turn.is_answer) else None
    return Completion(
        id="chatcmpl-" + minter.alnum("chatcmpl", *seed, length=29),
        created=created_at(*seed),
        text=text,
        tool_calls=calls,
        usage=_usage(body, text, calls),
        fingerprint="fp_" + minter.hex("system-fingerprint", length=10),
    )


def _usage(
    body: Mapping[str, Any], text: str | None, calls: list[dict[str, Any]]
) -> dict[str, Any]:
    prompt = estimate_tokens([body.get("messages"), body.get("tools")])
    completion = estimate_tokens([text or "", [c["function"] for c in calls]])
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def completion_object(completion: Completion, ctx: Context) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": completion.text}
    if completion.tool_calls:
        message["tool_calls"] = completion.tool_calls
    message.update({"refusal": None, "annotations": []})
    return {
        "id": completion.id,
        "object": "chat.completion",
        "created": completion.created,
        "model": ctx.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": completion.finish_reason,
            }
        ],
        "usage": completion.usage,
        "service_tier": "default",
        "system_fingerprint": completion.fingerprint,
    }


class _Chunks:
    """Wraps each delta in the chunk envelope every frame of one stream shares."""

    def __init__(self, completion: Completion, ctx: Context, with_usage: bool) -> None:
        self.completion, self.model, self.minter = completion, ctx.model, ctx.minter
        self.with_usage = with_usage
        self.frames: list[bytes] = []

    def add(self, delta: Chunk, finish_reason: str | None = None) -> None:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        self._emit([choice], None)

    def add_usage(self) -> None:
        self._emit([], self.completion.usage)

    def _emit(self, choices: list[Chunk], usage: dict[str, Any] | None) -> None:
        chunk: Chunk = {
            "id": self.completion.id,
            "object": "chat.completion.chunk",
            "created": self.completion.created,
            "model": self.model,
            "service_tier": "default",
            "system_fingerprint": self.completion.fingerprint,
            "choices": choices,
        }
        if self.with_usage:
            chunk["usage"] = usage
        chunk["obfuscation"] = _filler(self.minter, self.completion.id, len(self.frames))
        self.frames.append(data_event(chunk))


def _filler(minter: Minter, completion_id: str, n: int) -> str:
    return obfuscation(minter, completion_id, n, delta="chunk")


def stream_frames(completion: Completion, body: Mapping[str, Any], ctx: Context) -> list[bytes]:
    options = body.get("stream_options")
    with_usage = isinstance(options, Mapping) and options.get("include_usage") is True
    chunks = _Chunks(completion, ctx, with_usage)
    calls = completion.tool_calls
    first: Chunk = {"role": "assistant", "content": "" if completion.text is not None else None}
    if completion.text is None and calls:
        first["tool_calls"] = [_call_head(0, calls[0])]  # as realwire: the first call rides along
    first["refusal"] = None
    chunks.add(first)
    for piece in pieces(completion.text) if completion.text else []:
        chunks.add({"content": piece})
    for index, call in enumerate(calls):
        if index > 0 or completion.text is not None:
            chunks.add({"tool_calls": [_call_head(index, call)]})
        for piece in pieces(call["function"]["arguments"]):
            chunks.add({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    chunks.add({}, completion.finish_reason)
    if with_usage:
        chunks.add_usage()
    return [*chunks.frames, done_event()]


def _call_head(index: int, call: dict[str, Any]) -> Chunk:
    """The first delta of a call: the only one with its `id`, `type` and name."""
    function = {"name": call["function"]["name"], "arguments": ""}
    return {"index": index, "id": call["id"], "type": "function", "function": function}
