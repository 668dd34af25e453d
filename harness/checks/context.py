"""What each call sends besides the new round: L7 (one selection rule), L8 (the active sequence
resent whole, no chain cut) and L9 (Gemini trims old exchanges, never the active turn)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from harness.chat import AssistantMessage, Message, ToolMessage
from harness.checks.input import CheckInput, QueryInput
from harness.checks.registry import rule
from harness.checks.view import (
    Entry,
    chat_entries,
    describe_entry,
    entry_matches,
    failed,
    logical_calls,
    message_key,
    pairs,
    split,
    wire_entries,
)
from harness.findings import Finding
from harness.loop.selection import select_context
from harness.trace.model import WireCall, WireMessage

# ---- L7 --------------------------------------------------------------------------------------


def _with_history(data: CheckInput) -> bool:
    return bool(data.trace.calls) and data.scenario is not None


@rule(
    "L7",
    title="One selection rule",
    description="Each query sends a selection of the saved chat: a suffix of at most the "
    "context window (20 by default, a product setting) that cuts no tool chain, in order, no "
    "user message or text left out (saved tool chains may be flattened to their text; Gemini "
    "may trim whole old exchanges, L9).",
    needs="scenario",
    applies=_with_history,
)
def context_is_the_selection(data: CheckInput) -> Iterator[Finding]:
    assert data.scenario is not None
    trims = data.scenario.gemini_max_request_bytes is not None
    window = data.scenario.context_window
    for query in data.queries:
        calls = logical_calls(query.calls)
        if query.history is None or not calls:
            continue
        first = calls[0]
        sent_split = split(first.request, query.message)
        if sent_split.user is None:
            continue  # the user message itself is missing: L8 says so
        saved = [m for m in query.history if not _empty(m)]
        reference = chat_entries([m for m in select_context(query.history) if not _empty(m)])
        legal = [chat_entries(saved[start:]) for start in legal_starts(saved, window)]
        sent = wire_entries(sent_split.context)
        suffix_only = trims and first.request.api == "gemini"
        yield from _compare(query, first, sent, reference, legal, suffix_only, window)


def legal_starts(saved: Sequence[Message], window: int) -> list[int]:
    """Where a selection the design allows may start: at most `window` messages from the end,
    never inside a chain of requests and results — not on a tool result, which would be cut
    from the request that asked for it. (Starting on the reply after a chain leaves the whole
    chain out, which the design allows.)"""
    first = max(0, len(saved) - window)
    return [i for i in range(first, len(saved) + 1) if not _cuts_chain(saved, i)]


def _cuts_chain(saved: Sequence[Message], start: int) -> bool:
    return start < len(saved) and isinstance(saved[start], ToolMessage)


def _empty(message: Message) -> bool:
    return isinstance(message, AssistantMessage) and not message.text and not message.tool_calls


def _compare(
    query: QueryInput,
    call: WireCall,
    sent: Sequence[Entry],
    reference: Sequence[Entry],
    legal: Sequence[Sequence[Entry]],
    suffix_only: bool,
    window: int,
) -> Iterator[Finding]:
    base = Finding(rule="L7", query=query.index, call=call.number, path="messages", message="")
    if len(sent) > window:
        yield replace(
            base,
            message=f"{len(sent)} saved messages were sent before the user message",
            expected=f"at most {window}",
            actual=str(len(sent)),
        )
    candidates: list[Sequence[Entry]] = [*legal, reference]
    if suffix_only:  # old exchanges trimmed from the front (L9 judges how), maybe all of them
        users = [i for i, e in enumerate(reference) if e[0] == "user"]
        candidates += [reference[start:] for start in sorted({*users, len(reference)})]
    mismatches = [_mismatch(sent, expected) for expected in candidates]
    if None in mismatches:
        return
    mismatch = min(m for m in mismatches if m is not None)
    yield replace(
        base,
        message="the context sent is no selection of the saved chat (a suffix of at most "
        f"{window} messages that cuts no tool chain; first difference at sent message "
        f"{mismatch + 1})",
        expected=f"{len(reference)} message(s) from "
        + (describe_entry(reference[0]) if reference else "nothing"),
        actual=f"{len(sent)} message(s) from " + (describe_entry(sent[0]) if sent else "nothing"),
    )


def _mismatch(sent: Sequence[Entry], expected: Sequence[Entry]) -> int | None:
    """None when `sent` is `expected` in order — each saved message as saved or flattened to
    its text, leaving out only saved tool results and tool-only turns; else the position of the
    first sent message that does not fit (`len(sent)` when a selected message is missing)."""
    at = 0
    for position, entry in enumerate(sent):
        while True:
            if at == len(expected):
                return position
            taken = _take(entry, expected, at)
            if taken is not None:
                at = taken
                break
            if not _may_leave_out(expected[at]):
                return position
            at += 1
    if any(not _may_leave_out(e) for e in expected[at:]):
        return len(sent)
    return None


def _take(entry: Entry, expected: Sequence[Entry], at: int) -> int | None:
    """Where the saved messages `entry` stands for end: one saved message (as saved, or a
    turn flattened to its text), or several consecutive saved turns read as one — OpenAI's
    input items of one side run together into one turn on the wire."""
    if entry_matches(entry, expected[at]) or _flat_match(entry, expected[at]):
        return at + 1
    if entry[0] != "model":
        return None
    flattened = entry[2] == ()
    text, calls = "", ()
    for j in range(at, len(expected)):
        saved = expected[j]
        if saved[0] == "model":
            text = f"{text}{saved[1]}"
            more = saved[2] if isinstance(saved[2], tuple) and not flattened else ()
            calls = (*calls, *more)
            if entry_matches(entry, ("model", text, calls)):
                return j + 1
        elif not (saved[0] == "result" and flattened):
            return None
    return None


def _flat_match(sent: Entry, saved: Entry) -> bool:
    """A saved turn sent as its text alone (its requests left out)."""
    return sent[0] == saved[0] == "model" and sent[2] == () and sent[1] == saved[1]


def _may_leave_out(saved: Entry) -> bool:
    """Parts of a saved tool chain a flattening conversion drops (a chain left half-sent is
    L6's and L8's)."""
    return saved[0] == "result" or (saved[0] == "model" and not saved[1])


# ---- L8 --------------------------------------------------------------------------------------


@rule(
    "L8",
    title="The active sequence is resent whole",
    description="Every call of a query resends the same selected context and the whole "
    "active sequence (the user message, every turn and result so far); no chain of requests "
    "and results is cut in the middle.",
    needs="wire",
)
def active_sequence_resent_whole(data: CheckInput) -> Iterator[Finding]:
    for query in data.queries:
        calls = logical_calls(query.calls)
        for call in calls:
            yield from _chain_cut(query, call)
        for a, b in pairs(calls):
            if not failed(a):  # a rejected request may be fixed before it is sent again
                yield from _resent(query, a, b)


def _chain_cut(query: QueryInput, call: WireCall) -> Iterator[Finding]:
    found = split(call.request, query.message)
    if found.user is None:
        if query.message:
            yield Finding(
                rule="L8",
                query=query.index,
                call=call.number,
                path="messages",
                message="the request does not hold the query's user message",
                expected=repr(query.message[:60]),
                actual="missing",
            )
        return
    if found.context and found.context[0].role == "tool":
        first = found.context[0]
        yield Finding(
            rule="L8",
            query=query.index,
            call=call.number,
            path=first.path,
            ids=tuple(filter(None, (r.call_id for r in first.results))),
            message="the context starts inside a chain: results whose request was cut off",
            expected="a cut where a user message starts",
            actual="the first message holds tool results",
        )


def _resent(query: QueryInput, a: WireCall, b: WireCall) -> Iterator[Finding]:
    sa, sb = split(a.request, query.message), split(b.request, query.message)
    if sa.user is None or sb.user is None:
        return
    before, now = [message_key(m) for m in sa.context], [message_key(m) for m in sb.context]
    # Gemini may trim whole old exchanges as the active sequence grows (L9 judges how).
    shrinks = b.request.api == "gemini" and len(now) <= len(before)
    if now != before and not (shrinks and before[len(before) - len(now) :] == now):
        yield Finding(
            rule="L8",
            query=query.index,
            call=b.number,
            path="messages",
            message=f"the selected context differs from the one call {a.number} sent",
            expected=f"the same {len(before)} message(s) before the user message",
            actual=f"{len(now)} message(s), not the same",
        )
    dropped = _first_change(sa.active, sb.active)
    if dropped is not None:
        yield Finding(
            rule="L8",
            query=query.index,
            call=b.number,
            path=sb.active[dropped].path if dropped < len(sb.active) else "messages",
            message=f"the active sequence of call {a.number} was not resent whole: its "
            f"message {dropped + 1} after the user message was dropped or changed",
            expected=f"{len(sa.active)} earlier message(s) unchanged, then the new round",
            actual=f"{len(sb.active)} message(s) after the user message",
        )


def _first_change(earlier: Sequence[WireMessage], later: Sequence[WireMessage]) -> int | None:
    """The first position where `later` does not repeat `earlier`, or None."""
    for i, message in enumerate(earlier):
        if i >= len(later) or message_key(later[i]) != message_key(message):
            return i
    return None


# ---- L9 --------------------------------------------------------------------------------------


def _may_trim(data: CheckInput) -> bool:
    """Trimming can apply: the scenario sets a request-size limit, or (any cell, a cassette
    too) a Gemini call sent a shorter context than the call before it in its query."""
    if data.scenario is not None and data.scenario.gemini_max_request_bytes is not None:
        return True
    return any(_shrank(query, a, b) for query in data.queries for a, b in _gemini_pairs(query))


def _gemini_pairs(query: QueryInput) -> Iterator[tuple[WireCall, WireCall]]:
    return pairs([c for c in logical_calls(query.calls) if c.request.api == "gemini"])


def _shrank(query: QueryInput, a: WireCall, b: WireCall) -> bool:
    sa, sb = split(a.request, query.message), split(b.request, query.message)
    return sa.user is not None and sb.user is not None and len(sb.context) < len(sa.context)


@rule(
    "L9",
    title="Gemini trims, never the active turn",
    description="A Gemini request over its size limit drops whole old exchanges of the "
    "selected context, never any step of the active turn.",
    needs="wire",
    apis=("gemini",),
    applies=_may_trim,
)
def gemini_trims_old_exchanges_only(data: CheckInput) -> Iterator[Finding]:
    """Only where trimming can apply; an active turn resent short is L8's (one finding)."""
    if not _may_trim(data):
        return
    limit = data.scenario.gemini_max_request_bytes if data.scenario is not None else None
    for query in data.queries:
        for call in logical_calls(query.calls):
            if call.request.api == "gemini":
                yield from _trimmed(query, call, limit)


def _trimmed(query: QueryInput, call: WireCall, limit: int | None) -> Iterator[Finding]:
    found = split(call.request, query.message)
    base = Finding(rule="L9", query=query.index, call=call.number, message="")
    if found.user is None:
        if query.message:
            yield replace(
                base,
                path="contents",
                message="the query's user message (the start of the active turn) is missing",
                expected=repr(query.message[:60]),
                actual="trimmed away",
            )
        return
    if found.context and found.context[0].role == "model":
        yield replace(
            base,
            path=found.context[0].path,
            message="the trimmed context starts inside an exchange (a model turn first)",
            expected="whole exchanges dropped: the context starts with a user message",
            actual="a model turn first",
        )
    if limit is not None and call.request.size_bytes > limit and found.context:
        yield replace(
            base,
            path="contents",
            message=f"the request is over the size limit yet still carries "
            f"{len(found.context)} old message(s) that could have been trimmed",
            expected=f"at most {limit} bytes, or no old exchange left",
            actual=f"{call.request.size_bytes} bytes",
        )
