"""Gemini responses read into the neutral trace: one `GenerateContentResponse`, or a stream
of them (SSE with `alt=sse`, else a JSON array) merged chunk by chunk into one turn per
candidate, the way clients accumulate it (google-genai itself hands out the chunks)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.capture import SseEvent
from harness.trace.common import HttpReply, Problems, flat_usage, items, obj, opt_str, text_of
from harness.trace.gemini import field_of, turn_from_gemini
from harness.trace.model import WireResponse

# A Gemini stream has no closing frame: the chunk whose candidate carries a finishReason is
# its last (providers.md §6); a client that stops reading after it has the whole reply.
TERMINAL_FIELD = "finishReason"


def response_from_gemini(reply: HttpReply, problems: Problems) -> WireResponse:
    merged = _Merged()
    for where, chunk in _chunks(reply, problems):
        merged.add(chunk, where, problems)
    content = merged.content(0)
    turn = turn_from_gemini(content["parts"], "candidates[0].content.parts", problems)
    error = merged.error
    return WireResponse(
        status=reply.status,
        text=turn.text,
        calls=turn.calls,
        opaque=turn.opaque,
        stop_reason=merged.finish.get(0) or merged.block_reason,
        usage=merged.usage,
        error=error[0] if error else reply.transport_error,
        error_type=error[1] if error else None,
        candidates=len(merged.parts),
        streamed=reply.events is not None or isinstance(reply.body, list),
        id=merged.response_id,
        raw=content,
    )


def _chunks(reply: HttpReply, problems: Problems) -> list[tuple[str, dict[str, Any]]]:
    """The GenerateContentResponse objects, each with where it is: one body, the elements
    of the JSON array (`[n]`), or the SSE events' data (`events[n]`)."""
    if reply.events is not None:
        raw = [(f"events[{n}]", e.data) for n, e in enumerate(reply.events)]
    elif isinstance(reply.body, list):
        raw = [(f"[{n}]", chunk) for n, chunk in enumerate(reply.body)]
    else:
        raw = [("", reply.body)]
    chunks: list[tuple[str, dict[str, Any]]] = []
    for where, chunk in raw:
        if isinstance(chunk, dict):
            chunks.append((where, chunk))
        else:
            problems.add("response chunk is not a JSON object", where)
    return chunks


@dataclass
class _Merged:
    """Chunks folded per candidate index. Text continuing from an earlier chunk is appended
    to the previous text part; every other part — function calls, parts carrying a
    thoughtSignature, an empty text part after a call — is kept as its own part, so a
    signature that arrives late is never lost. Usage: the last value of each field wins."""

    parts: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    origin: dict[int, int] = field(default_factory=dict)  # candidate → chunk of its last part
    finish: dict[int, str] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    response_id: str | None = None
    block_reason: str | None = None
    error: tuple[str, str | None] | None = None
    chunk: int = 0

    def add(self, chunk: dict[str, Any], where: str, problems: Problems) -> None:
        self.chunk += 1
        error = obj(chunk.get("error"))
        if error is not None:
            message = text_of(error.get("message"))
            self.error = (message, opt_str(error.get("status")))
        self.usage.update(flat_usage(field_of(chunk, "usageMetadata")))
        self.response_id = self.response_id or opt_str(field_of(chunk, "responseId"))
        feedback = obj(field_of(chunk, "promptFeedback"))
        self.block_reason = opt_str(field_of(feedback, "blockReason")) or self.block_reason
        for position, candidate in enumerate(items(chunk.get("candidates"))):
            data = obj(candidate) or {}
            index = data.get("index", position)
            if not isinstance(index, int):
                problems.add("candidate index is not an integer", where)
                continue
            self._add_candidate(index, data)

    def _add_candidate(self, index: int, candidate: dict[str, Any]) -> None:
        merged = self.parts.setdefault(index, [])
        reason = opt_str(field_of(candidate, "finishReason"))
        if reason is not None:
            self.finish[index] = reason
        content = obj(candidate.get("content")) or {}
        for part in items(content.get("parts")):
            data = obj(part)
            if data is None:
                merged.append(part)
            elif merged and self.origin.get(index) != self.chunk and _continues(merged[-1], data):
                merged[-1] = {**merged[-1], "text": merged[-1]["text"] + data["text"]}
            else:
                merged.append(dict(data))
            self.origin[index] = self.chunk

    def content(self, index: int) -> dict[str, Any]:
        return {"role": "model", "parts": self.parts.get(index, [])}


def _continues(previous: Any, part: dict[str, Any]) -> bool:
    """`part` is plain text (no signature, no other field) of the same kind (thought or not)
    as the text part before it."""
    if set(part) - {"text", "thought"} or not isinstance(part.get("text"), str):
        return False
    data = obj(previous)
    if data is None or not isinstance(data.get("text"), str):
        return False
    return bool(data.get("thought")) == bool(part.get("thought"))


def stream_completed(events: tuple[SseEvent, ...]) -> bool:
    """A chunk with a candidate's finishReason (`TERMINAL_FIELD`) arrived."""
    for event in events:
        for candidate in items((obj(event.data) or {}).get("candidates")):
            if field_of(obj(candidate) or {}, TERMINAL_FIELD) is not None:
                return True
    return False


def response_from_stream(events: tuple[SseEvent, ...]) -> dict[str, Any]:
    """One `GenerateContentResponse`, as the non-streaming call returns it: the chunks' parts
    merged per candidate, the last chunk's other fields (usage, model version, id)."""
    problems = Problems("response")
    chunks = _chunks(
        HttpReply(status=200, body=None, events=events, transport_error=None), problems
    )
    merged = _Merged()
    for where, chunk in chunks:
        merged.add(chunk, where, problems)
    last = chunks[-1][1] if chunks else {}
    candidates = [
        {"content": merged.content(i), "finishReason": merged.finish.get(i), "index": i}
        for i in sorted(merged.parts)
    ]
    return {
        **last,
        "candidates": [{k: v for k, v in c.items() if v is not None} for c in candidates],
    }
