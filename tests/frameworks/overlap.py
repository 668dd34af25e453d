"""A patient rendezvous for framework cells expected to run tools at once (L4).

`harness.tools.RENDEZVOUS_SECONDS` (0.1 s) is the longest a truly concurrent tool start is
taken to lag. A loaded test machine can start a framework's pool thread later than that, and a
cell expected to overlap would then miss L4. Such cells get a wider window: a run waits only
until its partner starts, so only the last run of a concurrent turn waits it out. Every other
cell keeps the product's window, and with it the cost of the wait for tools run one by one.
The framework tests' cell caches are keyed on the window, so a cell another test ran first
with the product's window is run again here.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from harness import tools

PATIENT_RENDEZVOUS_SECONDS = 0.5


def patient_if_overlapping(monkeypatch: pytest.MonkeyPatch, rules: Iterable[str]) -> None:
    """Widen the window for a cell expected to break L4 (run it within this test)."""
    if "L4" in rules:
        monkeypatch.setattr(tools, "RENDEZVOUS_SECONDS", PATIENT_RENDEZVOUS_SECONDS)
