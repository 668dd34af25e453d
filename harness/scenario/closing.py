"""The script's closing text against L14. A correct loop hands the closing reply back as the
answer, so a closing text the L14 check would fail makes a scenario no loop can pass. The
judgement is the L14 check's own: `harness.checks.phrases`, through its public API, built the
way `harness.checks.ending` builds it (never a copy of its phrase lists or patterns).
"""

from __future__ import annotations

from harness.checks.phrases import CONTINUE_WORDS, LIMIT_WORDS, ClosingPhrases, contains_any
from harness.scenario.located import ErrorAt
from harness.scenario.model import ClosingExpectation, Scenario, ScriptedCall

FIX = "reword it, add a phrase to `closing_phrases`, or set `expect.closing.{field}: false`"


def check_closing_text(
    s: Scenario, index: int, pending: tuple[ScriptedCall, ...], error: ErrorAt
) -> None:
    """Raise at `messages[index].script.closing` if L14 would fail its text. L14 requires asking
    and explaining unless the expectation says `false`, as here."""
    msg = s.messages[index]
    expect = msg.expect.closing or ClosingExpectation()
    text = msg.script.closing
    path = ("messages", index, "script", "closing")
    phrases = ClosingPhrases(
        continue_words=CONTINUE_WORDS,
        limit_words=LIMIT_WORDS + s.closing_phrases.explains_limit,
        must_not_contain=expect.must_not_contain,
    )
    asks = phrases.asks_to_continue(text) or (
        contains_any(text, s.closing_phrases.asks_to_continue) is not None
    )
    if expect.asks_to_continue is not False and not asks:
        raise error(
            path,
            "does not ask whether to continue, so every loop would fail L14 on it; "
            + FIX.format(field="asks_to_continue"),
        )
    if expect.explains_limit is not False and not phrases.explains_limit(text):
        raise error(
            path,
            "does not explain the step limit, so every loop would fail L14 on it; "
            + FIX.format(field="explains_limit"),
        )
    writes = any((t := s.tool(c.name)) is None or t.effect == "write" for c in pending)
    claim = phrases.claim(text, writes_pending=writes)
    if claim is not None:
        raise error(
            path,
            f"claims a write that was not executed ({claim!r}), so every loop would fail "
            "L14 on it; reword it",
        )
