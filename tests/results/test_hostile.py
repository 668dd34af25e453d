"""Hostile results files (`harness report RESULTS`, `--previous OLD`): past the limits of
`harness.limits` each is one `ResultsError` naming the file, never a traceback."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.limits import MAX_RESULTS_DEPTH
from harness.results import ResultsError, read_results
from harness.results.files import results_json
from tests.report.synthetic import synthetic_results


def valid() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(results_json(synthetic_results(2))))
    return data


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _in_a_cell(value: Any) -> Callable[[], str]:
    def text() -> str:
        data = valid()
        data["cells"][0]["title"] = value
        return json.dumps(data)

    return text


HOSTILE: list[tuple[str, Callable[[], str | bytes], str]] = [
    ("nested 100,000 deep", lambda: _nested(100_000), "nested deeper than 128 levels"),
    ("nested 200 deep", lambda: _nested(200), "refused: [0][0][0]…(depth 129)…[0][0]: nested"),
    (
        "nested 200 deep in a cell",
        lambda: json.dumps({**valid(), "extra": json.loads(_nested(200))}),
        "extra",
    ),
    ("a lone surrogate", lambda: '{"schema": "harness-results", "x": "\\ud800"}', "surrogate"),
    ("a lone surrogate in a cell", _in_a_cell("\ud800"), "cells[0].title: holds a lone"),
    ("not UTF-8", lambda: b'{"schema": "caf\xe9"}', "line 1: not UTF-8 text (byte 0xe9"),
]


@pytest.mark.parametrize(
    ("make", "says"), [(m, s) for _, m, s in HOSTILE], ids=[h[0] for h in HOSTILE]
)
def test_hostile_results_files_are_one_line(
    tmp_path: Path, make: Callable[[], str | bytes], says: str
) -> None:
    path = tmp_path / "results.json"
    content = make()
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, "utf-8", errors="surrogatepass")
    with pytest.raises(ResultsError) as caught:
        read_results(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and says in message, message
    assert "\n" not in message


def test_the_depth_limit_leaves_room_for_real_files() -> None:
    assert MAX_RESULTS_DEPTH == 128
    from harness.limits import check_json_value

    check_json_value(valid(), 20)  # a real file nests far less than the limit


def test_a_symlink_to_dev_zero_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "results.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(ResultsError, match=r"larger than 256 MiB"):
        read_results(link)
