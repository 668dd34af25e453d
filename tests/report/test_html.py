"""The HTML report as text: self-contained, both matrices with their counts, the filters, each
cell's transcript with findings at their call and the raw exchange, escaping, and the view
model behind it. (`test_browser.py` loads it in a real browser.)"""

from __future__ import annotations

import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

from harness.report.html import render_html, write_html
from harness.report.view import (
    anchor,
    cell_view,
    is_closing,
    rule_rows,
    scenario_rows,
    system_addition,
)
from harness.results import Results
from harness.results.model import FindingRecord
from tests.report.synthetic import synthetic_results
from tests.results.runs import (
    CONTROL_SHOWN,
    HOSTILE_ANSWER,
    HOSTILE_RESULT,
    broken_results,
    control_results,
    real_results,
)


class _Tags(HTMLParser):
    """Every start tag with its attributes; `<template>` contents included (they are parsed
    as markup by the browser too, only inert)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def test_the_report_is_self_contained() -> None:
    html = render_html(real_results())
    tags = _tags(html)
    assert not [t for t, a in tags if t in ("link", "img", "iframe", "object", "embed")]
    assert [a for t, a in tags if t == "script"] == [{}]  # one inline script, no src
    for _tag, attrs in tags:
        for name in ("src", "href", "action"):
            value = attrs.get(name) or ""
            assert not re.match(r"^(https?:)?//", value), (name, value)
    assert "default-src 'none'" in html  # the CSP forbids any fetch, should one slip in


def test_both_matrices_with_counts() -> None:
    results = real_results()
    html = render_html(results)
    assert html.count('<tr data-scenario="') == 3
    assert html.count('<tr data-rule="') == len(results.rules)
    rows = {r.rule.id: r for r in rule_rows(results, ["anthropic", "openai", "gemini"])}
    l12 = rows["L12"].counts["gemini"]  # only the limit scenario reaches the closing call
    assert (l12.passed, l12.failed, l12.na) == (2, 0, 4)
    assert rows["replay"].counts["openai"].na == 6


def test_scenario_matrix_chips_link_to_cells() -> None:
    results = broken_results()
    (row,) = scenario_rows(results, ["anthropic", "openai", "gemini"])
    chips = row.chips["openai"]
    assert [c.label for c in chips] == ["json", "stream"]
    assert chips[0].verdict == "fail" and chips[0].findings == len(results.cells[2].findings)
    html = render_html(results)
    assert f'href="#{chips[0].anchor}"' in html and f'id="{chips[0].anchor}"' in html


def test_rule_matrix_fail_counts_filter_the_cells() -> None:
    html = render_html(broken_results())
    assert 'data-filter="fail:l12 provider:anthropic"' in html
    view = cell_view(broken_results().cells[0], {"L3": 0, "L11": 1})
    assert view.fail_rules[:2] == ["L3", "L11"]
    assert "fail:l12" in view.search.split() and "provider:anthropic" in view.search.split()


def test_filters_are_there() -> None:
    html = render_html(real_results())
    for provider in ("anthropic", "openai", "gemini"):
        assert f'class="f-provider" value="{provider}" checked' in html
    assert 'id="f-verdict"' in html and 'id="f-text"' in html


def test_transcript_shows_rounds_ids_closing_call_and_answer() -> None:
    results = real_results()
    cell = results.cell("limit_reached_pending_write[anthropic]")
    assert cell is not None
    view = cell_view(cell)
    (query,) = view.queries
    first, second, closing = query.calls
    assert [m.role for m in first.sent] == ["user"] and first.earlier == 0
    (result_message,) = second.sent
    assert result_message.results[0].call_id == first.call.response.calls[0].id
    assert [r.name for r in first.tool_runs] == ["get_personal_record"]
    assert closing.closing and not second.closing
    assert closing.system_addition and "step limit" in closing.system_addition
    html = render_html(results)
    block = html.split(f'id="{view.anchor}"', 1)[1].split("</template>", 1)[0]
    for text in (
        "Set me a goal of 100 kg on bench by March.",
        "tool choice as sent",
        "closing call",
        "system addition",
        first.call.response.calls[0].id or "?",
        "final answer",
        "raw request / response",
    ):
        assert text in block, text


def test_findings_are_shown_at_the_call_they_concern() -> None:
    results = broken_results()
    cell = results.cells[0]
    view = cell_view(cell)
    placed = {(c.call.number, f.rule) for q in view.queries for c in q.calls for f in c.findings}
    numbered = {(f.call, f.rule) for f in cell.findings if f.call is not None}
    assert placed == numbered
    general = [f.rule for f in view.findings] + [f.rule for q in view.queries for f in q.findings]
    assert sorted(general) == sorted(f.rule for f in cell.findings if f.call is None)
    html = render_html(results)
    call3 = html.split(f'id="{view.anchor}-call-3"', 1)[1].split("</article>", 1)[0]
    assert '<span class="rule">L12</span>' in call3
    assert "expected" in call3 and "sent" in call3


def test_model_and_tool_text_is_escaped() -> None:
    html = render_html(real_results())
    assert "<script>document.title" not in html and "<img src=x" not in html
    assert "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;" in html  # transcript
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in html  # raw body (<pre>)
    assert "&lt;img src=x onerror=" in html
    assert "</pre></template> 80 kg" not in html
    assert HOSTILE_RESULT and HOSTILE_ANSWER  # the fixtures hold real markup


def test_control_characters_are_shown_as_escapes(tmp_path: Path) -> None:
    # a NUL is dropped by the HTML parser and a lone surrogate cannot be written as UTF-8
    path = write_html(control_results(), tmp_path / "index.html")
    html = path.read_text("utf-8")
    assert not re.search("[\x00-\x08\x0b\x0e-\x1f\ud800-\udfff\uffff]", html)
    assert html.count(CONTROL_SHOWN) >= 3  # answer, error, finding, tool result


def test_closing_call_and_system_addition_rules() -> None:
    assert system_addition("Base.", "Base. Stop now.") == "Stop now."
    assert system_addition("Base.", "Other.") == "Other."
    assert system_addition("Base.", "Base.") == ""
    cell = real_results().cell("one_tool_then_answer[gemini]")
    assert cell is not None and not any(is_closing(c, cell.calls) for c in cell.calls)


def test_anchors_are_url_safe_and_distinct() -> None:
    assert anchor("a_b[openai-stream]") == "cell-a_b--openai-stream"
    assert anchor("a_b[openai]") != anchor("a_b[openai-stream]")


def test_500_cells_render_to_one_file(tmp_path: Path) -> None:
    results: Results = synthetic_results(500)
    path = write_html(results, tmp_path / "index.html")
    html = path.read_text(encoding="utf-8")
    assert html.count('<details class="cell ') == 500
    assert html.count("<template>") == 500
    # sizes are measured by benchmarks/report_500.py; this only guards against a blow-up
    assert path.stat().st_size < 40_000_000


def _tools_line(results: Results, cell_id: str) -> str:
    block = render_html(results).split(f'id="{anchor(cell_id)}"', 1)[1]
    return block.split("tools run:", 1)[1].split("</p>", 1)[0]


def test_the_tools_line_marks_what_expect_tools_judged_not_a_plain_list_comparison() -> None:
    """Tools that ran at once match in any order (`harness.outcome.ran_as_expected`), so the
    transcript marks the tools as unexpected exactly when the cell has `expect.tools`."""
    results = real_results()
    cell_id = "limit_reached_pending_write[anthropic]"
    cell = results.cell(cell_id)
    assert cell is not None
    (query,) = cell.queries
    assert query.expected is not None
    # Two tools that ran at once, in the other order than listed: no expect.tools finding.
    listed = replace(query.expected, tools=("get_personal_record", "save_goal"))
    swapped = replace(query, executed=("save_goal", "get_personal_record"), expected=listed)
    at_once = replace(cell, queries=(swapped,))
    judged = replace(
        at_once, findings=(*cell.findings, FindingRecord(rule="expect.tools", message="m", query=0))
    )
    for shown, flagged in ((at_once, False), (judged, True)):
        variant = replace(results, cells=(shown,))
        assert ("(expected" in _tools_line(variant, cell_id)) is flagged
