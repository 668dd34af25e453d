"""OpenAI keeps no state (L10) and the Responses rules that spell it out: `store: false`, no
`previous_response_id`, reasoning items resent verbatim and in place within the query,
encrypted reasoning requested. The evidence is the API's own error text (providers.md §5):

- O4 ``Previous response with id 'resp_…' not found.`` — `previous_response_id` needs a
  stored response, and nothing is stored under `store: false`.
- O3 ``Item with id 'rs_…' not found. Items are not persisted when `store` is set to false.``
  — a reasoning item sent back without its `encrypted_content`.
- O5 ``Item 'fc_…' of type 'function_call' was provided without its required 'reasoning'
  item: 'rs_…'.`` / O6 ``Item 'rs_…' of type 'reasoning' was provided without its required
  following item.`` — reasoning dropped, or moved away from the item it preceded.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from harness.chat import AssistantMessage, ToolMessage, UserMessage
from harness.checks.input import CheckInput
from harness.checks.registry import rule
from harness.checks.view import asks_tools, ids_of, logical_calls, pairs, split, token_pair
from harness.findings import Finding
from harness.trace.common import items, obj, opt_str
from harness.trace.model import ApiName, Opaque, WireCall, WireMessage

API: tuple[ApiName, ...] = ("openai-responses",)
ENCRYPTED_REASONING = "reasoning.encrypted_content"
# A reasoning token or summary this long showing up in the chat or the answer was copied there,
# not written by chance.
MIN_LEAK_LENGTH = 24


def _responses(data: CheckInput) -> list[WireCall]:
    return [c for c in data.trace.calls if c.request.api == "openai-responses"]


def _reasoning(items_: tuple[Opaque, ...]) -> list[Opaque]:
    return [o for o in items_ if o.kind == "reasoning"]


# ---- L10 -------------------------------------------------------------------------------------


@rule(
    "L10",
    title="OpenAI keeps no state",
    description="Every Responses call carries store: false and no previous_response_id and "
    "resends the context and active sequence; encrypted reasoning lives only within its query "
    "(resent there), never saved in the chat or shown.",
    needs="wire",
    apis=API,
)
def reasoning_stays_in_the_query(data: CheckInput) -> Iterator[Finding]:
    for query in data.queries:
        for call in logical_calls(query.calls):
            found = split(call.request, query.message)
            context = found.context if found.user is not None else ()
            for message in context:
                for item in _reasoning(message.opaque):
                    yield Finding(
                        rule="L10",
                        query=query.index,
                        call=call.number,
                        path=item.path,
                        ids=tuple(filter(None, [item.id])),
                        message="a reasoning item from an earlier query was sent again: "
                        "reasoning must not be saved with the chat",
                        expected="reasoning only within the query that produced it",
                        actual=f"reasoning {item.id} in the saved context",
                    )
    yield from _leaks(data)


def _leaks(data: CheckInput) -> Iterator[Finding]:
    """Reasoning tokens or summaries copied into the saved chat, an answer, or the text of a
    later request (a summary resent as visible assistant text, e.g. `<think>…`)."""
    secrets = _secrets(data)
    if not secrets:
        return
    places: list[tuple[str, str]] = [
        (f"answer to user message {q.index + 1}", q.answer or "") for q in data.queries
    ]
    for i, message in enumerate(data.chat or ()):
        if isinstance(message, UserMessage | AssistantMessage):
            places.append((f"saved chat message {i + 1}", message.text))
        elif isinstance(message, ToolMessage):
            places.append((f"saved chat message {i + 1}", message.content))
    for where, text in places:
        for secret, number in secrets.items():
            if secret in text:
                yield Finding(
                    rule="L10",
                    call=number,
                    message=f"reasoning of call {number} appears in the {where}",
                    expected="reasoning kept in memory during the query only",
                    actual=where,
                )
    yield from _copied_into_requests(data, secrets)


def _secrets(data: CheckInput) -> dict[str, int]:
    """Each reasoning token and summary part at least `MIN_LEAK_LENGTH` long, with the call
    whose reply first gave it."""
    secrets: dict[str, int] = {}
    for call in _responses(data):
        for item in _reasoning(call.response.opaque):
            for text in (item.token, item.text, *_summary_parts(item)):
                if text and len(text) >= MIN_LEAK_LENGTH:
                    secrets.setdefault(text, call.number)
    return secrets


def _summary_parts(item: Opaque) -> list[str]:
    raw = obj(item.raw) or {}
    return [opt_str((obj(part) or {}).get("text")) or "" for part in items(raw.get("summary"))]


def _copied_into_requests(data: CheckInput, secrets: dict[str, int]) -> Iterator[Finding]:
    """A later request whose message text (not its reasoning items) holds an earlier reply's
    reasoning: it went back as words the model reads as the conversation."""
    for call in _responses(data):
        for message in call.request.messages:
            texts = [message.text, *(r.content for r in message.results)]
            given = sorted(
                {n for s, n in secrets.items() if n < call.number and any(s in t for t in texts)}
            )
            for number in given:
                yield Finding(
                    rule="L10",
                    call=call.number,
                    path=message.path,
                    message=f"reasoning of call {number} was sent back as {message.role} text: "
                    "reasoning goes back only as its reasoning item, within its query",
                    expected="no reasoning in the conversation's text",
                    actual=f"the reasoning summary of call {number} in a {message.role} message",
                )


# ---- the Responses rules ---------------------------------------------------------------------


@rule(
    "openai.store_false",
    title="store: false",
    description="Every Responses call sends store: false (the API default is true).",
    needs="wire",
    apis=API,
    part_of="L10",
)
def store_is_false(data: CheckInput) -> Iterator[Finding]:
    for call in _responses(data):
        if call.request.store is not False:
            yield Finding(
                rule="openai.store_false",
                call=call.number,
                path="store",
                message="the call does not send store: false",
                expected="false",
                actual="absent (the API default is true)"
                if call.request.store is None
                else str(call.request.store).lower(),
            )


@rule(
    "openai.no_previous_response_id",
    title="No previous_response_id",
    description="No Responses call uses previous_response_id; every call resends the chosen "
    "context and the active sequence instead (O4 under store: false).",
    needs="wire",
    apis=API,
    part_of="L10",
)
def no_previous_response_id(data: CheckInput) -> Iterator[Finding]:
    for call in _responses(data):
        if call.request.previous_response_id is not None:
            yield Finding(
                rule="openai.no_previous_response_id",
                call=call.number,
                path="previous_response_id",
                ids=(call.request.previous_response_id,),
                message="the call points at a stored response instead of resending the history",
                expected="no previous_response_id",
                actual=call.request.previous_response_id,
            )


@rule(
    "openai.reasoning_requested",
    title="Encrypted reasoning requested",
    description='Every Responses call asks for include: ["reasoning.encrypted_content"], so '
    "reasoning can travel back under store: false (O3).",
    needs="wire",
    apis=API,
    part_of="L10",
)
def encrypted_reasoning_requested(data: CheckInput) -> Iterator[Finding]:
    for call in _responses(data):
        if ENCRYPTED_REASONING not in call.request.include:
            yield Finding(
                rule="openai.reasoning_requested",
                call=call.number,
                path="include",
                message="the call does not ask for the encrypted reasoning",
                expected=f'include contains "{ENCRYPTED_REASONING}"',
                actual=repr(list(call.request.include)) if call.request.include else "absent",
            )


def _reasoning_replies(data: CheckInput) -> bool:
    return any(_reasoning(c.response.opaque) for c in _responses(data))


@rule(
    "openai.reasoning_resent",
    title="Reasoning resent verbatim and in place",
    description="Within a query, each reasoning item a reply gave goes back on the next calls "
    "unchanged (id, encrypted_content, summary) and in place, before the item it preceded "
    "(O5, O6).",
    needs="wire",
    apis=API,
    applies=_reasoning_replies,
    part_of="L10",
)
def reasoning_resent_verbatim_in_place(data: CheckInput) -> Iterator[Finding]:
    for query in data.queries:
        calls = [c for c in logical_calls(query.calls) if c.request.api == "openai-responses"]
        for a, b in pairs(calls):
            given = _reasoning(a.response.opaque)
            if not given or not asks_tools(a):
                continue
            turn = _turn_in(b.request.messages, a)
            if turn is None:
                continue  # the turn itself is missing: L5 says so
            for finding in _compare(a, b, given, turn):
                yield replace(finding, query=query.index)


def _changed(given: Opaque, back: Opaque) -> bool:
    """Sent back otherwise than given: its summary, or a blob the reply never gave for it."""
    same_blob = back.token == given.token or back.token in given.alternates
    return back.text != given.text or not same_blob


def _turn_in(messages: tuple[WireMessage, ...], a: WireCall) -> WireMessage | None:
    wanted = set(ids_of(a.response.calls))
    return next(
        (m for m in messages if m.role == "model" and wanted and wanted <= set(ids_of(m.calls))),
        None,
    )


def _compare(a: WireCall, b: WireCall, given: list[Opaque], turn: WireMessage) -> Iterator[Finding]:
    sent = {item.id: item for item in _reasoning(turn.opaque)}
    for item in given:
        back = sent.get(item.id)
        base = Finding(
            rule="openai.reasoning_resent", call=b.number, ids=(item.id or "",), message=""
        )
        if back is None:
            yield replace(
                base,
                path=turn.path,
                message=f"the reasoning item of call {a.number}'s reply was dropped (O5)",
                expected=f"reasoning {item.id} before the items it preceded",
                actual="missing",
            )
        elif _changed(item, back):
            same_blob = back.token == item.token or back.token in item.alternates
            changed = "summary" if same_blob else "encrypted_content"
            expected, actual = (
                token_pair(item.token, back.token)
                if changed == "encrypted_content"
                else token_pair(item.text, back.text)
            )
            yield replace(
                base,
                path=back.path,
                message=f"the {changed} of call {a.number}'s reasoning item was changed",
                expected=expected,
                actual=actual,
            )
    order_given, order_sent = _order(a.response.raw), _order(turn.raw)
    kept = [x for x in order_given if x in order_sent]
    if [x for x in order_sent if x in order_given] != kept:
        yield Finding(
            rule="openai.reasoning_resent",
            call=b.number,
            path=turn.path,
            ids=tuple(i for _, i in order_given),
            message=f"the reasoning items of call {a.number}'s reply are not in place",
            expected=" → ".join(f"{k} {i}" for k, i in order_given),
            actual=" → ".join(f"{k} {i}" for k, i in order_sent),
        )


def _order(raw: Any) -> list[tuple[str, str]]:
    """(type, id) of the reasoning and function_call items, in output order."""
    out: list[tuple[str, str]] = []
    for item in items(raw):
        data = obj(item) or {}
        kind = opt_str(data.get("type"))
        if kind in ("reasoning", "function_call"):
            out.append((kind, opt_str(data.get("id")) or opt_str(data.get("call_id")) or "?"))
    return out
