"""derive_outcome: the article's counting of rounds (L2, L3, L11)."""

from __future__ import annotations

import pytest

from harness.scenario.expected import derive_outcome
from harness.scenario.model import Script, ScriptedCall, ScriptedTurn


def script(*kinds: str) -> Script:
    """'t' = a turn asking for one tool, 'a' = an answer."""
    turns = tuple(
        ScriptedTurn(text="done") if k == "a" else ScriptedTurn(calls=(ScriptedCall(name=f"t{i}"),))
        for i, k in enumerate(kinds)
    )
    return Script(turns=turns, closing="limit reached; continue?")


@pytest.mark.parametrize(
    ("kinds", "max_rounds", "ending", "rounds", "executed", "pending", "played"),
    [
        ("a", 3, "answer", 0, (), (), 1),
        ("ta", 3, "answer", 1, ("t0",), (), 2),
        ("ttta", 3, "answer", 3, ("t0", "t1", "t2"), (), 4),  # the boundary: no closing call
        ("tttt", 3, "step_limit", 3, ("t0", "t1", "t2"), ("t3",), 4),
        ("tt", 1, "step_limit", 1, ("t0",), ("t1",), 2),
    ],
)
def test_outcome(
    kinds: str,
    max_rounds: int,
    ending: str,
    rounds: int,
    executed: tuple[str, ...],
    pending: tuple[str, ...],
    played: int,
) -> None:
    out = derive_outcome(script(*kinds), max_rounds)
    assert (out.ending, out.rounds, out.executed) == (ending, rounds, executed)
    assert tuple(c.name for c in out.pending) == pending
    assert out.turns_played == played
    assert out.problem == ""


def test_script_that_runs_out_is_a_problem() -> None:
    out = derive_outcome(script("t", "t"), 5)
    assert "ends after 2 tool turn(s)" in out.problem
