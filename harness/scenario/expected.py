"""What a correct loop does with a script under a round budget (L2, L3, L11).

Counting follows the article: the first model call, then at most `max_rounds` times "run the
requested tools, call the model again". If the model still asks for tools on call
`max_rounds + 1`, those requests stay pending (not executed) and one closing call follows.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.scenario.model import Ending, Fault, Script, ScriptedCall, played_turns

# A correct loop retries what the provider says to retry, as the SDKs do: the harness's clients
# make at most 2 retries after the first attempt (the Anthropic and OpenAI SDKs' default
# `max_retries=2`, and google-genai given the same, harness.providers.gemini_retry_options). A
# step that fails more often than that ends the query in an error the loop must admit (L15).
SDK_RETRIES = 2
RETRIED_FAULTS = frozenset({"rate_limit", "server_error", "overloaded"})


def outlasts_retries(fault: Fault | None) -> bool:
    """The provider keeps failing this step past every retry a correct loop makes."""
    return fault is not None and fault.kind in RETRIED_FAULTS and fault.times > SDK_RETRIES


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
        if outlasts_retries(turn.fault):
            return _outcome("error", index, executed, (), played)
        if turn.is_answer:
            return _outcome("answer", index, executed, (), played)
        if index == max_rounds:
            ending: Ending = "error" if outlasts_retries(script.closing_fault) else "step_limit"
            return _outcome(ending, max_rounds, executed, turn.calls, played)
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
