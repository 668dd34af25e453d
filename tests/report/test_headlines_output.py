"""One headline per defect in every output (`harness.headlines`): the console's progress lines
and summary, JUnit, the HTML report (view and page) — each headline with its rule's title and
the findings it caused under it, the cell's verdict unchanged."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.headlines import cell_trail, group
from harness.report.console import finding_line, headline_lines, rule_titles, summary_lines
from harness.report.html import render_html
from harness.report.junit import junit_xml
from harness.report.view import cell_view
from harness.results.files import read_results, results_json, write_results
from harness.results.model import CellResult, FindingRecord, Results
from tests.results.runs import broken_results

CELL = "limit_reached_pending_write[openai]"


@pytest.fixture(scope="module")
def broken() -> Results:
    return broken_results()


def _cell(results: Results) -> CellResult:
    cell = results.cell(CELL)
    assert cell is not None
    return cell


def test_finding_line_puts_the_title_beside_the_rule() -> None:
    record = FindingRecord(rule="api.O4", message="m", call=2)
    assert finding_line(record, {"api": "Accepted by the API"}) == (
        "[Accepted by the API] api.O4 at call 2: m"
    )
    assert finding_line(record) == "api.O4 at call 2: m"  # no titles given: as before


def test_headline_lines_indent_the_consequences_and_say_why(broken: Results) -> None:
    cell = _cell(broken)
    lines = headline_lines(cell.findings, cell_trail(cell), rule_titles(broken.rules))
    assert lines[0].startswith("[Round budget] L3 at call 2: ")
    assert len(lines) == len(cell.findings)
    for line in lines[1:]:
        assert line.startswith("  ↳ ") and " · follows from " in line
    assert any("L12 at call 3" in line and "(round count)" in line for line in lines)


def test_summary_names_headline_rules_and_each_cell_s_first_headline(broken: Results) -> None:
    lines = summary_lines(broken)
    assert "headline rules (cells): L3 [Round budget] ×6" in lines
    cell_line = next(line for line in lines if line.startswith(f"  ✗ {CELL}: "))
    assert "[Round budget] L3 at call 2" in cell_line and "1 headline(s))" in cell_line


def test_junit_message_and_text_are_grouped(broken: Results) -> None:
    root = ET.fromstring(junit_xml(broken))
    failure = root.find(f".//testcase[@name='{CELL}']/failure")
    assert failure is not None and failure.text is not None
    assert failure.get("type") == "L3"
    assert (failure.get("message") or "").startswith("L3 [Round budget]: L3 at call 2")
    text = failure.text.splitlines()
    assert text[0].startswith("[Round budget] L3 at call 2")
    assert all(line.startswith("  ↳ ") for line in text[1:])
    assert len(text) == len(_cell(broken).findings)  # every finding listed once


def test_the_view_gives_every_finding_a_role(broken: Results) -> None:
    cell = _cell(broken)
    view = cell_view(cell)
    assert [h.finding.rule for h in view.headlines] == ["L3"]
    assert view.headlines[0].where == "call 2"
    assert view.headlines[0].anchor.endswith("-call-2")
    assert {id(f) for f in cell.findings} == set(view.roles)
    consequences = [f for f in cell.findings if view.roles[id(f)].cause]
    assert len(consequences) == len(cell.findings) - 1
    assert "headline:l3" in view.search and "fail:l12" in view.search
    assert cell.verdict == "fail"  # grouping changes no verdict


def test_the_html_shows_headlines_titles_and_consequences(broken: Results) -> None:
    html = render_html(broken, previous=broken)
    assert html.count('<section class="headlines">') == len(broken.cells)
    assert '<span class="rule">L3</span> <span class="rule-title">Round budget</span>' in html
    assert 'class="finding consequence"' in html and 'class="finding headline"' in html
    assert "follows from L3 (round count)" in html
    assert '<span class="headline-rule">L3 <span class="rule-title">Round budget</span>' in html


def test_two_independent_defects_are_two_headlines_in_the_report(broken: Results) -> None:
    cell = _cell(broken)
    extra = FindingRecord(rule="L4", message="tools overlapped", call=1, query=0)
    both = Results(
        run=broken.run,
        rules=broken.rules,
        cells=(_with_findings(cell, (*cell.findings, extra)),),
    )
    view = cell_view(both.cells[0])
    assert [h.finding.rule for h in view.headlines] == ["L4", "L3"]
    lines = summary_lines(both)
    assert any("L4 [Sequential tools] ×1" in line for line in lines)


def _with_findings(cell: CellResult, findings: tuple[FindingRecord, ...]) -> CellResult:
    from dataclasses import replace

    return replace(cell, findings=findings)


def test_a_results_file_read_back_groups_the_same(broken: Results, tmp_path: Path) -> None:
    """Headlines are derived from the findings and calls the file already holds: nothing new
    is stored, so files written before group the same way and still validate."""
    path = write_results(broken, tmp_path / "results.json")
    again = read_results(path)
    before, after = _cell(broken), _cell(again)
    assert [[f.rule for f in h.findings] for h in group(before.findings, cell_trail(before))] == [
        [f.rule for f in h.findings] for h in group(after.findings, cell_trail(after))
    ]
    assert "headline" not in json.dumps(results_json(again))
