"""Anthropic Messages rules, each with the API's own error text (providers.md §5):

- E1 ``Requests which include tool_use or tool_result blocks must define tools.`` — tools
  stay declared whenever the history holds tool blocks (the closing call included).
- E2 ``messages.N: `tool_use` ids were found without `tool_result` blocks immediately
  after…`` / E4 ``…Messages following `tool_use` blocks must begin with a matching number of
  `tool_result` blocks.`` — the results come first in the next user message.
- E5 ``Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is
  enabled, a final `assistant` message must start with a thinking block…`` — thinking blocks go
  back unchanged, signatures included.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from harness.checks.input import CheckInput
from harness.checks.registry import rule
from harness.checks.view import (
    appended_turn,
    asks_tools,
    clip_token,
    logical_calls,
    pairs,
    token_pair,
)
from harness.findings import Finding
from harness.trace.common import items, kind_of
from harness.trace.model import ApiName, WireCall, WireMessage

API: tuple[ApiName, ...] = ("anthropic",)


def _calls(data: CheckInput) -> list[WireCall]:
    return [c for c in data.trace.calls if c.request.api == "anthropic"]


def _tool_blocks(message: WireMessage) -> bool:
    return bool(message.calls or message.results)


def _any_tool_blocks(data: CheckInput) -> bool:
    return any(_tool_blocks(m) for c in _calls(data) for m in c.request.messages)


@rule(
    "anthropic.tools_declared",
    title="Tools declared with tool blocks",
    description="Whenever the history holds tool_use or tool_result blocks the request declares "
    "its tools, the closing call included (E1).",
    needs="wire",
    apis=API,
    applies=_any_tool_blocks,
)
def tools_declared_with_tool_blocks(data: CheckInput) -> Iterator[Finding]:
    for call in _calls(data):
        holder = next((m for m in call.request.messages if _tool_blocks(m)), None)
        if holder is not None and not call.request.declared_tools:
            yield Finding(
                rule="anthropic.tools_declared",
                call=call.number,
                path="tools",
                message=f"the history holds tool blocks ({holder.path}) but no tools are declared",
                expected="tools declared (with tool_choice none to forbid their use)",
                actual="no tools",
            )


def _any_results(data: CheckInput) -> bool:
    return any(m.results for c in _calls(data) for m in c.request.messages)


@rule(
    "anthropic.results_first",
    title="Results first in the next message",
    description="The tool_result blocks of a turn come first in the single next user message, "
    "before any text (E2, E4).",
    needs="wire",
    apis=API,
    applies=_any_results,
    part_of="L6",
)
def tool_results_come_first(data: CheckInput) -> Iterator[Finding]:
    for call in _calls(data):
        for message in call.request.messages:
            if message.results and not message.results_first:
                first = next(iter(items((message.raw or {}).get("content"))), None)
                yield Finding(
                    rule="anthropic.results_first",
                    call=call.number,
                    path=f"{message.path}.content",
                    ids=tuple(filter(None, (r.call_id for r in message.results))),
                    message="another block comes before the tool_result blocks",
                    expected="tool_result blocks first",
                    actual=f"a {kind_of(first) or 'non-result'} block first",
                )


def _thinking_replies(data: CheckInput) -> bool:
    return any(
        o.kind in ("thinking", "redacted_thinking") for c in _calls(data) for o in c.response.opaque
    )


@rule(
    "anthropic.thinking_unchanged",
    title="Thinking blocks resent unchanged",
    description="Within a query, the thinking and redacted_thinking blocks of a reply go back "
    "unchanged and in place in its turn, signatures included (E5).",
    needs="wire",
    apis=API,
    applies=_thinking_replies,
    part_of="L5",
)
def thinking_blocks_resent_unchanged(data: CheckInput) -> Iterator[Finding]:
    for query in data.queries:
        calls = [c for c in logical_calls(query.calls) if c.request.api == "anthropic"]
        for a, b in pairs(calls):
            given = [o for o in a.response.opaque if o.kind in ("thinking", "redacted_thinking")]
            if not given or not asks_tools(a):
                continue
            found = appended_turn(a, b, query.message)
            if found is None:
                continue  # the turn itself is missing: L5 says so
            sent = [(o.kind, o.token, o.text) for o in found.turn.opaque]
            wanted = [(o.kind, o.token, o.text) for o in given]
            if sent != wanted or _kinds(found.turn.raw) != _kinds({"content": a.response.raw}):
                expected, actual = _shown(wanted, sent)
                yield Finding(
                    rule="anthropic.thinking_unchanged",
                    query=query.index,
                    call=b.number,
                    path=found.turn.path,
                    message=f"the thinking blocks of call {a.number}'s reply were not sent back "
                    "unchanged and in place",
                    expected=expected,
                    actual=actual,
                )


def _kinds(message: object) -> list[str | None]:
    """The block types of a turn, in order (thinking must stay where the reply put it)."""
    content = message.get("content") if isinstance(message, dict) else None
    return [kind_of(block) for block in items(content)]


Block = tuple[str, str | None, str | None]  # kind, signature, thinking text


def _shown(wanted: Sequence[Block], sent: Sequence[Block]) -> tuple[str, str]:
    """The blocks as given and as sent, a changed signature shown where it changed."""
    expected: list[str] = []
    actual: list[str] = []
    for index in range(max(len(wanted), len(sent))):
        given = wanted[index] if index < len(wanted) else None
        back = sent[index] if index < len(sent) else None
        if given is not None and back is not None and given[0] == back[0]:
            shown_given, shown_back = token_pair(given[1], back[1])
        else:
            shown_given = clip_token(given[1]) if given else ""
            shown_back = clip_token(back[1]) if back else ""
        if given is not None:
            expected.append(f"{given[0]} (signature {shown_given})")
        if back is not None:
            text = " with changed text" if given and back[2] != given[2] else ""
            actual.append(f"{back[0]} (signature {shown_back}){text}")
    return ", ".join(expected), ", ".join(actual) or "none"
