"""The one selection rule (L7, L8): at most 20 saved messages, cut only where a user message
starts, so no request/result chain is cut and every provider accepts the first message."""

from __future__ import annotations

import pytest

from harness.chat import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from harness.loop.selection import (
    MAX_SELECTED_MESSAGES,
    cut_point,
    select_context,
    split_exchanges,
)


def user(n: int) -> UserMessage:
    return UserMessage(text=f"question {n}")


def answer(n: int) -> AssistantMessage:
    return AssistantMessage(text=f"answer {n}")


def chain(n: int, calls: int = 1) -> list[Message]:
    """An assistant turn with `calls` requests, then one result per request."""
    requests = tuple(ToolCall(id=f"c{n}_{i}", name="lookup") for i in range(calls))
    results = [ToolMessage(call_id=r.id, name="lookup", content="ok") for r in requests]
    return [AssistantMessage(text="checking", tool_calls=requests), *results]


def exchange(n: int, chains: int = 0, calls: int = 1) -> list[Message]:
    body = [m for k in range(chains) for m in chain(n * 100 + k, calls)]
    return [user(n), *body, answer(n)]


def history(*exchanges: list[Message]) -> list[Message]:
    return [m for e in exchanges for m in e]


def test_the_limit_is_twenty() -> None:
    assert MAX_SELECTED_MESSAGES == 20


def test_fewer_than_twenty_are_all_selected() -> None:
    saved = history(exchange(1, chains=2), exchange(2))
    assert len(saved) < 20
    assert select_context(saved) == tuple(saved)


def test_empty_history_selects_nothing() -> None:
    assert select_context([]) == ()


def test_exactly_twenty_starting_with_a_user_message_are_all_selected() -> None:
    saved = history(*(exchange(n) for n in range(10)))
    assert len(saved) == 20
    assert select_context(saved) == tuple(saved)


def test_over_twenty_plain_exchanges_keep_the_last_twenty() -> None:
    saved = history(*(exchange(n) for n in range(15)))
    selected = select_context(saved)
    assert len(selected) == 20
    assert selected == tuple(saved[-20:])
    assert selected[0] == user(5)


def test_over_twenty_with_the_cut_on_an_answer_moves_to_the_next_user_message() -> None:
    saved = [answer(0), *history(*(exchange(n) for n in range(1, 11)))]  # 21 messages
    selected = select_context(saved)
    assert selected == tuple(saved[1:])
    assert isinstance(selected[0], UserMessage)


@pytest.mark.parametrize("inside", range(1, 6))
def test_a_cut_inside_a_chain_moves_later_to_the_next_user_message(inside: int) -> None:
    # old exchange: user, 2 chains of 2 requests (6 messages), answer = 8 messages
    old = exchange(1, chains=2, calls=2)
    recent = history(*(exchange(n) for n in range(2, 10)))  # 16 messages
    saved = [*old, *recent]
    # choose the window so the count-based cut lands `inside` messages into the old exchange
    limit = len(saved) - inside
    selected = select_context(saved, limit)
    assert selected == tuple(recent)
    assert len(selected) < limit


def test_no_selected_tool_result_lacks_its_request() -> None:
    saved = history(exchange(1, chains=3, calls=3), *(exchange(n, chains=1) for n in range(2, 6)))
    for limit in range(len(saved) + 1):
        selected = select_context(saved, limit)
        asked = {c.id for m in selected if isinstance(m, AssistantMessage) for c in m.tool_calls}
        answered = {m.call_id for m in selected if isinstance(m, ToolMessage)}
        assert asked == answered, limit
        assert len(selected) <= limit
        assert not selected or isinstance(selected[0], UserMessage)


def test_a_history_made_only_of_tool_chains_selects_nothing() -> None:
    # One user message long ago, then 30 messages of chains: the window holds no user message,
    # so the query's own user message opens the request.
    saved = [user(1), *(m for k in range(15) for m in chain(k))]
    assert cut_point(saved) == len(saved)
    assert select_context(saved) == ()


def test_a_history_of_only_chains_without_any_user_message_selects_nothing() -> None:
    saved = [m for k in range(4) for m in chain(k)]
    assert select_context(saved) == ()


def test_the_first_selected_message_is_a_user_message() -> None:
    saved = history(exchange(1, chains=3), exchange(2, chains=3), exchange(3, chains=3))
    assert len(saved) == 24  # the count-based cut (index 4) falls inside exchange 1's chains
    selected = select_context(saved)
    assert selected[0] == user(2)
    assert len(selected) == 16


def test_negative_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="0 or more"):
        select_context([user(1)], -1)


def test_split_exchanges_keeps_chains_inside_their_exchange() -> None:
    first, second = exchange(1, chains=2), exchange(2)
    assert split_exchanges([*first, *second]) == (tuple(first), tuple(second))


def test_split_exchanges_of_a_leading_non_user_part() -> None:
    lead = chain(9)
    assert split_exchanges([*lead, user(1)]) == (tuple(lead), (user(1),))
    assert split_exchanges([]) == ()
