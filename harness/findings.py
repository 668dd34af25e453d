"""A finding: one rule broken (or one expectation missed), with its evidence."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Finding:
    """`rule` is a loop rule (L1–L15), a provider rule (e.g. `anthropic.tools_declared`) or an
    expectation (`expect.ending`). `call` is the model call number in the run (1-based), when
    the finding concerns one; `path` the JSON path in that call's request or response."""

    rule: str
    message: str
    call: int | None = None
    path: str = ""
    ids: tuple[str, ...] = ()
    expected: str = ""
    actual: str = ""
    query: int | None = None  # which user message (0-based)

    def line(self) -> str:
        where = f"call {self.call}" if self.call is not None else "run"
        if self.path:
            where += f" {self.path}"
        detail = ""
        if self.expected or self.actual:
            detail = f" (expected {self.expected}; sent {self.actual})"
        ids = f" [{', '.join(self.ids)}]" if self.ids else ""
        return f"{self.rule} at {where}{ids}: {self.message}{detail}"
