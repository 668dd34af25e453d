"""`harness run --shard K/N`: a deterministic, balanced split of the library's cells, validated
in one line; the shards' results merged by `harness report` are the sequential run's."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import HarnessError
from harness.runner import cells
from harness.shards import parse_shard, shard_of
from tests.conftest import ROOT, library
from tests.same_results import comparable, outputs
from tests.test_workers import SUBSET


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_shards_cover_the_library_once_and_differ_by_at_most_one_cell(count: int) -> None:
    scenarios = library()
    chosen = cells(scenarios)
    parts = [shard_of(chosen, scenarios, f"{k}/{count}")[0] for k in range(1, count + 1)]
    places = [p for part in parts for p in part]
    assert sorted(places) == list(range(1, len(chosen) + 1))
    assert max(map(len, parts)) - min(map(len, parts)) <= 1
    assert all(part == sorted(part) for part in parts)  # each shard keeps the run order


def test_a_cell_lands_in_the_same_shard_whatever_order_the_cells_come_in() -> None:
    scenarios = library()
    chosen = cells(scenarios)
    shuffled = list(chosen)
    random.Random(7).shuffle(shuffled)
    for k in (1, 2, 3):
        mine = {chosen[p - 1].id for p in shard_of(chosen, scenarios, f"{k}/3")[0]}
        theirs = {shuffled[p - 1].id for p in shard_of(shuffled, scenarios, f"{k}/3")[0]}
        assert mine == theirs


def test_the_shard_records_the_whole_selection_and_the_library() -> None:
    scenarios = library()
    chosen = cells(scenarios)
    _, shard = shard_of(chosen, scenarios, "2/3")
    assert shard.label == "2/3"
    assert shard.selection == tuple(c.id for c in chosen)
    assert shard.library.startswith("sha256:")
    assert shard_of(chosen, scenarios[:-1], "2/3")[1].library != shard.library


@pytest.mark.parametrize("text", ["0/2", "3/2", "1/0", "2", "a/b", "-1/2", "1/2/3", ""])
def test_a_bad_shard_is_one_line(text: str) -> None:
    with pytest.raises(HarnessError) as caught:
        parse_shard(text)
    assert str(caught.value) == (
        f"--shard {text!r}: write it as K/N with 1 <= K <= N, e.g. --shard 1/2 and --shard 2/2 "
        "for a two-job CI matrix"
    )


@pytest.mark.parametrize("text", ["1/1", "2/2", " 3/4 "])
def test_a_good_shard_parses(text: str) -> None:
    assert parse_shard(text) == tuple(int(n) for n in text.strip().split("/"))


def test_a_shard_with_no_cell_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = [SUBSET[0], "--provider", "anthropic", "--stream", "off"]
    assert main(["run", "--shard", "2/2", *one, *outputs(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (
        "harness run: error: --shard 2/2: no cell falls in this shard (the run has 1); use fewer "
        "shards"
    )


def test_shards_merged_are_the_sequential_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    given = ["--cassettes", str(ROOT / "cassettes"), *SUBSET]
    assert main(["run", *given, *outputs(tmp_path / "all")]) == 0
    assert main(["run", "--shard", "1/2", *given, *outputs(tmp_path / "1")]) == 0
    assert main(["run", "--shard", "2/2", "--jobs", "2", *given, *outputs(tmp_path / "2")]) == 0
    shard = json.loads((tmp_path / "2" / "results.json").read_text())["run"]
    assert shard["shard"] == "2/2" and len(shard["selection"]) == 20
    merged = tmp_path / "merged" / "results.json"
    files = [str(tmp_path / k / "results.json") for k in ("2", "1")]
    views = ["--html", str(merged.with_name("i.html")), "--junit", str(merged.with_name("j.xml"))]
    assert main(["report", *files, "--results", str(merged), *views]) == 0
    capsys.readouterr()
    assert comparable(merged) == comparable(tmp_path / "all" / "results.json")
    assert merged.with_name("j.xml").is_file()
