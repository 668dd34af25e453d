"""`--budget`: a live refresh stops before it would spend more than the user allowed.

A cell's cost is only known after it ran, so each cell reserves an estimate before it starts
(what its last recording used, or the average of the cells already recorded on that provider,
or a deliberately high guess from its script), and a cell whose estimate would take the total
past the budget is not started. Cells already running finish (stopping them would waste what
they spent and leave nothing to keep).
"""

from __future__ import annotations

import threading

from harness.cassettes.usage import Usage, price_for
from harness.scenario.model import Scenario

# A generous guess per model call when nothing better is known: a long system prompt, history
# and tool schemas in, a tool request or a short answer out.
GUESS_INPUT_TOKENS = 4000
GUESS_OUTPUT_TOKENS = 800


def guessed_usage(scenario: Scenario) -> Usage:
    """Model calls the script implies (every turn, plus a closing call each), at the guess."""
    calls = sum(len(m.script.turns) + 1 for m in scenario.messages)
    return Usage(input_tokens=calls * GUESS_INPUT_TOKENS, output_tokens=calls * GUESS_OUTPUT_TOKENS)


class Budget:
    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self.spent = 0.0
        self._reserved = 0.0
        self._in_flight = 0
        self._changed = threading.Condition()
        self._costs: dict[str, list[float]] = {}

    def estimate(
        self, provider: str, model: str, scenario: Scenario, previous: Usage | None
    ) -> float:
        price, _ = price_for(provider, model)
        if previous is not None and (previous.input_tokens or previous.output_tokens):
            return previous.cost(price)
        with self._changed:
            seen = self._costs.get(provider)
            if seen:
                return sum(seen) / len(seen)
        return guessed_usage(scenario).cost(price)

    def reserve(self, amount: float) -> bool:
        """Set `amount` aside. While other cells are running, wait for them to settle (their
        estimates are pessimistic); False once `amount` cannot fit even with nothing running."""
        with self._changed:
            while self.limit is not None and self.spent + self._reserved + amount > self.limit:
                if self._in_flight == 0:
                    return False
                self._changed.wait()
            self._reserved += amount
            self._in_flight += 1
            return True

    def settle(self, provider: str, reserved: float, actual: float) -> None:
        with self._changed:
            self._reserved -= reserved
            self._in_flight -= 1
            self.spent += actual
            self._costs.setdefault(provider, []).append(actual)
            self._changed.notify_all()
