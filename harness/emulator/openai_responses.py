"""The emulated OpenAI Responses API (`POST /v1/responses`). Under `store: false` every
request carries the whole history and nothing is kept; under `store` true or unset (the API's
default) the run keeps each response, and a later request may continue it by
`previous_response_id`, sending only its new items (`openai_store`).

Checks live in `openai_responses_checks`, ids and encrypted reasoning in
`openai_responses_ids`, the reply shapes in `openai_responses_render`; the error envelope,
malformed JSON and faults are shared with Chat Completions (`openai_common`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from harness.emulator.openai_common import OpenAiErrors
from harness.emulator.openai_responses_checks import CALL_TYPES, check_request, input_items
from harness.emulator.openai_responses_ids import ResponseIds
from harness.emulator.openai_responses_render import render_response
from harness.emulator.openai_store import Item
from harness.emulator.wire import ApiError, Context, Position, Reply, Step, text_of
from harness.trace.openai_responses import fold_interleaved

MODEL_ITEM_TYPES = CALL_TYPES | {"reasoning"}


class ResponsesApi(OpenAiErrors):
    name = "openai-responses"

    def validate(self, body: Any, ctx: Context) -> ApiError | None:
        if not isinstance(body, Mapping):
            return self.malformed("the body is not a JSON object")
        earlier = stored_chain(body, ctx)
        _RESOLVED.body, _RESOLVED.earlier = body, earlier or []
        return check_request(body, ResponseIds(ctx.minter), earlier)

    def position(self, body: Mapping[str, Any]) -> Position:
        # The server asks for the position with the body alone, right after `validate` on the
        # same thread: the chain that validation resolved is taken from there.
        earlier = _RESOLVED.earlier if _RESOLVED.body is body else []
        # A model given no function tool cannot call one: it answers with text.
        tools = body.get("tools")
        functions = [
            t
            for t in (tools if isinstance(tools, list) else ())
            if isinstance(t, Mapping) and t.get("type") == "function"
        ]
        forbidden = body.get("tool_choice") == "none" or not functions
        raw = body.get("input")
        if isinstance(raw, str):
            return Position(user_text=raw, model_turns=0, tools_forbidden=forbidden)
        items = [*earlier, *input_items(body)]
        users = [n for n, item in enumerate(items) if _is_user_message(item)]
        last = users[-1] if users else -1
        user_text = _message_text(items[last]) if users else None
        # A turn's calls sent back interleaved with their outputs are still one turn.
        after = [item for _, item in fold_interleaved(items[last + 1 :])]
        return Position(
            user_text=user_text,
            model_turns=model_turns(after),
            tools_forbidden=forbidden,
        )

    def render(self, step: Step, body: Mapping[str, Any], ctx: Context) -> Reply:
        return render_response(step, body, ctx)


class _Resolved(threading.local):
    """The chain `validate` resolved last on this thread, and for which body."""

    body: object = None
    earlier: Sequence[Item] = ()


_RESOLVED = _Resolved()


def stored_chain(body: Mapping[str, Any], ctx: Context) -> list[Item] | None:
    """The items before this request's own when it continues a stored response ([] when it
    continues none); None when its `previous_response_id` names no response of this run."""
    previous = text_of(body.get("previous_response_id"))
    if not body.get("previous_response_id"):
        return []
    responses = ctx.responses
    if previous is None or responses is None:
        return None
    return responses.chain(previous)


def model_turns(items: list[Mapping[str, Any]]) -> int:
    """Model turns in `items`: maximal runs of consecutive model output items (reasoning,
    calls, assistant messages); a function_call_output or any other item ends a run."""
    turns, in_run = 0, False
    for item in items:
        is_output = _is_model_output(item)
        if is_output and not in_run:
            turns += 1
        in_run = is_output
    return turns


def _is_model_output(item: Mapping[str, Any]) -> bool:
    if text_of(item.get("type")) in MODEL_ITEM_TYPES:
        return True
    return item.get("type") in (None, "message") and item.get("role") == "assistant"


def _is_user_message(item: Mapping[str, Any]) -> bool:
    return item.get("type") in (None, "message") and item.get("role") == "user"


def _message_text(item: Mapping[str, Any]) -> str:
    """A user message's text: the string content, or its `input_text` parts joined."""
    content = item.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "".join(
        str(p.get("text", ""))
        for p in parts
        if isinstance(p, Mapping) and p.get("type") in ("input_text", "text")
    )


API = ResponsesApi()
