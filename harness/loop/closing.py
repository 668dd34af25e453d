"""What the loop says when the round budget runs out (L11–L13).

Two separate parts of the closing request: the history says what happened (each pending
request was not executed), the system instructions say what to do (explain, ask). The order
never goes inside a tool result: text in a tool result is data, not an instruction (L13; the
article's first fix put it there and OpenAI models ignored it).
"""

from __future__ import annotations

NOT_EXECUTED_RESULT = "Not executed: the step limit for this answer was reached."
"""The exact result each pending tool request gets when the budget is spent (L11)."""

STEP_LIMIT_INSTRUCTION = (
    "You have reached the step limit for this answer, so no more tools can be run now. "
    "Answer with what you already know, explain the step limit, say what was left undone, "
    "and ask whether to continue. A tool request whose result says it was not executed did "
    "not happen: never say that it did."
)
"""Appended to the system instructions of the closing call only (L13, L14)."""


def closing_system(system: str) -> str:
    """The closing call's system instructions: the usual system prompt plus the order."""
    if not system.strip():
        return STEP_LIMIT_INSTRUCTION
    return f"{system.rstrip()}\n\n{STEP_LIMIT_INSTRUCTION}"
