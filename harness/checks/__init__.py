"""The conformance checks: one function per rule (L1–L15 and the provider rules), each reading
the neutral wire trace (plus tool runs, answers and the scenario when the rule needs them) and
returning findings with their evidence.

    data = input_from_run(cell_run)          # or input_from_exchanges(cassette exchanges)
    findings = run_checks(data)              # wire_only=True: what `harness audit` runs
    verdicts = rule_verdicts(data, findings) # rule id -> "pass" | "fail" | "n/a"
"""

from harness.checks.engine import (
    CatalogueEntry,
    Verdict,
    catalogue,
    rule_verdicts,
    run_checks,
)
from harness.checks.input import (
    CheckInput,
    QueryInput,
    ToolRunAt,
    input_from_exchanges,
    input_from_run,
    input_from_trace,
)
from harness.checks.registry import RULES, Rule

__all__ = [
    "RULES",
    "CatalogueEntry",
    "CheckInput",
    "QueryInput",
    "Rule",
    "ToolRunAt",
    "Verdict",
    "catalogue",
    "input_from_exchanges",
    "input_from_run",
    "input_from_trace",
    "rule_verdicts",
    "run_checks",
]
