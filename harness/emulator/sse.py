"""Server-sent event frames as each provider writes them (providers.md §6)."""

from __future__ import annotations

import json
from typing import Any


def _data(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def named_event(event: str, payload: Any) -> bytes:
    """`event: NAME` + `data: JSON` (Anthropic, OpenAI Responses). The Anthropic SDK drops
    frames without an `event:` line, so both lines are always written."""
    return f"event: {event}\ndata: {_data(payload)}\n\n".encode()


def data_event(payload: Any, separator: str = "\n\n") -> bytes:
    """`data: JSON` only (OpenAI Chat Completions; Gemini uses `\\r\\n\\r\\n`)."""
    return f"data: {_data(payload)}{separator}".encode()


def done_event() -> bytes:
    """Chat Completions' end marker."""
    return b"data: [DONE]\n\n"
