"""Anthropic Messages: the Message JSON and its SSE stream for one scripted step.

Shapes follow the realwire recordings (`../shared/realwire/anthropic/`, 2025–2026): key order of
`message_start`, `stop_details: null`, `caller: {"type": "direct"}` on tool_use blocks, a `ping`
after the first `content_block_start`, an empty `thinking_delta` before the `signature_delta`,
`input_json_delta` starting with `""` (and only `""` for a tool without arguments), and
`message_delta` usage as cumulative totals; a `redacted_thinking` block whole in its
`content_block_start`, with no deltas (realwire2).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.emulator.anthropic_validate import (
    REDACTED_MAGIC,
    THINKING_TOKEN_KIND,
    blocks_of,
    redacted_data,
    thinking_display,
    thinking_on,
)
from harness.emulator.sse import named_event
from harness.emulator.tokens import Minter
from harness.emulator.wire import Context, Reply, Step, json_reply, sse_reply
from harness.scenario.model import ScriptedCall, ScriptedTurn

SIGNATURE_PADDING = 240  # real signatures run to a few hundred base64 characters
FRAGMENTS = 3  # text and argument JSON arrive in a few deltas, as in the recordings
CACHE_CREATION = {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}


@dataclass(frozen=True, kw_only=True)
class Answer:
    """One reply's content, shared by the JSON and the streamed renderings."""

    message_id: str
    request_id: str
    model: str
    blocks: tuple[dict[str, Any], ...]
    stop_reason: str
    input_tokens: int
    output_tokens: int
    thinking_tokens: int | None


def render(step: Step, body: Mapping[str, Any], ctx: Context) -> Reply:
    answer = build_answer(step, body, ctx)
    headers = {"request-id": answer.request_id}
    if ctx.stream:
        return sse_reply(stream_frames(answer), headers)
    return json_reply(200, message_json(answer), headers)


def build_answer(step: Step, body: Mapping[str, Any], ctx: Context) -> Answer:
    turn = step.turn
    thinking = thinking_text(turn) if wants_thinking(body, ctx) else None
    blocks: list[dict[str, Any]] = []
    if thinking is not None and asks_for_redaction(body):
        turn_at = f"{step.user_index}/{step.turn_index}"
        blocks.append({"type": "redacted_thinking", "data": redacted_data(ctx.minter, turn_at)})
    elif thinking is not None:
        # display "omitted": the text is withheld but the block stays signed (for what is sent)
        shown = "" if thinking_display(body) == "omitted" else thinking
        blocks.append(thinking_block(shown, ctx.minter))
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    for index, call in enumerate(turn.calls):
        blocks.append(tool_use_block(call, tool_use_id(ctx.minter, step, index)))
    where = (step.user_index, step.turn_index)
    return Answer(
        message_id="msg_01" + ctx.minter.alnum("anthropic.msg", *where, length=22),
        request_id=request_id(ctx.minter, "anthropic.req", *where),
        model=ctx.model,
        blocks=tuple(blocks),
        stop_reason="end_turn" if turn.is_answer else "tool_use",
        input_tokens=estimate_tokens(json.dumps(body)) + 300,
        output_tokens=sum(estimate_tokens(json.dumps(b)) for b in blocks) + 5,
        thinking_tokens=thinking_tokens(thinking, body),
    )


def thinking_tokens(thinking: str | None, body: Mapping[str, Any]) -> int | None:
    """Counted when thinking is on: a turn that did not think reports 0 (realwire)."""
    if thinking is not None:
        return estimate_tokens(thinking)
    return 0 if thinking_on(body) else None


def wants_thinking(body: Mapping[str, Any], ctx: Context) -> bool:
    """The script asks for thinking blocks, unless the request switches thinking off."""
    config = body.get("thinking")
    disabled = isinstance(config, dict) and config.get("type") == "disabled"
    return ctx.options.anthropic_thinking and not disabled


def asks_for_redaction(body: Mapping[str, Any]) -> bool:
    """A request holding Anthropic's test string gets its thinking as `redacted_thinking`, as
    the real API answers it (realwire2 `pydantic-ai__*redacted_thinking*`: the string in the
    first user message, every later turn of the conversation redacted too)."""
    return any(
        REDACTED_MAGIC in str(b.get("text", ""))
        for m in body.get("messages") or []
        if isinstance(m, dict) and m.get("role") == "user"
        for b in blocks_of(m)
    )


def thinking_text(turn: ScriptedTurn) -> str:
    if turn.is_answer:
        return "I have what I need from the tools, so I can answer now."
    wanted = "; ".join(f"{c.name} with {json.dumps(dict(c.arguments))}" for c in turn.calls)
    return f"The user needs data I do not have yet. I will call {wanted}."


def thinking_block(text: str, minter: Minter) -> dict[str, Any]:
    raw = minter.token(THINKING_TOKEN_KIND, text, padding=SIGNATURE_PADDING)
    return {"type": "thinking", "thinking": text, "signature": base64.b64encode(raw).decode()}


def tool_use_block(call: ScriptedCall, block_id: str) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": block_id,
        "name": call.name,
        "input": dict(call.arguments),
        "caller": {"type": "direct"},
    }


def tool_use_id(minter: Minter, step: Step, index: int) -> str:
    return "toolu_01" + minter.alnum(
        "anthropic.toolu", step.user_index, step.turn_index, index, length=22
    )


def request_id(minter: Minter, *parts: object) -> str:
    """`req_011C…` as in the recorded `request-id` headers and error bodies."""
    return "req_011C" + minter.alnum(*parts, length=20)


def estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


# --- non-streamed ---------------------------------------------------------------------------


def message_json(answer: Answer) -> dict[str, Any]:
    return {
        "model": answer.model,
        "id": answer.message_id,
        "type": "message",
        "role": "assistant",
        "content": list(answer.blocks),
        "stop_reason": answer.stop_reason,
        "stop_sequence": None,
        "stop_details": None,
        "usage": full_usage(answer, answer.output_tokens, details=True),
    }


def full_usage(answer: Answer, output_tokens: int, details: bool) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "input_tokens": answer.input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "cache_creation": dict(CACHE_CREATION),
        "output_tokens": output_tokens,
        "service_tier": "standard",
        "inference_geo": "not_available",
    }
    if details and answer.thinking_tokens is not None:
        usage["output_tokens_details"] = {"thinking_tokens": answer.thinking_tokens}
    return usage


# --- streamed -------------------------------------------------------------------------------


def stream_frames(answer: Answer) -> list[bytes]:
    frames = [message_start(answer)]
    for index, block in enumerate(answer.blocks):
        frames.extend(block_frames(index, block))
    # The recordings show one ping, right after the first content_block_start.
    frames.insert(2 if answer.blocks else 1, named_event("ping", {"type": "ping"}))
    frames.append(message_delta(answer))
    frames.append(named_event("message_stop", {"type": "message_stop"}))
    return frames


def message_start(answer: Answer) -> bytes:
    message = {
        **message_json(answer),
        "content": [],
        "stop_reason": None,
        "usage": full_usage(answer, min(answer.output_tokens, 8), details=False),
    }
    return named_event("message_start", {"type": "message_start", "message": message})


def message_delta(answer: Answer) -> bytes:
    usage: dict[str, Any] = {
        "input_tokens": answer.input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": answer.output_tokens,
    }
    if answer.thinking_tokens is not None:
        usage["output_tokens_details"] = {"thinking_tokens": answer.thinking_tokens}
    delta = {"stop_reason": answer.stop_reason, "stop_sequence": None, "stop_details": None}
    return named_event("message_delta", {"type": "message_delta", "delta": delta, "usage": usage})


def block_frames(index: int, block: Mapping[str, Any]) -> Iterator[bytes]:
    kind = block["type"]
    start: dict[str, Any]
    if kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces(block["thinking"])]
        deltas.append({"type": "thinking_delta", "thinking": ""})
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "redacted_thinking":
        start, deltas = dict(block), []  # complete in its start event, no deltas (realwire2)
    elif kind == "text":
        start = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in pieces(block["text"])]
    elif kind == "tool_use":
        start = {**block, "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in json_pieces(block)]
    else:
        raise ValueError(f"anthropic emulator: cannot stream a {kind!r} block")
    yield event("content_block_start", index=index, content_block=start)
    for delta in deltas:
        yield event("content_block_delta", index=index, delta=delta)
    yield event("content_block_stop", index=index)


def event(name: str, **fields: Any) -> bytes:
    return named_event(name, {"type": name, **fields})


def json_pieces(block: Mapping[str, Any]) -> list[str]:
    """`""` first, then the argument JSON in a few fragments; a tool without arguments gets
    the single `""` the recordings show."""
    if not block["input"]:
        return [""]
    return ["", *pieces(json.dumps(block["input"], ensure_ascii=False))]


def pieces(text: str, count: int = FRAGMENTS) -> Sequence[str]:
    """`text` cut into up to `count` consecutive non-empty parts that join back to it."""
    if len(text) <= count:
        return [text] if text else []
    size = -(-len(text) // count)
    return [text[i : i + size] for i in range(0, len(text), size)]
