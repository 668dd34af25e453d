"""The rule registry: one function per rule, registered with its id, the wire formats it
applies to, what it needs besides the wire, and when it applies to a cell at all.

A check is `check(data: CheckInput) -> Iterable[Finding]`. It reads only what its `needs`
promise: `wire` checks run on any cassette (what `harness audit` runs); `run` checks also read
the tool runs and the answers the harness saw; `scenario` checks also read the scenario (the
budget, the saved history, the closing phrases).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, TypeAlias

from harness.checks.input import CheckInput
from harness.findings import Finding
from harness.trace.model import ApiName

Needs: TypeAlias = Literal["wire", "run", "scenario"]
Check: TypeAlias = Callable[[CheckInput], Iterable[Finding]]
Applies: TypeAlias = Callable[[CheckInput], bool]

ALL_APIS: frozenset[ApiName] = frozenset({"anthropic", "openai-responses", "openai-chat", "gemini"})


@dataclass(frozen=True, kw_only=True)
class Rule:
    """`part_of`: the loop rule this provider rule spells out (its failure fails that rule's
    verdict too). `applies`: whether the cell holds anything this rule is about (else its
    verdict is n/a, e.g. the closing-call rules when the budget never ran out)."""

    id: str
    title: str
    description: str
    apis: frozenset[ApiName]
    needs: Needs
    check: Check
    applies: Applies
    part_of: str | None = None

    @property
    def wire_only(self) -> bool:
        return self.needs == "wire"

    def runs_on(self, data: CheckInput) -> bool:
        """The cell speaks one of this rule's formats and has what the rule needs."""
        if not self.apis & data.apis:
            return False
        if self.needs == "run" and not data.runs_known:
            return False
        return self.needs != "scenario" or (data.scenario is not None and data.runs_known)


RULES: dict[str, Rule] = {}


def always(data: CheckInput) -> bool:
    return bool(data.trace.calls)


def rule(
    id: str,
    *,
    title: str,
    description: str,
    needs: Needs,
    apis: Iterable[ApiName] = ALL_APIS,
    applies: Applies = always,
    part_of: str | None = None,
) -> Callable[[Check], Check]:
    """Register the decorated function as the check of rule `id`."""

    def register(check: Check) -> Check:
        if id in RULES:
            raise ValueError(f"rule {id} is registered twice")
        RULES[id] = Rule(
            id=id,
            title=title,
            description=description,
            apis=frozenset(apis),
            needs=needs,
            check=check,
            applies=applies,
            part_of=part_of,
        )
        return check

    return register
