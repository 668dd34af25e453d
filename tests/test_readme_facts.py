"""The README's facts that can be computed are checked, so they cannot rot: the library's cell
counts against what `harness run` would run, the test counts in "Development" against the
suite this session collected (within a tolerance: the suite grows), and the shape of the
benchmark tables (and the --jobs table's header against the script that prints it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks.run_jobs import HEADER as JOBS_HEADER
from harness.commands.common import chosen_cells, load_all
from tests.conftest import REALWIRE, REALWIRE2, ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
TOLERANCE = 0.10  # "about N tests": the suite may have grown or shrunk this much since


def section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def number(text: str) -> int:
    return int(text.replace(",", ""))


def library_cells(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The cells `harness run` runs from the project folder (its settings applied)."""
    monkeypatch.chdir(ROOT)
    return [c.id for c in chosen_cells(load_all([]), None, None)]


def cell_claims(text: str) -> list[int]:
    """Every count of the library's cells the text states."""
    claims = re.findall(r"library's (\d+) cells", text)
    claims += re.findall(r"(\d+)-cell library", text)
    claims += re.findall(r"\(\d+ of (\d+) cells\)", text)  # a partial run's line, of the library
    return [int(c) for c in claims]


def test_the_library_cell_counts_are_what_harness_run_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    count = len(library_cells(monkeypatch))
    claims = cell_claims(README)
    assert len(claims) >= 2
    assert set(claims) == {count}


def test_a_stale_cell_count_is_caught() -> None:
    stale = "on the library's 86 cells; a `partial run (15 of 80 cells)`; the 86-cell library"
    assert set(cell_claims(stale)) == {80, 86}


def test_the_cells_that_do_not_end_in_an_error_are_counted_right(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    chosen = chosen_cells(load_all([]), None, None)
    ending_well = [
        c
        for c in chosen
        if not any(m.expect is not None and m.expect.ending == "error" for m in c.scenario.messages)
    ]
    claims = re.findall(
        r"the (\d+) cells whose\s+scenarios\s+do\s+not\s+end\s+in\s+an\s+error", README
    )
    assert claims and {int(c) for c in claims} == {len(ending_well)}


def close_enough(collected: int, claimed: int) -> bool:
    return abs(collected - claimed) <= TOLERANCE * claimed


@pytest.mark.parametrize(
    ("collected", "claimed", "ok"),
    [(2700, 2700, True), (2900, 2700, True), (3100, 2700, False), (2300, 2700, False)],
)
def test_the_test_count_tolerance(collected: int, claimed: int, ok: bool) -> None:
    assert close_enough(collected, claimed) is ok


def _full_session(config: pytest.Config) -> bool:
    """This session collected the whole suite: no narrower paths, no -k, -m or --deselect."""
    paths = {Path(str(a).split("::")[0]).resolve() for a in config.args}
    narrowed = config.option.keyword or config.option.markexpr or config.option.deselect
    return paths <= {ROOT, ROOT / "tests"} and not narrowed


def test_the_test_counts_in_development_match_the_collected_suite(
    request: pytest.FixtureRequest,
) -> None:
    development = section("Development")
    whole = number(re.findall(r"The suite is about ([\d,]+) tests", development)[0])
    without = number(re.findall(r"\(about ([\d,]+) tests\)", development)[0])
    benchmarks = re.findall(r"test suite\s+\(about ([\d,]+) tests\)", section("Benchmarks"))
    assert [number(b) for b in benchmarks] == [whole]  # the two places say the same
    if not _full_session(request.config):
        pytest.skip("the test count is checked when the whole suite is collected")
    collected = len(request.session.items)
    realwire = REALWIRE.is_dir() and REALWIRE2.is_dir()
    claimed = whole if realwire else without
    assert close_enough(collected, claimed), (
        f"README says about {claimed} tests ({'with' if realwire else 'without'} the real "
        f"recordings); this session collected {collected}: update ## Development"
    )


def tables(text: str) -> list[list[list[str]]]:
    """Every markdown table in `text`, as rows of stripped cells."""
    found: list[list[list[str]]] = []
    for block in re.findall(r"((?:^\|.*\|\n)+)", text, re.M):
        found.append([[c.strip() for c in row.strip("|").split("|")] for row in block.splitlines()])
    return found


def table_problems(table: list[list[str]]) -> list[str]:
    """What is wrong with a table's shape: a row of another width, a bad rule line, or a
    right-aligned (numeric) column holding something that does not start with a number."""
    header, rule, *rows = table
    problems = [] if rows else ["no rows"]
    if len(rule) != len(header) or not all(re.fullmatch(r"-{3,}:?", c) for c in rule):
        return [*problems, f"rule line {rule}"]
    for row in rows:
        if len(row) != len(header):
            problems.append(f"{len(row)} cells, not {len(header)}: {row}")
            continue
        numeric = [c for c, r in zip(row, rule, strict=True) if r.endswith(":")]
        problems += [f"not a number: {c!r}" for c in numeric if not re.match(r"^\d[\d,.]*", c)]
    return problems


def test_the_benchmark_tables_are_well_formed() -> None:
    found = tables(section("Benchmarks"))
    assert len(found) >= 3
    for table in found:
        assert table_problems(table) == [], table


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("| a | b |\n| --- | ---: |\n| x | 1 | 2 |\n", "3 cells, not 2"),
        ("| a | b |\n| --- | ---: |\n| x | n/a |\n", "not a number: 'n/a'"),
        ("| a | b |\n| --- |\n| x | 1 |\n", "rule line"),
        ("| a | b |\n| --- | ---: |\n", "no rows"),
    ],
    ids=["width", "number", "rule", "empty"],
)
def test_a_malformed_table_is_caught(text: str, problem: str) -> None:
    (table,) = tables(text)
    assert any(p.startswith(problem) for p in table_problems(table))


def test_the_jobs_table_is_what_the_benchmark_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    jobs = [t for t in tables(section("Benchmarks")) if tuple(t[0]) == JOBS_HEADER]
    assert len(jobs) == 1
    rows = jobs[0][2:]
    assert [r[0] for r in rows] == ["1", "2"]
    assert {int(r[1]) for r in rows} == {len(library_cells(monkeypatch))}
    assert rows[0][3] == "1.00×"
