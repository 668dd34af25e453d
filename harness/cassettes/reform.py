"""A recording served in the form the request asked for: a loop that never streams sends a
JSON request on a stream cell (and a loop that always streams the reverse). Answering with the
recorded SSE would crash the SDK (`'str' object has no attribute 'content'`), so the replay
rebuilds the other form from the recording, per provider: the JSON body the non-streaming
call returns, folded from the events as the SDK folds them (the trace modules), or the events
a stream of that body would carry (the emulator's spelling of each provider's stream).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from typing import Any

from harness.capture import SseEvent
from harness.cassettes.cassette import RecordedResponse
from harness.cassettes.sse import CRLF_SEPARATOR, compact_json
from harness.emulator.anthropic_render import block_frames
from harness.emulator.sse import named_event
from harness.endpoint.server import Answer, Incoming
from harness.trace import anthropic, gemini_response, openai_chat, openai_responses

# Request fields that only say "stream": set from the recording when comparing for drift.
STREAM_FIELDS = ("stream", "stream_options")
GEMINI_STREAM_ACTION = ":streamGenerateContent"
GEMINI_JSON_ACTION = ":generateContent"
JSON_TYPE = "application/json"
SSE_TYPE = "text/event-stream"


def asked_stream(incoming: Incoming) -> bool | None:
    """Whether the request asks for a stream (Gemini: its path; the others: `stream: true`);
    None off the model-call APIs."""
    if incoming.route is None:
        return None
    if incoming.route.stream is not None:
        return incoming.route.stream
    try:
        body = json.loads(incoming.body or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return False
    return isinstance(body, dict) and body.get("stream") is True


def mismatched(api: str | None, asked: bool | None, recorded: RecordedResponse) -> bool:
    """The request asked for the other form than a successful recording holds, and it can be
    rebuilt (a JSON body, or a stream)."""
    if api is None or asked is None or recorded.status >= 400:
        return False
    if asked:
        return recorded.sse is None and isinstance(recorded.json, dict)
    return recorded.sse is not None


def reformed(api: str, recorded: RecordedResponse, headers: list[tuple[str, str]]) -> Answer:
    """`recorded` in the other form, with its headers (content-type changed)."""
    kept = [(k, v) for k, v in headers if k.lower() != "content-type"]
    if recorded.sse is not None:
        events = tuple(SseEvent(event=e.event, data=e.data) for e in recorded.sse.events)
        body = json_from_events(api, events)
        return Answer(
            status=recorded.status,
            headers=[*kept, ("content-type", JSON_TYPE)],
            chunks=[compact_json(body).encode()],
        )
    frames = events_from_json(api, recorded.json)
    return Answer(
        status=recorded.status,
        headers=[*kept, ("content-type", f"{SSE_TYPE}; charset=utf-8")],
        chunks=frames,
        streamed=True,
    )


def json_from_events(api: str, events: tuple[SseEvent, ...]) -> dict[str, Any]:
    fold = {
        "anthropic": anthropic.message_from_stream,
        "openai-responses": openai_responses.response_from_stream,
        "openai-chat": openai_chat.completion_from_stream,
        "gemini": gemini_response.response_from_stream,
    }[api]
    return fold(events)


def events_from_json(api: str, body: Mapping[str, Any]) -> list[bytes]:
    spell = {
        "anthropic": _anthropic_events,
        "openai-responses": _responses_events,
        "openai-chat": _chat_events,
        "gemini": _gemini_events,
    }[api]
    return spell(body)


def _anthropic_events(message: Mapping[str, Any]) -> list[bytes]:
    usage = dict(message.get("usage") or {})
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    frames = [named_event("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message.get("content") or []):
        frames.extend(block_frames(index, block))
    delta = {"stop_reason": message.get("stop_reason"), "stop_sequence": None}
    frames.append(
        named_event("message_delta", {"type": "message_delta", "delta": delta, "usage": usage})
    )
    frames.append(named_event("message_stop", {"type": "message_stop"}))
    return frames


def _responses_events(response: Mapping[str, Any]) -> list[bytes]:
    numbers = itertools.count()

    def frame(kind: str, **fields: Any) -> bytes:
        return named_event(kind, {"type": kind, "sequence_number": next(numbers), **fields})

    started = {**response, "status": "in_progress", "output": []}
    frames = [frame("response.created", response=started)]
    for index, item in enumerate(response.get("output") or []):
        frames.append(frame("response.output_item.added", output_index=index, item=item))
        frames.append(frame("response.output_item.done", output_index=index, item=item))
    frames.append(frame("response.completed", response=dict(response)))
    return frames


def _chat_events(completion: Mapping[str, Any]) -> list[bytes]:
    head = {k: v for k, v in completion.items() if k not in ("choices", "usage")}
    head["object"] = "chat.completion.chunk"
    frames: list[bytes] = []
    for choice in completion.get("choices") or []:
        message = dict(choice.get("message") or {})
        calls = [
            {"index": n, **call} for n, call in enumerate(message.pop("tool_calls", None) or [])
        ]
        delta = {**{k: v for k, v in message.items() if v is not None}, "tool_calls": calls}
        if not calls:
            del delta["tool_calls"]
        index = choice.get("index", 0)
        frames.append(_data({**head, "choices": [{"index": index, "delta": delta}]}))
        finish = {"index": index, "delta": {}, "finish_reason": choice.get("finish_reason")}
        frames.append(_data({**head, "choices": [finish]}))
    if completion.get("usage") is not None:
        frames.append(_data({**head, "choices": [], "usage": completion["usage"]}))
    frames.append(b"data: [DONE]\n\n")
    return frames


def _gemini_events(response: Mapping[str, Any]) -> list[bytes]:
    """One chunk holding the whole response (its candidate's finishReason ends the stream)."""
    return [f"data: {compact_json(dict(response))}{CRLF_SEPARATOR}".encode()]


def _data(payload: Any) -> bytes:
    return f"data: {compact_json(payload)}\n\n".encode()
