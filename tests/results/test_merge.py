"""Merging results files: the shards of one run back into run order, partial runs side by side,
a partial run into the full one; and one clear line for everything that is not parts of one
run of one library."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.cli import main
from harness.results import Results, read_results, write_results
from harness.results.merge import MergeError, merge_files, merge_partial, missing_shards
from tests.results.runs import real_results


def halves(shards: bool = True) -> tuple[Results, Results]:
    """`real_results` dealt in two, as `--shard 1/2` and `--shard 2/2` would record them (or
    as two partial runs)."""
    full = real_results()
    ids = tuple(c.id for c in full.cells)

    def part(index: int) -> Results:
        run = full.run
        if shards:
            run = dataclasses.replace(run, shard=f"{index}/2", selection=ids, library="sha256:same")
        cells = tuple(c for i, c in enumerate(full.cells) if i % 2 == index - 1)
        return dataclasses.replace(full, run=run, cells=cells)

    return part(1), part(2)


def test_shards_merge_back_in_run_order_whatever_the_file_order() -> None:
    one, two = halves()
    merged = merge_files([("2.json", two), ("1.json", one)], ["harness", "report"])
    assert [c.id for c in merged.cells] == [c.id for c in real_results().cells]
    assert merged.cells == real_results().cells
    assert merged.run.shard is None and merged.run.selection == ()
    assert [p.shard for p in merged.run.parts] == ["2/2", "1/2"]
    assert [p.cells for p in merged.run.parts] == [9, 9]
    assert merged.run.argv == ("harness", "report")
    assert missing_shards([("1.json", one)]) == ["2/2"]
    assert missing_shards([("1.json", one), ("2.json", two)]) == []


def test_partial_runs_merge_side_by_side() -> None:
    one, two = halves(shards=False)
    merged = merge_files([("a.json", one), ("b.json", two)], ["harness"])
    assert [c.id for c in merged.cells] == [c.id for c in one.cells + two.cells]
    assert missing_shards([("a.json", one)]) == []


def test_a_partial_run_replaces_its_cells_in_the_full_run() -> None:
    full = real_results()
    first = full.cells[0]
    newer = dataclasses.replace(first, model="another-model")
    partial = dataclasses.replace(
        full,
        run=dataclasses.replace(full.run, argv=("harness", "run", "--provider", "anthropic")),
        cells=(newer,),
    )
    merged = merge_partial(full, partial)
    assert merged.cells[0].model == "another-model"
    assert merged.cells[1:] == full.cells[1:]
    assert [p.cells for p in merged.run.parts] == [18, 1]
    assert merged.run.argv == ("harness", "run", "--provider", "anthropic")


def _run_field(**changes: object) -> Callable[[Results], Results]:
    return lambda r: dataclasses.replace(r, run=dataclasses.replace(r.run, **changes))


def _other_scenario_path(r: Results) -> Results:
    cell = r.cells[0]
    moved = dataclasses.replace(cell, scenario=dataclasses.replace(cell.scenario, path="x.yaml"))
    return dataclasses.replace(r, cells=(moved, *r.cells[1:]))


# (what is changed in the second file, shards?, the start of the one line)
REFUSED = [
    (_run_field(source="live"), True, "2.json: source 'live' differs from 1.json's 'scripted'"),
    (_run_field(loop="my:loop"), True, "2.json: loop 'my:loop' differs from 1.json's"),
    (_run_field(strict=True), True, "2.json: strict True differs from 1.json's False"),
    (_run_field(harness_version="0.0.1"), True, "2.json: harness_version '0.0.1' differs"),
    (_run_field(shard=None), True, "2.json and 1.json: one is a shard (--shard) and the other"),
    (_run_field(shard="2/3"), True, "2.json: shard 2/3 is not of the same run as 1.json's 1/2"),
    (_run_field(library="sha256:other"), True, "2.json: shard 2/2 is not of the same run"),
    (_run_field(selection=("x",)), True, "2.json: shard 2/2 is not of the same run"),
    (_other_scenario_path, False, "2.json: scenario 'one_tool_then_answer' is not the one"),
]


@pytest.mark.parametrize(("change", "shards", "message"), REFUSED)
def test_results_of_different_runs_do_not_merge(
    change: Callable[[Results], Results], shards: bool, message: str
) -> None:
    one, two = halves(shards)
    if not shards:  # the same scenario in both files, on another provider
        two = dataclasses.replace(two, cells=(one.cells[1], *two.cells))
        one = dataclasses.replace(one, cells=one.cells[:1])
    with pytest.raises(MergeError) as caught:
        merge_files([("1.json", one), ("2.json", change(two))], ["harness"])
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_a_cell_in_two_files_does_not_merge() -> None:
    one, _ = halves()
    with pytest.raises(MergeError) as caught:
        merge_files([("1.json", one), ("again.json", one)], ["harness"])
    assert str(caught.value) == (
        f"again.json and 1.json both hold cell {one.cells[0].id}; each cell must come from one "
        "file (merge different shards, not the same one twice)"
    )


def test_report_merges_files_into_results_html_and_junit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = halves()
    paths = [str(write_results(r, tmp_path / f"{i}.json")) for i, r in enumerate((one, two), 1)]
    out = tmp_path / "merged"
    views = ["--results", str(out / "r.json"), "--html", str(out / "i.html")]
    assert main(["report", *paths, *views, "--junit", str(out / "j.xml")]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("merged 2 shards into 18 cell(s)\n18 cell(s): 18 conform")
    assert read_results(out / "r.json").cells == real_results().cells
    assert (out / "i.html").is_file() and (out / "j.xml").is_file()


def test_report_names_a_missing_shard(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one, _ = halves()
    first = _run_field(shard="1/3")(one)
    third = dataclasses.replace(_run_field(shard="3/3")(one), cells=())  # a shard with no cell
    paths = [str(write_results(r, tmp_path / f"{i}.json")) for i, r in ((1, first), (3, third))]
    out = tmp_path / "m"
    views = ["--results", str(out / "r.json"), "--html", str(out / "i.html"), "--junit", ""]
    assert main(["report", *paths, *views]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("merged 2 shards into 9 cell(s); missing shard(s) 2/3\n")
    assert not (out / "j.xml").exists()


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--results", "x.json"], "--results applies when merging several results files"),
        (["SAME"], "both hold cell"),
    ],
    ids=["results-with-one-file", "overlap"],
)
def test_report_refusals_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], line: str
) -> None:
    one, _ = halves()
    path = str(write_results(one, tmp_path / "1.json"))
    given = [path if a == "SAME" else a for a in args]
    html = str(tmp_path / "i.html")
    assert main(["report", path, *given, "--html", html]) == 2
    err = capsys.readouterr().err
    assert err.startswith("harness report: error: ") and line in err
    assert err.count("\n") == 1
    assert not Path(html).exists()
