"""Faults at the round budget and the step limit (L3, L11–L15): the reference loop's query
state (`_Query`) subclassed in one method, or its closing text replaced."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from harness.chat import AssistantMessage
from harness.loop import reference
from harness.loop.adapters import Request, Turn
from harness.loop.closing import NOT_EXECUTED_RESULT
from harness.loop.contract import LoopCall, LoopResult
from tests.faulty_loops.variants import reference_with

# ---- no closing call (L11, L12) --------------------------------------------------------------


class _StopsAtTheLimit(reference._Query[Any]):
    """At the limit the loop gives up with an error (as google-genai's helpers raise on a
    reply still asking for tools): the pending requests are never answered on the wire."""

    def close(self, number: int) -> LoopResult:
        self.error = "the model still asks for tools after max_rounds rounds"
        return self.failed()


no_closing_call = reference_with((reference, "_Query", _StopsAtTheLimit))


# ---- the interim half sentence handed back (L15) ---------------------------------------------


class _LastTurnAnswers(reference._Query[Any]):
    """At the limit the loop returns the text of the last turn, the half sentence the model
    wrote before asking for more tools ("Now let me fetch September…")."""

    last_text = ""

    def ask(self, number: int, closing: bool) -> Turn[Any] | None:
        turn = super().ask(number, closing)
        if turn is not None:
            self.last_text = turn.message.text
        return turn

    def close(self, number: int) -> LoopResult:
        return self.answered(self.last_text)


interim_text_as_answer = reference_with((reference, "_Query", _LastTurnAnswers))


# ---- a closing call without tools (L12; Anthropic E1) ----------------------------------------


class _ClosingDropsTools(reference._Query[Any]):
    """The closing call forbids tools by not declaring them (instead of tool choice none)."""

    def request(self, closing: bool) -> Request[Any]:
        request = super().request(closing)
        return replace(request, tools=()) if closing else request


closing_without_tools = reference_with((reference, "_Query", _ClosingDropsTools))


# ---- a closing call with tool choice auto (L12) ----------------------------------------------


class _ClosingAllowsTools(reference._Query[Any]):
    """The closing call carries the step-limit order but leaves tool choice on auto."""

    def request(self, closing: bool) -> Request[Any]:
        return replace(super().request(closing), tools_allowed=True)


closing_with_tool_choice_auto = reference_with((reference, "_Query", _ClosingAllowsTools))


# ---- the closing order in a tool result (L13) ------------------------------------------------

ORDER_IN_RESULT = (
    f"{NOT_EXECUTED_RESULT} Answer with what you already know and ask whether to continue."
)

closing_order_in_tool_result = reference_with(
    # The article's first fix: the order goes with the pending results, the system
    # instructions stay as usual.
    (reference, "NOT_EXECUTED_RESULT", ORDER_IN_RESULT),
    (reference, "closing_system", lambda system: system),
)


# ---- no step-limit order at all (L13) --------------------------------------------------------

closing_order_left_out = reference_with((reference, "closing_system", lambda system: system))


# ---- the budget not reset per message (L3) ---------------------------------------------------


class BudgetAcrossMessages:
    """One budget for the whole conversation, not per user message: each message gets only
    the rounds the earlier ones left. Holds state, so make one per conversation."""

    def __init__(self) -> None:
        self.used = 0

    def __call__(self, call: LoopCall) -> LoopResult:
        left = max(call.max_rounds - self.used, 0)
        result = reference.reference_loop(replace(call, max_rounds=left))
        added = result.chat[len(call.history) :]
        rounds = sum(1 for m in added if isinstance(m, AssistantMessage) and m.tool_calls)
        self.used += min(rounds, left)
        return result


# ---- the budget off by one (L3) --------------------------------------------------------------


def one_round_short(call: LoopCall) -> LoopResult:
    """Counts the first call as a round: the closing call comes one round early."""
    return reference.reference_loop(replace(call, max_rounds=max(call.max_rounds - 1, 0)))


def one_round_too_many(call: LoopCall) -> LoopResult:
    """Counts rounds from zero to max_rounds inclusive: one round more than the budget."""
    return reference.reference_loop(replace(call, max_rounds=call.max_rounds + 1))


# ---- a call after the answer (L2) ------------------------------------------------------------


class _ChecksAgain(reference._Query[Any]):
    """After a reply without tool requests, asks once more "to be sure" before answering."""

    def answered(self, text: str) -> LoopResult:
        self.ask(0, closing=False)
        return super().answered(text)


call_after_the_answer = reference_with((reference, "_Query", _ChecksAgain))


# ---- the closing reply replaced by the loop's own text (L14) ---------------------------------

CANNED_CLOSING = "Sorry, I couldn't complete that request."


class _CannedClosing(reference._Query[Any]):
    """Makes the closing call, then hands back a fixed line of its own instead of the reply
    (which explained the limit and asked whether to continue)."""

    def close(self, number: int) -> LoopResult:
        if self.ask(number, closing=True) is None:
            return self.failed()
        return self.answered(CANNED_CLOSING)


canned_closing_answer = reference_with((reference, "_Query", _CannedClosing))
