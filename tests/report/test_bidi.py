"""Bidi formatting characters (overrides, embeddings, isolates, marks) and the other invisible
controls (DEL, C1) in model and tool text are shown in the HTML report and JUnit as escapes,
as the XML-forbidden controls are: an override would make a tool result read differently from
what it holds (CVE-2021-42574)."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.report.controls import visible_controls
from harness.report.html import render_html
from harness.report.junit import write_junit
from harness.report.view import raw_json, raw_response
from tests.report.hostile_text import BIDI, BIDI_SHOWN, BIDI_TEXT, text_results, unsafe
from tests.results.runs import real_results


@pytest.mark.parametrize("char", [*BIDI, "\x7f", "\x85", "\x9b", "\x9f"])
def test_each_bidi_and_c1_character_is_shown_as_an_escape(char: str) -> None:
    html = render_html(text_results(f"a{char}b"))
    assert not unsafe(html)
    shown = f"a\\x{ord(char):02x}b" if ord(char) < 0x100 else f"a\\u{ord(char):04x}b"
    assert html.count(shown) >= 4  # answer, error, finding, tool result


def test_a_trojan_source_answer_reads_as_it_is() -> None:
    html = render_html(text_results(BIDI_TEXT))
    assert not unsafe(html) and BIDI_SHOWN in html
    assert visible_controls("مرحبا 🏋️ café") == "مرحبا 🏋️ café"  # real RTL text is untouched


@pytest.mark.parametrize(
    "value", [{"note": BIDI_TEXT}, ["\u202e", "\x85", "\ud800", "\uffff"], {"k\u2067": 1}]
)
def test_a_raw_body_shows_escapes_and_stays_json(value: object) -> None:
    """Raw bodies hold JSON escapes (`\\u202e`), so the script can still indent them."""
    text = raw_json(value)
    assert not unsafe(text) and json.loads(text) == value


def test_raw_sse_events_show_escapes() -> None:
    exchange = next(c for c in real_results().cells if c.stream).exchanges[0]
    assert exchange.events
    event = dataclasses.replace(exchange.events[0], data={"text": BIDI_TEXT})
    text = raw_response(dataclasses.replace(exchange, events=(event,)))
    assert not unsafe(text) and "\\u202e" in text


def test_junit_shows_them_as_escapes(tmp_path: Path) -> None:
    path = write_junit(text_results(BIDI_TEXT), tmp_path / "junit.xml")
    text = path.read_text("utf-8")
    assert not unsafe(text) and BIDI_SHOWN in text
    ET.parse(path)


TEXT = st.text(
    st.one_of(
        st.characters(exclude_categories=()),  # every code point, surrogates included
        st.sampled_from([*BIDI, "\x00", "\x1b", "\x7f", "\x9b", "\ufffe", "<", "&"]),
    ),
    max_size=40,
)


@settings(max_examples=30, deadline=None)
@given(TEXT)
def test_no_unsafe_character_reaches_the_html_raw(text: str) -> None:
    html = render_html(text_results(text))
    assert not unsafe(html)
    html.encode("utf-8")  # writable: no lone surrogate left
