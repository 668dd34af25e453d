"""One results file per run: the source of truth every view (console summary, JUnit, the HTML
report) reads. `build_results` makes it from the runner's cells and the checks' findings;
`write_results` / `read_results` store and load it, checked against `schema.json`."""

from harness.results.build import HARNESS_GROUPS, Judged, build_results, run_meta
from harness.results.files import ResultsError, read_results, write_results
from harness.results.model import SCHEMA_VERSION, CellResult, Results, RuleInfo, Verdict

__all__ = [
    "HARNESS_GROUPS",
    "SCHEMA_VERSION",
    "CellResult",
    "Judged",
    "Results",
    "ResultsError",
    "RuleInfo",
    "Verdict",
    "build_results",
    "read_results",
    "run_meta",
    "write_results",
]
