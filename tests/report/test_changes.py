"""The "what changed" view: a loop change that breaks the budget (new failures, changed
endings, drift in requests and responses), the same run read back (nothing), fixes the other
way round, and a re-recording whose only changes are fresh ids (no drift)."""

from __future__ import annotations

import dataclasses
import json

from harness.report.changes import compare
from harness.report.html import render_html
from harness.results import Results
from harness.results.codec import from_json
from harness.results.files import results_json
from tests.results.runs import broken_results, real_results


def _limit_cells(results: Results) -> Results:
    keep = tuple(c for c in results.cells if c.scenario.id == "limit_reached_pending_write")
    return dataclasses.replace(results, cells=keep)


def test_the_same_run_has_no_changes() -> None:
    changes = compare(real_results(), real_results())
    assert changes.empty


def _ended_in(results: Results, ending: str) -> Results:
    """The same cells, each query ending as `ending` (a loop change that changed endings)."""
    cells = tuple(
        dataclasses.replace(
            c, queries=tuple(dataclasses.replace(q, ending=ending) for q in c.queries)
        )
        for c in results.cells
    )
    return dataclasses.replace(results, cells=cells)


def test_a_loop_that_overruns_its_budget() -> None:
    before, after = _limit_cells(real_results()), broken_results()
    changes = compare(before, after)
    new = {(c.cell_id, c.rule) for c in changes.new_failures}
    assert ("limit_reached_pending_write[openai]", "L12") in new
    assert ("limit_reached_pending_write[gemini-stream]", "expect.rounds") in new
    # Past its script the emulator keeps answering, so the overrunning loop still closes.
    assert not changes.endings and not changes.fixes
    endings = compare(_ended_in(before, "answer"), after).endings
    assert {(e.before, e.after) for e in endings} == {("answer", "step_limit")}
    assert len(endings) == 6
    drift = {(d.cell_id, d.call, d.side) for d in changes.drift}
    assert ("limit_reached_pending_write[anthropic]", 3, "request") in drift
    assert ("limit_reached_pending_write[anthropic]", 3, "response") in drift
    request = next(d for d in changes.drift if d.side == "request" and d.call == 3)
    assert any("Not executed" in line and "now" in line for line in request.lines)


def test_fixes_the_other_way_round_and_cells_added_or_removed() -> None:
    changes = compare(broken_results(), real_results())
    fixed = {(c.cell_id, c.rule) for c in changes.fixes}
    assert ("limit_reached_pending_write[anthropic]", "L12") in fixed
    assert all(c.message.startswith("was: ") for c in changes.fixes)
    assert len(changes.added) == 12 and not changes.removed
    assert not changes.new_failures


def test_fresh_ids_and_tokens_are_not_drift() -> None:
    """A re-recording mints new tool-call and message ids; only what the loop decided counts."""
    results = _limit_cells(real_results())
    text = json.dumps(results_json(results))
    for cell in results.cells:
        for call in cell.calls:
            for tool_call in call.response.calls:
                assert tool_call.id
                text = text.replace(tool_call.id, tool_call.id[:-4] + "ZZZZ")
            if call.response.id:
                text = text.replace(call.response.id, call.response.id[:-4] + "YYYY")
    rerecorded = from_json(Results, json.loads(text))
    assert rerecorded != results
    assert compare(results, rerecorded).empty


def test_the_report_shows_what_changed() -> None:
    html = render_html(broken_results(), previous=_ended_in(_limit_cells(real_results()), "answer"))
    section = html.split('<section id="changes">', 1)[1].split("</section>", 1)[0]
    assert "What changed" in section and "new failures" in section
    assert "6 changed endings" in section
    assert 'href="#cell-limit_reached_pending_write--anthropic-call-3"' in section
    assert '<section id="changes">' not in render_html(broken_results())
