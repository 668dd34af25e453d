"""JUnit XML for CI: one testsuite per provider, one testcase per scenario × provider × stream
variant; a cell with findings is a failure carrying every finding's rule and evidence, grouped
under its headlines (`harness.headlines`): the message names the headline rules with their
titles, the text lists each headline with its consequences under it. Reads only a results
file."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path

from harness.headlines import cell_trail, group, titled
from harness.report.console import finding_line, headline_lines, rule_titles
from harness.report.controls import visible_controls
from harness.report.view import providers_of
from harness.results.files import write_text_atomic
from harness.results.model import CellResult, Results


def junit_xml(results: Results) -> str:
    root = ET.Element(
        "testsuites",
        name="harness",
        tests=str(len(results.cells)),
        failures=str(sum(c.verdict == "fail" for c in results.cells)),
        errors="0",
        time=f"{results.run.elapsed:.3f}",
    )
    for provider in providers_of(results):
        _suite(root, results, [c for c in results.cells if c.provider == provider], provider)
    _make_valid(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


def _suite(root: ET.Element, results: Results, cells: Sequence[CellResult], provider: str) -> None:
    suite = ET.SubElement(
        root,
        "testsuite",
        name=f"harness.{provider}",
        tests=str(len(cells)),
        failures=str(sum(c.verdict == "fail" for c in cells)),
        errors="0",
        skipped="0",
        time=f"{sum(c.timing.elapsed for c in cells):.3f}",
        timestamp=results.run.started,
    )
    props = ET.SubElement(suite, "properties")
    for name, value in (("source", results.run.source), ("loop", results.run.loop)):
        ET.SubElement(props, "property", name=name, value=value)
    titles = rule_titles(results.rules)
    for cell in cells:
        _case(suite, cell, titles)


def _case(suite: ET.Element, cell: CellResult, titles: Mapping[str, str]) -> None:
    case = ET.SubElement(
        suite,
        "testcase",
        classname=cell.scenario.id,
        name=cell.id,
        time=f"{cell.timing.elapsed:.3f}",
    )
    if cell.findings:
        trail = cell_trail(cell)
        heads = group(cell.findings, trail)
        rules = list(dict.fromkeys(h.finding.rule for h in heads))
        count = f"{len(cell.findings)} finding(s) under {len(heads)} headline(s)"
        failure = ET.SubElement(
            case,
            "failure",
            message=f"{', '.join(titled(r, titles) for r in rules)}: "
            f"{finding_line(heads[0].finding)} ({count})",
            type=rules[0],
        )
        failure.text = "\n".join(headline_lines(cell.findings, trail, titles))
    out = [f"{cell.scenario.title} · {cell.model} · source {cell.source}"]
    for q in cell.queries:
        out.append(f"user message {q.index + 1}: {q.message}")
        out.append(f"  ending {q.ending}, {q.rounds} round(s), ran {', '.join(q.executed) or '-'}")
        out.append(f"  answer: {q.answer or q.error or '(none)'}")
    out.extend(f"drift: {d.message}" for d in cell.drift)
    ET.SubElement(case, "system-out").text = "\n".join(out)


def _make_valid(root: ET.Element) -> None:
    """Escape the characters XML 1.0 forbids in every text and attribute: ElementTree writes
    them as they are, and one control character in a tool result would make the file unreadable."""
    for element in root.iter():
        if element.text:
            element.text = visible_controls(element.text)
        for name, value in element.attrib.items():
            element.set(name, visible_controls(value))


def write_junit(results: Results, path: str | Path) -> Path:
    return write_text_atomic(path, junit_xml(results))
