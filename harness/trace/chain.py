"""Stateful OpenAI Responses chains, resolved: a request that continues a stored response with
`previous_response_id` sends only its new items; the API answers as if it had been sent the
stored request's input, the stored response's output, then those items. When the response it
names is in the same trace and was stored (its request did not say `store: false`), the
request's messages are replaced by that effective conversation, so every rule judges what the
model saw — the statefulness itself is reported once, by L10 (`openai.store_false`,
`openai.no_previous_response_id`), not again by L5, L6 and L8 on every later call. A request
naming a response the trace does not hold, or one never stored (the API answers O4), is left
as sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from harness.trace.model import WireCall, WireMessage

CHAINED_PATH = "previous_response_id"  # where a stored turn stands in a resolved request


def resolve_chains(calls: Sequence[WireCall]) -> tuple[WireCall, ...]:
    """`calls` with every chained request's messages made effective (in order: a chain's
    earlier links are resolved first)."""
    by_response: dict[str, WireCall] = {}
    out: list[WireCall] = []
    for call in calls:
        stored = by_response.get(call.request.previous_response_id or "")
        if stored is not None and stored.request.store is not False:
            effective = (*stored.request.messages, stored_turn(stored), *call.request.messages)
            call = replace(call, request=replace(call.request, messages=effective))
        if call.response.id:
            by_response[call.response.id] = call
        out.append(call)
    return tuple(out)


def stored_turn(call: WireCall) -> WireMessage:
    """The model turn a stored response holds, as a request message."""
    response = call.response
    return WireMessage(
        role="model",
        text=response.text,
        calls=response.calls,
        opaque=response.opaque,
        path=CHAINED_PATH,
        raw=response.raw,
    )
