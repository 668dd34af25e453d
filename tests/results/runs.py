"""Real results for the results and report tests: a few scenarios run through the reference
loop on the scripted source (the real SDKs over HTTP to the emulator), judged by the checks.

One of them is hostile: its tool result and the model's answer hold markup, which every view
must show as text. `broken_results()` adds a cell whose loop skips the closing call, so there
are real findings at a call."""

from __future__ import annotations

import dataclasses
import functools
import tempfile
import time
from pathlib import Path

from harness.loop.contract import LoopCall, LoopResult
from harness.outcome import cell_findings
from harness.results import Judged, Results, build_results, run_meta
from harness.results.build import check_catalogue, judge
from harness.results.model import FindingRecord
from harness.runner import CellRun, cells, run_cells
from harness.scenario import Scenario, load_scenario
from harness.sources import ScriptedSource
from tests.conftest import SCENARIOS

HOSTILE_RESULT = "<script>document.title='pwned'</script> 80 kg </pre></template>"
HOSTILE_ANSWER = "Best: 80 kg <img src=x onerror=\"document.title='pwned2'\">"
HOSTILE_ID = "hostile_markup"
LIBRARY_PICK = ("one_tool_then_answer", "limit_reached_pending_write")


def hostile_scenario(folder: Path) -> Scenario:
    text = (SCENARIOS / "one_tool_then_answer.yaml").read_text(encoding="utf-8")
    text = text.replace(
        '"2026-11-28 bench press 3x5 @ 80 kg; 2026-11-25 bench press 3x5 @ 77.5 kg"',
        repr(HOSTILE_RESULT).replace("\\'", "''"),
    ).replace(
        "You added 2.5 kg in three days; 3x5 at 80 kg is your best so far.",
        repr(HOSTILE_ANSWER).replace("\\'", "''"),
    )
    path = folder / f"{HOSTILE_ID}.yaml"
    path.write_text(text, encoding="utf-8")
    return load_scenario(path)


def _run(scenarios: list[Scenario], loop: object = None) -> list[CellRun]:
    from harness.runner import REFERENCE_LOOP, load_loop

    source = ScriptedSource(scenarios, {})
    try:
        chosen = loop if loop is not None else load_loop(REFERENCE_LOOP)
        return list(run_cells(cells(scenarios), source, chosen))  # type: ignore[arg-type]
    finally:
        source.close()


def run_library(name: str, *, provider: str, stream: bool) -> list[CellRun]:
    """One library scenario on one provider and stream variant."""
    scenario = load_scenario(SCENARIOS / f"{name}.yaml")
    chosen = [c for c in cells([scenario]) if (c.provider, c.stream) == (provider, stream)]
    source = ScriptedSource([scenario], {})
    try:
        from harness.runner import REFERENCE_LOOP, load_loop

        return list(run_cells(chosen, source, load_loop(REFERENCE_LOOP)))
    finally:
        source.close()


def _judged(runs: list[CellRun]) -> list[Judged]:
    return [judge(run, cell_findings(run)) for run in runs]


@functools.cache
def real_results() -> Results:
    """one_tool_then_answer, limit_reached_pending_write and the hostile scenario on every
    provider, both stream variants (18 cells), all conforming."""
    started = time.time()
    folder = Path(tempfile.mkdtemp(prefix="harness-results-"))
    scenarios = [load_scenario(SCENARIOS / f"{name}.yaml") for name in LIBRARY_PICK]
    scenarios.append(hostile_scenario(folder))
    judged = _judged(_run(scenarios))
    meta = run_meta(
        source="scripted", loop="reference", started=started, finished=None, argv=["test"]
    )
    return build_results(judged, meta=meta, rules=check_catalogue())


def no_closing_call_loop(call: LoopCall) -> LoopResult:
    """The reference loop, except that when the budget runs out it answers with the last
    interim text instead of making the closing call (breaks the closing-call rules)."""
    from harness.loop.reference import reference_loop

    return reference_loop(
        LoopCall(
            provider=call.provider,
            client=call.client,
            model=call.model,
            system=call.system,
            history=call.history,
            message=call.message,
            tools=call.tools,
            max_rounds=call.max_rounds + 1,  # one round too many: the write then runs
            stream=call.stream,
            request_size_limit=call.request_size_limit,
        )
    )


@functools.cache
def broken_results() -> Results:
    """limit_reached_pending_write through a loop that overruns its budget: findings."""
    started = time.time()
    scenarios = [load_scenario(SCENARIOS / "limit_reached_pending_write.yaml")]
    judged = _judged(_run(scenarios, no_closing_call_loop))
    meta = run_meta(
        source="scripted", loop="tests:overrun", started=started, finished=None, argv=["test"]
    )
    return build_results(judged, meta=meta, rules=check_catalogue())


def mixed_results() -> Results:
    """`real_results` with the limit scenario's cells taken from `broken_results`: a run where
    one scenario fails on every provider (what a regression looks like in the report)."""
    broken = {c.id: c for c in broken_results().cells}
    real = real_results()
    cells = tuple(broken.get(c.id, c) for c in real.cells)
    return dataclasses.replace(real, cells=cells)


# Characters XML 1.0 forbids (NUL, ESC, a lone surrogate, U+FFFF), as a tool result or a
# loop's error can hold them.
CONTROL_TEXT = "nul\x00 esc\x1b[31m lone\ud800 end\uffff"
CONTROL_SHOWN = "nul\\x00 esc\\x1b[31m lone\\ud800 end\\uffff"


def control_results() -> Results:
    """A failing cell whose answer, error, finding and tool result hold forbidden characters."""
    results = real_results()
    first = results.cells[0]
    cell = dataclasses.replace(
        first,
        verdict="fail",
        error=CONTROL_TEXT,
        queries=tuple(dataclasses.replace(q, answer=CONTROL_TEXT) for q in first.queries),
        tool_runs=tuple(dataclasses.replace(r, result=CONTROL_TEXT) for r in first.tool_runs),
        findings=(FindingRecord(rule="L9", message=CONTROL_TEXT, actual=CONTROL_TEXT),),
    )
    return dataclasses.replace(results, cells=(cell, *results.cells[1:]))
