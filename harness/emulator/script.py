"""Stateless script play: which turn a request gets follows from the request itself."""

from __future__ import annotations

from harness.emulator.wire import ApiError, Position, Step
from harness.scenario.model import Fault, Scenario, ScriptedTurn

SCRIPT_ERROR_KIND = "harness_script_error"


def pick_step(scenario: Scenario, pos: Position) -> Step | ApiError:
    """The step to answer, or an error (status 400, marked as ours) naming what is off."""
    index = user_index(scenario, pos.user_text)
    if isinstance(index, ApiError):
        return index
    script = scenario.messages[index].script
    if pos.tools_forbidden:
        return Step(turn=ScriptedTurn(text=script.closing), user_index=index, turn_index=-1)
    if pos.model_turns >= len(script.turns):
        return _script_error(
            f"harness emulator: scenario {scenario.id!r}, user message {index + 1}: the request "
            f"holds {pos.model_turns} model turn(s) after the user message but the script has "
            f"only {len(script.turns)}; a correct loop stops earlier (L2/L3) or makes the "
            "closing call with tool choice none (L12)"
        )
    return Step(turn=script.turns[pos.model_turns], user_index=index, turn_index=pos.model_turns)


def step_fault(scenario: Scenario, step: Step) -> Fault | None:
    if step.turn_index < 0:
        return scenario.messages[step.user_index].script.closing_fault
    return step.turn.fault


def user_index(scenario: Scenario, text: str | None) -> int | ApiError:
    texts = [m.text for m in scenario.messages]
    if text is not None:
        if text in texts:
            return texts.index(text)
        partial = [i for i, t in enumerate(texts) if t in text or text in t]
        if len(partial) == 1:
            return partial[0]
    if len(texts) == 1:
        return 0
    shown = "no user text" if text is None else repr(text[:80])
    return _script_error(
        f"harness emulator: scenario {scenario.id!r}: cannot tell which user message this "
        f"request answers (its last user text is {shown}; the scenario's are "
        f"{', '.join(repr(t[:40]) for t in texts)})"
    )


def _script_error(message: str) -> ApiError:
    return ApiError(status=400, message=message, kind=SCRIPT_ERROR_KIND, rule="script")
