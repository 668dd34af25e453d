"""Gemini rules (trimming is L9, in `context.py`), with the evidence (providers.md §4, §5):

- One response per call: the loop reads `candidates[0]`; asking for more (candidateCount) or
  getting more leaves the others unanswered.
- G3 ``Function call is missing a thought_signature in functionCall parts…`` — the model
  `Content` goes back with every thought signature it came with, on its function calls and its
  other parts. The calls themselves (names, arguments, order, and the ids the model gave; a
  client may add ids where the model gave none, see `calls_match`) and the text are L5's.
- Automatic function calling: with Python callables as tools, google-genai runs them itself and
  sends extra requests marked `+afc` in `x-goog-api-client` (google/genai/models.py:
  `get_usage_header(…, usage='afc')`), so the loop no longer controls rounds or budget.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Sequence
from itertools import pairwise

from harness.checks.input import CheckInput
from harness.checks.registry import rule
from harness.checks.view import (
    appended_turn,
    asks_tools,
    ids_of,
    logical_calls,
    pairs,
    token_pair,
)
from harness.findings import Finding
from harness.trace.common import items, obj
from harness.trace.gemini import field_of, signature_bytes
from harness.trace.model import ApiName, Opaque, WireCall, WireMessage, WireResponse, WireToolCall

API: tuple[ApiName, ...] = ("gemini",)


def _calls(data: CheckInput) -> list[WireCall]:
    return [c for c in data.trace.calls if c.request.api == "gemini"]


@rule(
    "gemini.one_candidate",
    title="One response per call",
    description="Each call asks for and gets a single candidate; the loop answers one turn per "
    "call.",
    needs="wire",
    apis=API,
)
def one_candidate_per_call(data: CheckInput) -> Iterator[Finding]:
    for call in _calls(data):
        config = call.request.extra.get("generationConfig")
        asked = field_of(config if isinstance(config, dict) else None, "candidateCount")
        if isinstance(asked, int) and asked > 1:
            yield Finding(
                rule="gemini.one_candidate",
                call=call.number,
                path="generationConfig.candidateCount",
                message="the call asks for several candidates",
                expected="1 (or absent)",
                actual=str(asked),
            )
        if call.response.candidates > 1:
            yield Finding(
                rule="gemini.one_candidate",
                call=call.number,
                path="response.candidates",
                message="the reply holds several candidates; only one can continue the loop",
                expected="1",
                actual=str(call.response.candidates),
            )


@rule(
    "gemini.no_afc",
    title="No automatic function calling",
    description="The loop runs the tools, not the SDK: no request carries the SDK's `afc` "
    "usage mark or its answers (Python callables as tools turn AFC on, and the SDK adds "
    "requests the loop never made).",
    needs="wire",
    apis=API,
)
def no_automatic_function_calling(data: CheckInput) -> Iterator[Finding]:
    for call in _calls(data):
        if call.request.automatic_function_calling:
            yield Finding(
                rule="gemini.no_afc",
                call=call.number,
                path="headers.x-goog-api-client",
                message="the SDK's automatic function calling made this request",
                expected="automatic function calling disabled",
                actual="x-goog-api-client carries +afc",
            )
        else:
            yield from _afc_answers(call)


def _afc_answers(call: WireCall) -> Iterator[Finding]:
    """The SDK's own answers: `{"result": …}` without the id of a call that had one (what
    google-genai builds when it runs the functions itself, providers.md §4)."""
    messages = call.request.messages
    for before, message in pairwise(messages):
        if message.role != "tool" or not ids_of(before.calls):
            continue
        for k, part in enumerate(items((obj(message.raw) or {}).get("parts"))):
            answer = obj(field_of(obj(part), "functionResponse"))
            response = obj((answer or {}).get("response"))
            if answer is not None and "id" not in answer and set(response or {}) == {"result"}:
                yield Finding(
                    rule="gemini.no_afc",
                    call=call.number,
                    path=f"{message.path}.parts[{k}]",
                    message="an answer shaped by the SDK's automatic function calling "
                    '({"result": …}, the call\'s id left out)',
                    expected="the loop's own answer carrying the call's id",
                    actual=f"functionResponse {answer.get('name')!r} without id",
                )


def _replies_resent(data: CheckInput) -> bool:
    return any(asks_tools(c) for c in _calls(data))


@rule(
    "gemini.content_unchanged",
    title="Model content returned unchanged",
    description="Within a query, each model Content goes back with every thought signature "
    "it came with, on its function calls and its other parts, unchanged (G3); the calls and "
    "text themselves are L5's.",
    needs="wire",
    apis=API,
    applies=_replies_resent,
    part_of="L5",
)
def model_content_returned_unchanged(data: CheckInput) -> Iterator[Finding]:
    for query in data.queries:
        calls = [c for c in logical_calls(query.calls) if c.request.api == "gemini"]
        for a, b in pairs(calls):
            if not asks_tools(a):
                continue
            found = appended_turn(a, b, query.message)
            if found is None:
                continue  # the turn itself is missing: L5 says so
            for problem, expected, actual in _differences(a.response, found.turn):
                yield Finding(
                    rule="gemini.content_unchanged",
                    query=query.index,
                    call=b.number,
                    path=found.turn.path,
                    message=f"the model content of call {a.number}'s reply was changed: {problem}",
                    expected=expected,
                    actual=actual,
                )


def _differences(given: WireResponse, sent: WireMessage) -> Iterator[tuple[str, str, str]]:
    """Thought signatures only: the function calls themselves and the text are L5's (a call
    changed, dropped or added is reported there, once), and thought summaries without a
    signature are not needed back (the API accepts their absence). A call's signature is
    judged when the calls line up by name."""
    same_calls = [c.name for c in given.calls] == [c.name for c in sent.calls]
    if same_calls and [_signature(c.signature) for c in given.calls] != [
        _signature(c.signature) for c in sent.calls
    ]:
        yield (
            "a function call lost or changed its thought signature",
            *_signed_pair(given.calls, sent.calls),
        )
    elif _part_signatures(given.opaque, given.calls) != _part_signatures(sent.opaque, sent.calls):
        given_count = len(_part_signatures(given.opaque, given.calls))
        sent_count = len(_part_signatures(sent.opaque, sent.calls))
        yield (
            "thought signatures differ",
            f"{given_count} signature(s) as given",
            f"{sent_count} signature(s)" + (", changed" if given_count == sent_count else ""),
        )


def _signature(token: str | None) -> bytes | str | None:
    return signature_bytes(token) or token


def _part_signatures(
    opaque: tuple[Opaque, ...], calls: Sequence[WireToolCall]
) -> list[bytes | str | None]:
    """The signatures on the parts that are no function call (those ride on their call)."""
    on_calls = {c.path for c in calls}
    return [_signature(o.token) for o in opaque if o.token and o.path not in on_calls]


def _signed_pair(given: Sequence[WireToolCall], sent: Sequence[WireToolCall]) -> tuple[str, str]:
    """Each call as given and as sent: signed or not, and a changed signature shown where it
    changed (compared as bytes: the SDK sends back URL-safe base64 what the API gave as
    standard base64)."""
    expected: list[str] = []
    actual: list[str] = []
    for g, s in zip(given, sent, strict=True):
        a, b = _standard(g.signature), _standard(s.signature)
        if a and b and a != b:
            a, b = token_pair(a, b)
            expected.append(f"{g.name} signed {a}")
            actual.append(f"{s.name} signed {b}")
        else:
            expected.append(f"{g.name} {'signed' if a else 'unsigned'}")
            actual.append(f"{s.name} {'signed' if b else 'unsigned'}")
    return ", ".join(expected) or "no call", ", ".join(actual) or "no call"


def _standard(token: str | None) -> str | None:
    """A signature in standard base64 (as the API gives it), whichever alphabet it came in."""
    raw = signature_bytes(token)
    return base64.b64encode(raw).decode("ascii") if raw else token
