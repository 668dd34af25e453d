"""Loops for the `harness run` tests, loaded with --loop tests.checks.loops:NAME."""

from __future__ import annotations

from dataclasses import replace

from harness.loop.contract import LoopCall, LoopResult
from harness.loop.reference import reference_loop


def shouting_loop(call: LoopCall) -> LoopResult:
    """The reference loop, but the answer handed back is not the model's text (L2)."""
    result = reference_loop(call)
    return replace(result, answer=result.answer.upper())
