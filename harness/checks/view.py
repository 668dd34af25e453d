"""Shared readings of a query's calls that several checks need: which calls count (retries
folded), where the query's user message sits in a request (context before it, active sequence
after it), comparable keys for messages, and where the budget ran out (the limit call, the
closing call)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from harness.chat import AssistantMessage, Message, ToolMessage, UserMessage
from harness.checks.input import CheckInput, QueryInput, ToolRunAt
from harness.loop.closing import NOT_EXECUTED_RESULT
from harness.trace.gemini import signature_bytes
from harness.trace.model import (
    Opaque,
    WireCall,
    WireMessage,
    WireRequest,
    WireToolCall,
    WireToolResult,
)

# ---- calls -----------------------------------------------------------------------------------


def failed(call: WireCall) -> bool:
    """No usable reply: no response, an HTTP error, or an error inside a 200 (a stream)."""
    status = call.response.status
    return status is None or status >= 400 or call.response.error is not None


def provider_failure(call: WireCall) -> bool:
    """The provider (or the network) failed, not the request: 5xx, 429, a cut or failed
    stream, no response. A 4xx other than 429 is the request's fault."""
    status = call.response.status
    if status is None or status >= 500 or status == 429:
        return True
    return status < 400 and call.response.error is not None


def asks_tools(call: WireCall) -> bool:
    return not failed(call) and bool(call.response.calls)


def answers(call: WireCall) -> bool:
    """A successful reply with text and no tool request: the loop's answer (L2)."""
    return not failed(call) and not call.response.calls and bool(call.response.text.strip())


def empty_reply(call: WireCall) -> bool:
    response = call.response
    return not failed(call) and not response.calls and not response.text.strip()


def logical_calls(calls: Sequence[WireCall]) -> tuple[WireCall, ...]:
    """The calls that count: a failed call sent again unchanged (a retry, by the SDK or the
    loop) is folded into the call that repeats it."""
    kept: list[WireCall] = []
    for i, call in enumerate(calls):
        following = calls[i + 1] if i + 1 < len(calls) else None
        if failed(call) and following is not None and following.request == call.request:
            continue
        kept.append(call)
    return tuple(kept)


# ---- where the query's user message is -------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Split:
    """A request cut at the query's user message. `user` is None when the request does not
    hold it (then `context` is every message and `active` is empty)."""

    context: tuple[WireMessage, ...]
    user: WireMessage | None
    active: tuple[WireMessage, ...]


def split(request: WireRequest, message: str) -> Split:
    messages = request.messages
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user" and messages[i].text == message:
            return Split(context=messages[:i], user=messages[i], active=messages[i + 1 :])
    return Split(context=messages, user=None, active=())


# ---- comparable keys -------------------------------------------------------------------------


def canonical(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)


def same_content(sent: object, saved: object) -> bool:
    """A result sent is the saved one: the same text, or the same JSON value written another
    way — Gemini's `functionResponse.response` is an object, so a client may send a tool's
    JSON text as that object, which the trace reads back compact."""
    if sent == saved:
        return True
    if not isinstance(sent, str) or not isinstance(saved, str):
        return False
    if sent.lstrip()[:1] not in ("{", "[") or saved.lstrip()[:1] not in ("{", "["):
        return False
    try:
        return bool(json.loads(sent) == json.loads(saved))
    except ValueError:
        return False


def call_key(call: WireToolCall) -> tuple[str | None, str, str]:
    return call.id, call.name, canonical(call.arguments)


def token_key(item: Opaque) -> object:
    """A token as comparable bytes: Gemini signatures come back in either base64 alphabet."""
    if item.kind in ("thought_signature", "thought"):
        return signature_bytes(item.token) or item.token
    return item.token


def opaque_key(item: Opaque) -> tuple[object, ...]:
    return item.kind, item.id, token_key(item), item.text


def result_key(result: WireToolResult) -> tuple[object, ...]:
    return result.call_id, result.name, result.content, result.is_error


def message_key(message: WireMessage) -> tuple[object, ...]:
    return (
        message.role,
        message.text,
        tuple(call_key(c) for c in message.calls),
        tuple(result_key(r) for r in message.results),
        tuple(opaque_key(o) for o in message.opaque),
    )


def calls_match(given: Sequence[WireToolCall], sent: Sequence[WireToolCall]) -> bool:
    """The requests sent back are the ones the model gave: same names and arguments in the
    same order, same ids. Where the model gave no id (Gemini) a client may add its own: the
    real API accepts that (realwire: pydantic-ai and llm-gemini requests answered 200)."""
    return len(given) == len(sent) and all(
        g.name == s.name
        and canonical(g.arguments) == canonical(s.arguments)
        and (g.id is None or g.id == s.id)
        for g, s in zip(given, sent, strict=True)
    )


def describe_calls(calls: Sequence[WireToolCall]) -> str:
    if not calls:
        return "no tool request"
    return ", ".join(f"{c.name}({canonical(c.arguments)}) id={c.id}" for c in calls)


def ids_of(calls: Sequence[WireToolCall]) -> tuple[str, ...]:
    return tuple(c.id for c in calls if c.id)


# ---- chat-message entries (the unit of the selection, L7) ------------------------------------

Entry = tuple[object, ...]


def wire_entries(messages: Sequence[WireMessage]) -> list[Entry]:
    """Wire messages as saved-chat units: one per user or model message, one per result."""
    out: list[Entry] = []
    for m in messages:
        if m.role == "tool":
            out.extend(("result", r.call_id, r.content) for r in m.results)
        elif m.role == "model":
            out.append(("model", m.text, tuple(call_key(c) for c in m.calls)))
        else:
            out.append(("user", m.text))
    return out


def chat_entries(messages: Sequence[Message]) -> list[Entry]:
    out: list[Entry] = []
    for m in messages:
        if isinstance(m, UserMessage):
            out.append(("user", m.text))
        elif isinstance(m, AssistantMessage):
            calls = tuple((c.id, c.name, canonical(dict(c.arguments))) for c in m.tool_calls)
            out.append(("model", m.text, calls))
        elif isinstance(m, ToolMessage):
            out.append(("result", m.call_id, m.content))
    return out


def entry_matches(sent: Entry, saved: Entry) -> bool:
    """A sent entry is the saved one; an id the wire leaves out (Gemini calls the model gave
    no id, answered by position) matches whatever id the chat saved for it."""
    if sent[0] != saved[0] or len(sent) != len(saved):
        return False
    if sent[0] == "user":
        return sent == saved
    if sent[0] == "result":
        return (sent[1] is None or sent[1] == saved[1]) and same_content(sent[2], saved[2])
    sent_calls, saved_calls = sent[2], saved[2]
    assert isinstance(sent_calls, tuple) and isinstance(saved_calls, tuple)
    return (
        sent[1] == saved[1]
        and len(sent_calls) == len(saved_calls)
        and all(
            (a[0] is None or a[0] == b[0]) and a[1:] == b[1:]
            for a, b in zip(sent_calls, saved_calls, strict=True)
        )
    )


def describe_entry(entry: Entry) -> str:
    kind = entry[0]
    if kind == "user":
        return f"user {short(str(entry[1]))!r}"
    if kind == "result":
        return f"result for {entry[1]}"
    calls = entry[2]
    names = ", ".join(str(c[1]) for c in calls) if isinstance(calls, tuple) else ""
    return f"model turn {short(str(entry[1]))!r}" + (f" asking {names}" if names else "")


def token_pair(given: str | None, sent: str | None, width: int = 20) -> tuple[str, str]:
    """Two opaque tokens shown side by side. When both exist and differ, each is shown around
    the first character where they part, with its length, so a change deep inside a long
    token is visible (their first and last characters alone may match)."""
    if not given or not sent or given == sent:
        return clip_token(given), clip_token(sent)
    at = next(
        (i for i, (a, b) in enumerate(zip(given, sent, strict=False)) if a != b),
        min(len(given), len(sent)),
    )
    start = max(0, at - width // 2)

    def around(token: str) -> str:
        before = "…" if start else ""
        after = "…" if start + width < len(token) else ""
        piece = token[start : start + width]
        return f"{before}{piece}{after} ({len(token)} chars, differing from char {at + 1})"

    return around(given), around(sent)


def clip_token(token: str | None) -> str:
    if not token:
        return "absent"
    return token if len(token) <= 40 else f"{token[:18]}…{token[-18:]} ({len(token)} chars)"


def short(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# ---- the round structure of a query ---------------------------------------------------------


def is_not_executed(result: WireToolResult) -> bool:
    return result.content.strip() == NOT_EXECUTED_RESULT


def last_results(request: WireRequest) -> tuple[WireToolResult, ...]:
    """The results in the request's final message (the round this call sends back)."""
    if request.messages and request.messages[-1].role == "tool":
        return request.messages[-1].results
    return ()


def looks_like_closing(previous: WireCall, call: WireCall) -> bool:
    """Wire-only sign of a closing call: tool choice none after a turn that asked for
    tools, or every result it sends back is the not-executed one (L11)."""
    results = last_results(call.request)
    if results and all(is_not_executed(r) for r in results):
        return True
    return call.request.tool_choice == "none" and asks_tools(previous)


@dataclass(frozen=True, kw_only=True)
class Shape:
    """A query's calls as rounds. `limit` is the call whose reply still asked for tools when
    the budget was spent (call `budget + 1`), `closing` the calls that act as closing calls
    (the one after `limit`, and any other that answers requests as not executed or forbids
    tools after a tool turn — an early one breaks L3)."""

    query: QueryInput
    calls: tuple[WireCall, ...]
    budget: int | None
    limit: WireCall | None
    closing: tuple[WireCall, ...]

    @property
    def position(self) -> dict[int, int]:
        """Call number → its 1-based position in the query."""
        return {c.number: i for i, c in enumerate(self.calls, 1)}

    def next_of(self, call: WireCall) -> WireCall | None:
        i = self.position[call.number]
        return self.calls[i] if i < len(self.calls) else None


def shape(query: QueryInput, budget: int | None) -> Shape:
    calls = logical_calls(query.calls)
    limit: WireCall | None = None
    closing: dict[int, WireCall] = {}
    if budget is not None and len(calls) > budget and asks_tools(calls[budget]):
        limit = calls[budget]
        if len(calls) > budget + 1:
            closing[budget + 1] = calls[budget + 1]
    for index, (previous, call) in enumerate(pairwise(calls), 1):
        if index not in closing and looks_like_closing(previous, call):
            closing[index] = call
    first = min(closing, default=None)
    if limit is None and budget is None and first is not None:
        limit = calls[first - 1] if asks_tools(calls[first - 1]) else None
    ordered = tuple(closing[i] for i in sorted(closing))
    return Shape(query=query, calls=calls, budget=budget, limit=limit, closing=ordered)


def pairs(calls: Sequence[WireCall]) -> Iterator[tuple[WireCall, WireCall]]:
    """Consecutive calls (a, b) of a query."""
    yield from pairwise(calls)


@dataclass(frozen=True, kw_only=True)
class Appended:
    """Where call b's request holds the turn call a's reply gave. `in_place`: at the end of
    a's active sequence (where the round appends it); else found elsewhere by its ids."""

    index: int
    turn: WireMessage
    after: WireMessage | None  # the message that follows the turn
    in_place: bool


def appended_turn(a: WireCall, b: WireCall, message: str) -> Appended | None:
    """Where call b's request holds the turn call a's reply gave: at the end of a's active
    sequence (where the round appends it) when the model message there carries the reply's
    ids; else wherever a model message carries them; else the message at that place."""
    sa, sb = split(a.request, message), split(b.request, message)
    messages = b.request.messages
    placed: Appended | None = None
    if sa.user is not None and sb.user is not None:
        index = len(messages) - len(sb.active) + len(sa.active)
        if index < len(messages) and messages[index].role == "model":
            placed = Appended(
                index=index, turn=messages[index], after=_after(messages, index), in_place=True
            )
    wanted = set(ids_of(a.response.calls))
    if not wanted or (placed is not None and wanted & set(ids_of(placed.turn.calls))):
        return placed
    for index, m in enumerate(messages):
        if m.role == "model" and wanted & set(ids_of(m.calls)):
            return Appended(index=index, turn=m, after=_after(messages, index), in_place=False)
    return placed


def _after(messages: Sequence[WireMessage], index: int) -> WireMessage | None:
    return messages[index + 1] if index + 1 < len(messages) else None


def answer_for(
    requests: Sequence[WireToolCall], message: WireMessage | None
) -> dict[int, WireToolResult]:
    """Request position → the result answering it in `message` (a tool message): by id when
    the request has one, else the result at the same position (Gemini without ids). Results
    that carry no id at all are read by position too: Gemini pairs them that way, and a client
    that dropped the ids the model gave is L5's finding, not a missing result."""
    if message is None or message.role != "tool":
        return {}
    by_id = any(r.call_id for r in message.results)
    out: dict[int, WireToolResult] = {}
    for i, request in enumerate(requests):
        if request.id and by_id:
            found = next((r for r in message.results if r.call_id == request.id), None)
        else:
            found = message.results[i] if i < len(message.results) else None
        if found is not None:
            out[i] = found
    return out


def any_tool_request(data: CheckInput) -> bool:
    return any(asks_tools(c) for c in data.trace.calls)


def any_answer(data: CheckInput) -> bool:
    return any(answers(c) for c in data.trace.calls)


def any_limit(data: CheckInput) -> bool:
    """The budget ran out (or a call acts as a closing call) in some query."""
    budget = data.scenario.max_rounds if data.scenario is not None else None
    for query in data.queries:
        found = shape(query, budget)
        if found.limit is not None or found.closing:
            return True
    return False


# ---- tool runs -------------------------------------------------------------------------------

RunKey = tuple[str, str]


def run_key(run: ToolRunAt) -> RunKey:
    return run.run.name, canonical(dict(run.run.arguments))


def request_key(request: WireToolCall) -> RunKey:
    return request.name, canonical(request.arguments)


def describe_run(run: ToolRunAt) -> str:
    return f"{run.run.name}({canonical(dict(run.run.arguments))})"


def runs_by_call(query: QueryInput) -> dict[int, list[ToolRunAt]]:
    """The query's tool runs by the model call they followed, each list in start order."""
    grouped: dict[int, list[ToolRunAt]] = defaultdict(list)
    for run in sorted(query.tool_runs or (), key=lambda r: r.run.started):
        grouped[run.call].append(run)
    return grouped


def match_runs(
    requested: Sequence[WireToolCall], runs: Sequence[ToolRunAt]
) -> tuple[dict[int, ToolRunAt], list[ToolRunAt]]:
    """Runs matched to the requests they carry out (same name and arguments, each request
    once, in run order), and the runs that match no request."""
    matched: dict[int, ToolRunAt] = {}
    unmatched: list[ToolRunAt] = []
    for run in runs:
        index = next(
            (
                i
                for i, r in enumerate(requested)
                if i not in matched and request_key(r) == run_key(run)
            ),
            None,
        )
        if index is None:
            unmatched.append(run)
        else:
            matched[index] = run
    return matched, unmatched
