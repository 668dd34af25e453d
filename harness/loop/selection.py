"""The one context-selection rule (L7, L8): which saved messages a query sends.

Decided here once, for every provider; adapters only convert the selection to their format.

The rule: at most the last `MAX_SELECTED_MESSAGES` saved messages, cut only where a new user
message starts. A cut there can never fall inside a request/result chain (a user message never
sits between a tool request and its results), and it gives every provider a first message it
accepts:

- Anthropic rejects a first message from the assistant: ``messages: first message must use the
  "user" role`` (https://github.com/lobehub/lobehub/issues/1601).
- Gemini rejects a `contents` list that starts with a model turn (``Please ensure that
  multiturn requests alternate between user and model``,
  https://github.com/NousResearch/hermes-agent/issues/55427), and a function-call turn must
  follow a user turn (G2).
- OpenAI Responses is not known to require a user-first input (unconfirmed); the stricter
  shared rule costs it nothing.

When the window holds no user message at all (it lies inside one long chain of tool requests
and results), the selection is empty: the query's own user message then opens the request.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.chat import Message, UserMessage

MAX_SELECTED_MESSAGES = 20
"""The article's product decision: at most the last 20 saved chat messages (L7)."""


def select_context(
    history: Sequence[Message], limit: int = MAX_SELECTED_MESSAGES
) -> tuple[Message, ...]:
    """The saved messages a query resends: at most `limit`, starting with a user message.

    The cut moves later (fewer messages) until it falls on a user message (L8: a chain is
    never cut in the middle)."""
    start = cut_point(history, limit)
    return tuple(history[start:])


def cut_point(history: Sequence[Message], limit: int = MAX_SELECTED_MESSAGES) -> int:
    """Index of the first selected message; `len(history)` when nothing is selected."""
    if limit < 0:
        raise ValueError(f"the selection limit must be 0 or more, got {limit}")
    start = max(0, len(history) - limit)
    while start < len(history) and not isinstance(history[start], UserMessage):
        start += 1
    return start


def split_exchanges(context: Sequence[Message]) -> tuple[tuple[Message, ...], ...]:
    """The selection as whole exchanges: a user message through its chains and answer.

    Used to trim old context without breaking a chain (L9). Messages before the first user
    message (not produced by `select_context`) form one leading exchange of their own."""
    exchanges: list[list[Message]] = []
    for message in context:
        if isinstance(message, UserMessage) or not exchanges:
            exchanges.append([])
        exchanges[-1].append(message)
    return tuple(tuple(exchange) for exchange in exchanges)
