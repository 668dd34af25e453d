"""Running the registered checks: findings, verdicts per rule, and the catalogue.

A check never takes the run down: if one raises on data it did not expect, that is a finding
of its rule (the verdict fails, and the message says the check itself broke)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal, TypeAlias

# Importing the rule modules registers their checks.
from harness.checks import (  # noqa: F401
    anthropic,
    context,
    ending,
    gemini,
    limit,
    openai,
    pairing,
    rounds,
    wire,
)
from harness.checks.input import CheckInput
from harness.checks.registry import RULES, Needs, Rule
from harness.findings import Finding

Verdict: TypeAlias = Literal["pass", "fail", "n/a"]


@dataclass(frozen=True, kw_only=True)
class CatalogueEntry:
    id: str
    title: str
    description: str
    apis: tuple[str, ...]
    needs: Needs
    part_of: str | None


def catalogue() -> list[CatalogueEntry]:
    """Every rule in report order: loop rules by number, then provider rules."""
    return [
        CatalogueEntry(
            id=r.id,
            title=r.title,
            description=r.description,
            apis=tuple(sorted(r.apis)),
            needs=r.needs,
            part_of=r.part_of,
        )
        for r in ordered_rules()
    ]


def ordered_rules() -> list[Rule]:
    def order(rule: Rule) -> tuple[int, int, str]:
        if rule.id.startswith("L") and rule.id[1:].isdigit():
            return 1, int(rule.id[1:]), rule.id
        return (0 if rule.id == "wire.parse" else 2), 0, rule.id

    return sorted(RULES.values(), key=order)


def run_checks(data: CheckInput, wire_only: bool = False) -> list[Finding]:
    """The findings of every rule that runs on this input (only the wire-only ones when
    `wire_only`), in catalogue order, duplicates folded."""
    findings: list[Finding] = []
    for rule in ordered_rules():
        if (wire_only and not rule.wire_only) or not rule.runs_on(data):
            continue
        findings.extend(_checked(rule, data))
    return _unique(findings)


def _checked(rule: Rule, data: CheckInput) -> list[Finding]:
    try:
        return list(rule.check(data))
    except Exception as exc:  # a check must never take the run down
        return [
            Finding(
                rule=rule.id,
                message=f"the check itself failed on this trace ({type(exc).__name__}: {exc}); "
                "please report it",
            )
        ]


def _unique(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per defect: a broken message in the saved context, or a setting missing on
    every call, shows on each call; findings differing only in the call number are kept once
    (the first), naming the other calls."""
    first: dict[tuple[object, ...], Finding] = {}
    others: dict[tuple[object, ...], list[int]] = {}
    for f in findings:
        key: tuple[object, ...] = (f.rule, f.query, f.path, f.ids, f.message, f.expected, f.actual)
        if key not in first:
            first[key], others[key] = f, []
        elif f.call is not None:
            others[key].append(f.call)
    return [_also(f, others[key]) for key, f in first.items()]


def _also(finding: Finding, calls: list[int]) -> Finding:
    if not calls:
        return finding
    listed = ", ".join(str(n) for n in calls)
    plural = "s" if len(calls) > 1 else ""
    return replace(finding, message=f"{finding.message} (also on call{plural} {listed})")


def rule_verdicts(
    data: CheckInput, findings: Iterable[Finding] | None = None
) -> dict[str, Verdict]:
    """pass / fail / n/a for every rule. n/a: the rule is for another provider, needs what
    this input lacks, or the cell holds nothing it is about. A provider rule's failure also
    fails the loop rule it is part of."""
    found = list(run_checks(data) if findings is None else findings)
    failing = {f.rule for f in found}
    verdicts: dict[str, Verdict] = {}
    for rule in ordered_rules():
        if rule.id in failing:
            verdicts[rule.id] = "fail"
        elif not rule.runs_on(data) or not _applies(rule, data):
            verdicts[rule.id] = "n/a"
        else:
            verdicts[rule.id] = "pass"
    for rule in ordered_rules():
        if rule.part_of and verdicts.get(rule.id) == "fail":
            verdicts[rule.part_of] = "fail"
    return verdicts


def _applies(rule: Rule, data: CheckInput) -> bool:
    try:
        return rule.applies(data)
    except Exception:  # a broken predicate must not hide the rule
        return True
