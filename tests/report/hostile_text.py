"""Results whose texts hold bidi formatting characters and other invisible controls, for the
report tests (the HTML, JUnit and browser views must show each one as an escape)."""

from __future__ import annotations

import dataclasses
import unicodedata

from harness.results.model import CellResult, FindingRecord, Results
from tests.results.runs import real_results

BIDI = (
    "\u061c\u200e\u200f"  # ALM, LRM, RLM
    + "".join(map(chr, range(0x202A, 0x202F)))  # LRE RLE PDF LRO RLO
    + "".join(map(chr, range(0x2066, 0x206A)))  # LRI RLI FSI PDI
)
# "Trojan Source" style: the override makes `exe.txt` display as `txt.exe`.
BIDI_TEXT = "invoice\u202etxt.exe\u202c rm -rf\u2066 /\u2069 del\x7f c1\x9b"
BIDI_SHOWN = "invoice\\u202etxt.exe\\u202c rm -rf\\u2066 /\\u2069 del\\x7f c1\\x9b"
CELL = "one_tool_then_answer[anthropic]"


def unsafe(text: str, keep: str = "\t\n\r") -> set[str]:
    """Characters of `text` no report may hold raw (this test suite's own definition)."""
    return {
        c
        for c in text
        if c not in keep
        and (unicodedata.category(c) in ("Cc", "Cs") or c in BIDI or c in "\ufffe\uffff")
    }


def text_results(text: str, cell_id: str = CELL) -> Results:
    """`real_results` with `text` in one cell's answer, error, finding, tool result and raw
    request body."""
    results = real_results()
    return dataclasses.replace(
        results, cells=tuple(_with(c, text) if c.id == cell_id else c for c in results.cells)
    )


def _with(cell: CellResult, text: str) -> CellResult:
    exchanges = (
        dataclasses.replace(
            cell.exchanges[0], request_body={**cell.exchanges[0].request_body, "note": text}
        ),
        *cell.exchanges[1:],
    )
    return dataclasses.replace(
        cell,
        verdict="fail",
        error=text,
        queries=tuple(dataclasses.replace(q, answer=text) for q in cell.queries),
        tool_runs=tuple(dataclasses.replace(r, result=text) for r in cell.tool_runs),
        findings=(FindingRecord(rule="L9", message=text, actual=text),),
        exchanges=exchanges,
    )
