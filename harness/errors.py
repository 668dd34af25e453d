"""The harness's error family. Each message says where the problem is and how to fix it.

The CLI turns any `HarnessError` into one line on stderr and exit code 2.
"""

from __future__ import annotations


class HarnessError(Exception):
    """Base of every error the harness reports to its user."""


class ScenarioError(HarnessError):
    """A scenario file is invalid: the message names file, line and field."""

    def __init__(self, file: str, line: int | None, field: str, problem: str) -> None:
        self.file = file
        self.line = line
        self.field = field
        self.problem = problem
        where = f"{file}:{line}" if line is not None else file
        super().__init__(f"{where}: {field}: {problem}")


class EmulatorError(HarnessError):
    """The emulator cannot start or cannot serve what was asked."""


class CassetteError(HarnessError):
    """A cassette is missing, unreadable or does not match the run."""


class ProviderError(HarnessError):
    """A provider (or its SDK) could not be reached or configured."""
