"""Faults in what each call sends besides the new round (L7, L8, L9): the selection of the
saved chat, and Gemini's trimming over the request-size limit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from google.genai import types

from harness.chat import Message
from harness.loop import reference
from harness.loop.adapters import Request
from harness.loop.adapters import gemini as gemini_adapter
from harness.loop.selection import MAX_SELECTED_MESSAGES, select_context
from tests.faulty_loops.variants import reference_with

# ---- the context cut inside a chain (L8) -----------------------------------------------------


def _last_twenty(
    history: Sequence[Message], limit: int = MAX_SELECTED_MESSAGES
) -> tuple[Message, ...]:
    """The last 20 saved messages, wherever the cut falls (here: on a tool result whose
    request is left behind)."""
    return tuple(history[-limit:])


context_cut_inside_chain = reference_with((reference, "select_context", _last_twenty))


# ---- Gemini: trimming without regard for exchanges or the active turn (L9) -------------------


def _oldest_contents_dropped(
    request: Request[types.Content], limit: int | None
) -> gemini_adapter.GeminiRequest:
    """Over the size limit, drop the oldest content until the request fits (keeping at least
    one): it cuts old exchanges in the middle and, once they are gone, the active turn."""
    wire = gemini_adapter.request_to_gemini(request)
    contents = list(wire.contents)
    while (
        limit is not None
        and len(contents) > 1
        and gemini_adapter.request_size(replace(wire, contents=contents)) > limit
    ):
        contents.pop(0)
    return replace(wire, contents=contents)


gemini_trims_any_content = reference_with((gemini_adapter, "fit_request", _oldest_contents_dropped))


# ---- more than the selection (L7) ------------------------------------------------------------


def _last_thirty(history: Sequence[Message], limit: int = MAX_SELECTED_MESSAGES) -> Any:
    """The window set to 30 messages, not the product's 20 (still cut at a user message)."""
    return select_context(history, 30)


context_over_twenty = reference_with((reference, "select_context", _last_thirty))
