"""A loop module that builds its SDK client once, at import, from the SDKs' own environment
variables, and keeps it for every query (a common shape in apps). `harness run` sets those
variables to its endpoint before importing the loop, so the client is captured too."""

from __future__ import annotations

import anthropic

from harness.loop.contract import LoopCall, LoopResult
from harness.loop.reference import reference_loop

CLIENT = anthropic.Anthropic()  # ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY, read now


def run(call: LoopCall) -> LoopResult:
    assert call.provider == "anthropic", "this example loop speaks Anthropic only"
    return reference_loop(LoopCall(**{**call.__dict__, "client": CLIENT}))
