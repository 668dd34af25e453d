"""Fuzz the results reader (`harness report RESULTS --previous OLD`): a valid results file
with one node replaced by a hostile value, or a few bytes mutated. Every example reads, or
raises one `ResultsError` line naming the file."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from harness.results import ResultsError, read_results
from harness.results.files import results_json
from tests.fuzz.hostile import FUZZ, byte_mutated, one_line, structural
from tests.report.synthetic import synthetic_results

VALID: Any = json.loads(json.dumps(results_json(synthetic_results(2))))
FOLDER = Path(tempfile.mkdtemp(prefix="harness-fuzz-results-"))


def check(content: bytes) -> None:
    path = FOLDER / "results.json"
    path.write_bytes(content)
    try:
        read_results(path)
    except ResultsError as exc:
        one_line(str(exc), path)


check(json.dumps(VALID).encode())  # warm up (the schema), so no example pays for it


@FUZZ
@given(st.data())
def test_one_node_replaced(data: st.DataObject) -> None:
    check(json.dumps(data.draw(structural(VALID))).encode())


@FUZZ
@given(st.data())
def test_bytes_mutated(data: st.DataObject) -> None:
    check(data.draw(byte_mutated(json.dumps(VALID, ensure_ascii=False).encode())))
