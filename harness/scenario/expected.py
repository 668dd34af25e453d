"""What a correct loop does with a script under a round budget (L2, L3, L11).

Counting follows the article: the first model call, then at most `max_rounds` times "run the
requested tools, call the model again". If the model still asks for tools on call
`max_rounds + 1`, those requests stay pending (not executed) and one closing call follows.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.scenario.model import Ending, Script, ScriptedCall, played_turns


@dataclass(frozen=True, kw_only=True)
class Outcome:
    ending: Ending
    rounds: int
    executed: tuple[str, ...]
    executed_calls: tuple[ScriptedCall, ...]
    pending: tuple[ScriptedCall, ...]
    turns_played: int
    problem: str = ""


def derive_outcome(script: Script, max_rounds: int) -> Outcome:
    """The ending, rounds and tool order a correct loop produces for this script. A turn
    that repeats until the limit is played on every call up to call `max_rounds + 1`;
    `turns_played` counts script turns (a repeated turn once)."""
    executed: list[ScriptedCall] = []
    for index, turn in enumerate(played_turns(script.turns, max_rounds + 1)):
        played = min(index + 1, len(script.turns))
        if turn.is_answer:
            return _outcome("answer", index, executed, (), played)
        if index == max_rounds:
            return _outcome("step_limit", max_rounds, executed, turn.calls, played)
        executed.extend(turn.calls)
    rounds = len(script.turns)
    return _outcome(
        "answer",
        rounds,
        executed,
        (),
        rounds,
        problem=f"the script ends after {rounds} tool turn(s) with neither an answer turn nor "
        f"a tool turn at call {max_rounds + 1} (the budget of {max_rounds} rounds); add an "
        "`answer:` turn or more tool turns",
    )


def _outcome(
    ending: Ending,
    rounds: int,
    executed: list[ScriptedCall],
    pending: tuple[ScriptedCall, ...],
    played: int,
    problem: str = "",
) -> Outcome:
    return Outcome(
        ending=ending,
        rounds=rounds,
        executed=tuple(c.name for c in executed),
        executed_calls=tuple(executed),
        pending=pending,
        turns_played=played,
        problem=problem,
    )
