"""The framework compatibility matrix: its cells, its JSON file, what changed since the last
one, and its Markdown summary (`docs/frameworks/README.md`).

A cell is one framework configuration on one provider, scenario and stream variant: its verdict
and the sorted rule ids of its findings. Kept apart from running the cells (`report.py`) so the
summary and the "what changed" section are testable on small inputs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import HarnessError

# Rule ids that are a family, shown as one row (their titles come from the results' groups).
GROUPS = ("expect", "api", "harness")
PASS, FAIL = "pass", "fail"


@dataclass(frozen=True, kw_only=True)
class MatrixCell:
    framework: str
    config: str
    provider: str
    scenario: str
    stream: bool
    verdict: str  # "pass" (no finding) | "fail"
    rules: tuple[str, ...]  # sorted, unique
    endings: tuple[str, ...] = ()  # per user message: "answer" | "step_limit" | "error"

    @property
    def key(self) -> tuple[str, str, str, str, bool]:
        return (self.framework, self.config, self.provider, self.scenario, self.stream)

    def label(self) -> str:
        stream = "-stream" if self.stream else ""
        return f"{self.framework} {self.config} {self.scenario}[{self.provider}{stream}]"


@dataclass(frozen=True, kw_only=True)
class ConfigInfo:
    name: str
    loop: str
    summary: str
    providers: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class FrameworkInfo:
    name: str
    versions: Mapping[str, str]  # distribution -> installed version
    configs: tuple[ConfigInfo, ...]
    traps: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Matrix:
    command: str
    sdk_versions: Mapping[str, str]
    rules: Mapping[str, str]  # rule id (or group) -> title, in report order
    scenarios: tuple[str, ...]
    limit_scenarios: tuple[str, ...]  # the scenarios whose budget runs out
    frameworks: tuple[FrameworkInfo, ...]
    cells: tuple[MatrixCell, ...]
    html: Mapping[str, str] = field(default_factory=dict)  # "framework config" -> file name
    stream: str = "off"  # the stream variants run: "off" | "on" | "both"

    def cell(self, key: tuple[str, str, str, str, bool]) -> MatrixCell | None:
        return next((c for c in self.cells if c.key == key), None)


def rules_of(findings: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(findings)))


def verdict_of(rules: Sequence[str]) -> str:
    return FAIL if rules else PASS


# ---- the JSON file ----------------------------------------------------------------------------


def matrix_to_json(matrix: Matrix) -> dict[str, Any]:
    return {
        "command": matrix.command,
        "sdk_versions": dict(matrix.sdk_versions),
        "rules": dict(matrix.rules),
        "scenarios": list(matrix.scenarios),
        "limit_scenarios": list(matrix.limit_scenarios),
        "frameworks": [
            {
                "name": f.name,
                "versions": dict(f.versions),
                "traps": list(f.traps),
                "configs": [
                    {
                        "name": c.name,
                        "loop": c.loop,
                        "summary": c.summary,
                        "providers": list(c.providers),
                    }
                    for c in f.configs
                ],
            }
            for f in matrix.frameworks
        ],
        "html": dict(matrix.html),
        "stream": matrix.stream,
        "cells": [
            {
                "framework": c.framework,
                "config": c.config,
                "provider": c.provider,
                "scenario": c.scenario,
                "stream": c.stream,
                "verdict": c.verdict,
                "rules": list(c.rules),
                "endings": list(c.endings),
            }
            for c in matrix.cells
        ],
    }


def matrix_from_json(data: Mapping[str, Any]) -> Matrix:
    frameworks = tuple(
        FrameworkInfo(
            name=f["name"],
            versions=dict(f["versions"]),
            traps=tuple(f.get("traps", ())),
            configs=tuple(
                ConfigInfo(
                    name=c["name"],
                    loop=c["loop"],
                    summary=c["summary"],
                    providers=tuple(c["providers"]),
                )
                for c in f["configs"]
            ),
        )
        for f in data["frameworks"]
    )
    cells = tuple(
        MatrixCell(
            framework=c["framework"],
            config=c["config"],
            provider=c["provider"],
            scenario=c["scenario"],
            stream=bool(c["stream"]),
            verdict=c["verdict"],
            rules=tuple(c["rules"]),
            endings=tuple(c.get("endings", ())),
        )
        for c in data["cells"]
    )
    return Matrix(
        command=data["command"],
        sdk_versions=dict(data["sdk_versions"]),
        rules=dict(data["rules"]),
        scenarios=tuple(data["scenarios"]),
        limit_scenarios=tuple(data.get("limit_scenarios", ())),
        frameworks=frameworks,
        cells=cells,
        html=dict(data.get("html", {})),
        stream=str(data.get("stream", "off")),
    )


def read_matrix(path: Path) -> Matrix | None:
    """The committed matrix, or None when there is none yet."""
    if not path.exists():
        return None
    try:
        return matrix_from_json(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError) as exc:
        raise HarnessError(
            f"{path}: not a framework matrix ({type(exc).__name__}: {exc}); delete it and "
            "regenerate with `python -m examples.frameworks.report`"
        ) from None


def write_matrix(matrix: Matrix, path: Path) -> Path:
    text = json.dumps(matrix_to_json(matrix), indent=1, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")
    return path


# ---- what changed -----------------------------------------------------------------------------


def what_changed(previous: Matrix | None, current: Matrix) -> list[str]:
    """One Markdown bullet per difference: versions, then cells changed, added, removed."""
    if previous is None:
        return ["- First generation: no previous matrix.json to compare with."]
    lines = _version_changes(previous, current)
    old = {c.key: c for c in previous.cells}
    new = {c.key: c for c in current.cells}
    for key in sorted(old.keys() & new.keys()):
        before, after = old[key], new[key]
        if before.rules != after.rules:
            lines.append(f"- {after.label()}: {_describe(before)} → {_describe(after)}")
    lines += [
        f"- {new[k].label()}: new cell, {_describe(new[k])}" for k in sorted(new - old.keys())
    ]
    lines += [f"- {old[k].label()}: no longer run" for k in sorted(old.keys() - new.keys())]
    return lines or ["- Nothing: every cell has the same verdict and rules as before."]


def _version_changes(previous: Matrix, current: Matrix) -> list[str]:
    before = _all_versions(previous)
    after = _all_versions(current)
    return [
        f"- {name}: {before.get(name) or 'not installed'} → {after.get(name) or 'not installed'}"
        for name in sorted(before.keys() | after.keys())
        if before.get(name) != after.get(name)
    ]


def _all_versions(matrix: Matrix) -> dict[str, str]:
    out = dict(matrix.sdk_versions)
    for framework in matrix.frameworks:
        out.update(framework.versions)
    return out


def _describe(cell: MatrixCell) -> str:
    return "conforms" if not cell.rules else "breaks " + ", ".join(cell.rules)


# ---- the Markdown summary ---------------------------------------------------------------------


def rule_row(rule: str) -> str:
    """The row a rule id is counted under: `expect.ending` → `expect`."""
    head = rule.split(".", 1)[0]
    return head if head in GROUPS else rule


def overview_table(matrix: Matrix) -> list[str]:
    """Framework × configuration rows, one column per provider: how many cells conform, and
    the rules broken."""
    providers = _providers(matrix)
    lines = [
        "| framework | configuration | " + " | ".join(providers) + " |",
        "| --- | --- | " + " | ".join("---" for _ in providers) + " |",
    ]
    for framework in matrix.frameworks:
        for config in framework.configs:
            row = [_overview_cell(matrix, framework.name, config, p) for p in providers]
            lines.append(f"| {framework.name} | {config.name} | " + " | ".join(row) + " |")
    return lines


def _overview_cell(matrix: Matrix, framework: str, config: ConfigInfo, provider: str) -> str:
    if provider not in config.providers:
        return "not supported"
    cells = cells_of(matrix, framework, config.name, provider)
    if not cells:
        return "not run"
    conform = sum(c.verdict == PASS for c in cells)
    broken = sorted({rule_row(r) for c in cells for r in c.rules}, key=_rule_order(matrix))
    text = f"{conform}/{len(cells)} conform"
    return text + (" · breaks " + " ".join(broken) if broken else "")


def rule_table(matrix: Matrix, framework: FrameworkInfo) -> list[str]:
    """Every rule (rows) against configuration × provider (columns): ✓ when no scenario
    breaks it, else ✗ and how many scenario cells do."""
    columns = [(c.name, p) for c in framework.configs for p in c.providers]
    lines = [
        "| rule | " + " | ".join(f"{c} · {p}" for c, p in columns) + " |",
        "| --- | " + " | ".join(":-:" for _ in columns) + " |",
    ]
    for rule, title in _rule_rows(matrix):
        marks = []
        for config, provider in columns:
            cells = cells_of(matrix, framework.name, config, provider)
            broken = sum(any(rule_row(r) == rule for r in c.rules) for c in cells)
            marks.append(f"✗ {broken}" if broken else ("✓" if cells else "–"))
        lines.append(f"| {rule} {title} | " + " | ".join(marks) + " |")
    return lines


def breaking_scenarios(matrix: Matrix, framework: FrameworkInfo) -> list[str]:
    """Per configuration and provider, the scenarios with findings and their rules."""
    lines: list[str] = []
    for config in framework.configs:
        for provider in config.providers:
            for cell in cells_of(matrix, framework.name, config.name, provider):
                if cell.rules:
                    stream = " (stream)" if cell.stream else ""
                    rules = sorted(cell.rules, key=_rule_order(matrix))
                    lines.append(
                        f"- {config.name} · {provider} · `{cell.scenario}`{stream}: "
                        + ", ".join(rules)
                    )
    return lines or ["- No finding in any configuration."]


def _rule_rows(matrix: Matrix) -> list[tuple[str, str]]:
    rows = [(rule, title) for rule, title in matrix.rules.items()]
    known = {rule for rule, _ in rows}
    seen = sorted({rule_row(r) for c in matrix.cells for r in c.rules} - known)
    return rows + [(rule, "") for rule in seen]


def _rule_order(matrix: Matrix) -> Any:
    """Report order: the rule's row (L3 before L11, then the provider rules and groups)."""
    order = {rule: i for i, (rule, _) in enumerate(_rule_rows(matrix))}
    return lambda rule: (order.get(rule_row(rule), len(order)), rule)


def _providers(matrix: Matrix) -> list[str]:
    order = ("anthropic", "openai", "gemini")
    present = {p for f in matrix.frameworks for c in f.configs for p in c.providers}
    return [p for p in order if p in present] + sorted(present - set(order))


def cells_of(matrix: Matrix, framework: str, config: str, provider: str) -> list[MatrixCell]:
    return [
        c
        for c in matrix.cells
        if (c.framework, c.config, c.provider) == (framework, config, provider)
    ]
