"""JUnit XML (one testcase per cell, failures with rule ids and evidence) and the one-screen
console summary."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from harness.report.console import finding_line, summary_lines
from harness.report.junit import junit_xml, write_junit
from harness.results.model import FindingRecord
from tests.report.synthetic import synthetic_results
from tests.results.runs import (
    CONTROL_SHOWN,
    CONTROL_TEXT,
    HOSTILE_ANSWER,
    broken_results,
    control_results,
    real_results,
)


def test_one_testcase_per_cell_grouped_by_provider(tmp_path: Path) -> None:
    results = real_results()
    root = ET.parse(write_junit(results, tmp_path / "junit.xml")).getroot()
    assert root.tag == "testsuites" and root.get("tests") == "18" and root.get("failures") == "0"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [
        "harness.anthropic",
        "harness.openai",
        "harness.gemini",
    ]
    cases = root.iter("testcase")
    names = {(c.get("classname"), c.get("name")) for c in cases}
    assert ("one_tool_then_answer", "one_tool_then_answer[gemini-stream]") in names
    assert len(names) == 18
    out = root.find(".//testcase[@name='hostile_markup[openai]']/system-out")
    assert out is not None and out.text is not None and HOSTILE_ANSWER in out.text  # escaped by XML


def test_control_characters_are_escaped_so_the_file_parses(tmp_path: Path) -> None:
    results = control_results()
    root = ET.parse(write_junit(results, tmp_path / "junit.xml")).getroot()
    case = root.find(f".//testcase[@name='{results.cells[0].id}']")
    assert case is not None
    failure, out = case.find("failure"), case.find("system-out")
    assert failure is not None and out is not None and out.text is not None
    assert CONTROL_SHOWN in (failure.get("message") or "") and CONTROL_SHOWN in out.text
    assert CONTROL_TEXT not in (tmp_path / "junit.xml").read_text("utf-8", "surrogateescape")


def test_failures_carry_rule_ids_and_evidence() -> None:
    root = ET.fromstring(junit_xml(broken_results()))
    assert root.get("failures") == "6"
    case = root.find(".//testcase[@name='limit_reached_pending_write[openai]']")
    assert case is not None
    failure = case.find("failure")
    assert failure is not None and failure.text is not None
    message = failure.get("message") or ""
    assert message.startswith("L3 [Round budget]: ") and "under 1 headline(s)" in message
    assert "L12 at call 3" in failure.text and "expected" in failure.text
    assert "  ↳ [One closing call, text only] L12 at call 3" in failure.text


def test_finding_line_says_where_what_and_expected_versus_sent() -> None:
    line = finding_line(
        FindingRecord(
            rule="L5",
            message="the model turn was not sent back as given",
            call=2,
            path="messages[1]",
            ids=("toolu_1",),
            expected="1 tool request",
            actual="none",
        )
    )
    assert line == (
        "L5 at call 2 messages[1] [toolu_1]: the model turn was not sent back as given "
        "(expected 1 tool request; sent none)"
    )
    assert finding_line(FindingRecord(rule="expect.rounds", message="m", query=0)).startswith(
        "expect.rounds at user message 1: "
    )


def test_console_summary_fits_one_screen() -> None:
    lines = summary_lines(synthetic_results(500))
    assert len(lines) <= 24 and all(len(line) <= 160 for line in lines)
    assert lines[0].startswith("500 cell(s): ")
    assert any(line.startswith("failing rules (cells): ") for line in lines)
    assert any(line.startswith("headline rules (cells): ") for line in lines)
    assert lines[-1].startswith("  … and ") and "more cell(s) with findings" in lines[-1]


def test_console_summary_of_a_clean_run() -> None:
    lines = summary_lines(real_results())
    assert lines[0].startswith("18 cell(s): 18 conform, 0 with findings · source scripted")
    assert len(lines) == 4  # the totals and one line per provider
