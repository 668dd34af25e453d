"""Stateless script play: which turn a request gets follows from the request itself.

A request the script has no turn for is still answered, so the loop keeps going: a loop whose
own budget is larger than the scenario's, or one that sends a turn back reshaped (a three-call
turn as three turns, which the real APIs accept), runs past the script. It gets the script's
last turn again — its last tool turn, until the loop's own budget ends and its closing call
gets the closing text, or its final answer — and the step carries a note: the scenario's
limit (`script.exhausted`, a warning), never the API's rejection nor the loop's fault. A turn
marked `repeat: until_limit` is played on every later call by design, with no note.
"""

from __future__ import annotations

from harness.emulator.wire import ApiError, Position, Step
from harness.scenario.model import Fault, Scenario, ScriptedTurn, played_turns

SCRIPT_ERROR_KIND = "harness_script_error"
SCRIPT_NOTE_KIND = "harness_script_note"
# The finding a request answered off-script becomes (`harness.outcome`): a warning, like drift.
RULE_SCRIPT_EXHAUSTED = "script.exhausted"
# The finding for a request whose user message the emulator cannot tell (answered with a 400).
RULE_SCRIPT_UNMATCHED = "script.unmatched"


def pick_step(scenario: Scenario, pos: Position) -> Step | ApiError:
    """The step to answer, or an error (status 400, marked as ours) naming what is off."""
    index = user_index(scenario, pos.user_text)
    if isinstance(index, ApiError):
        return index
    script = scenario.messages[index].script
    if pos.tools_forbidden:
        return Step(turn=ScriptedTurn(text=script.closing), user_index=index, turn_index=-1)
    turns = played_turns(script.turns, pos.model_turns + 1)
    if pos.model_turns < len(turns):
        return Step(turn=turns[pos.model_turns], user_index=index, turn_index=pos.model_turns)
    return _past_the_script(scenario, index, pos.model_turns)


def _past_the_script(scenario: Scenario, index: int, model_turns: int) -> Step:
    """The script's last turn again (fresh ids: its place is this call's), with a note."""
    turns = scenario.messages[index].script.turns
    last = turns[-1]
    how = "its last tool turn" if last.calls else "its final answer"
    note = (
        f"scenario {scenario.id!r}, user message {index + 1}: the request holds {model_turns} "
        f"model turn(s) after the user message but the script has {len(turns)}; answered with "
        f"{how} again. A limit of the scenario, not the API's rejection nor the loop's fault: "
        "a loop with a larger budget of its own, or one that sends a turn back split into "
        "several, runs past the script (mark its last tool turn `repeat: until_limit` to "
        "script any budget)"
    )
    return Step(turn=last, user_index=index, turn_index=model_turns, note=note)


def step_note(step: Step) -> ApiError | None:
    """The log's record of a step answered off-script (status 200: the loop got a turn)."""
    if step.note is None:
        return None
    return ApiError(
        status=200, message=step.note, kind=SCRIPT_NOTE_KIND, rule=RULE_SCRIPT_EXHAUSTED
    )


def step_fault(scenario: Scenario, step: Step) -> Fault | None:
    if step.note is not None:  # off-script: the turn's fault was served where it belongs
        return None
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
    return ApiError(status=400, message=message, kind=SCRIPT_ERROR_KIND, rule=RULE_SCRIPT_UNMATCHED)
