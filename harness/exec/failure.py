"""How an out-of-process loop fails: one finding for the cell, with a rule of its own."""

from __future__ import annotations

RULE_TIMEOUT = "exec.timeout"  # still running at --exec-timeout: its process group was killed
RULE_FAILED = "exec.failed"  # exited non-zero (or was killed by a signal)
RULE_BAD_OUTPUT = "exec.bad_output"  # stdout is not one JSON document matching answer.json


class ExecFailure(Exception):
    """Raised by an exec loop when the program gave no usable answer. The runner keeps `rule`,
    and the cell's findings are this one (every rule would only restate it)."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message
