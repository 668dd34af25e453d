"""Writing and reading results files: the JSON Schema shipped in the package, a round trip
that loses nothing, and one clear error for each kind of bad file."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from harness import __version__
from harness.results import SCHEMA_VERSION, ResultsError, read_results, write_results
from harness.results.files import SCHEMA_FILE, results_json, results_schema
from tests.report.synthetic import synthetic_results
from tests.results.runs import broken_results, real_results


def test_the_schema_ships_in_the_package_and_is_a_valid_schema() -> None:
    import harness

    assert SCHEMA_FILE.parent == Path(harness.__file__).parent / "results"
    schema = results_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["schema_version"] == {"const": SCHEMA_VERSION}


def test_round_trip_keeps_everything(tmp_path: Path) -> None:
    for results in (real_results(), broken_results()):
        path = write_results(results, tmp_path / "deep" / "results.json")
        assert read_results(path) == results
    assert [p.name for p in (tmp_path / "deep").iterdir()] == ["results.json"]  # no temp left


def test_the_file_is_json_with_the_schema_name_and_version_first(tmp_path: Path) -> None:
    path = write_results(real_results(), tmp_path / "results.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert list(data)[:2] == ["schema", "schema_version"]
    assert (data["schema"], data["schema_version"]) == ("harness-results", SCHEMA_VERSION)
    assert path.stat().st_mode & 0o044  # readable by others, like any report


def test_synthetic_cells_match_the_schema(tmp_path: Path) -> None:
    """The generator the 500-cell report test and benchmark use writes valid files."""
    results = synthetic_results(60)
    path = write_results(results, tmp_path / "results.json")
    assert read_results(path) == results
    assert len(results.cells) == 60


def _valid() -> dict[str, object]:
    data: dict[str, object] = results_json(real_results())
    return json.loads(json.dumps(data))  # type: ignore[no-any-return]


def _broken_cell(data: dict[str, object]) -> dict[str, object]:
    cell = dict(data["cells"][0])  # type: ignore[index]
    del cell["provider"]
    data["cells"] = [cell]
    return data


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no such results file"),
        ("", "not valid JSON (line 1, column 1"),
        ('{"schema": "harness-results", "cells": [', "not valid JSON"),
        ("[1, 2]", 'not a harness results file (no "schema": "harness-results"'),
        ('{"name": "junit"}', "not a harness results file"),
        (
            lambda d: {**d, "schema_version": 99},
            f"results schema version 99, but harness {__version__} reads version {SCHEMA_VERSION}",
        ),
        (
            lambda d: {k: v for k, v in d.items() if k != "schema_version"},
            "results schema version None",
        ),
        (_broken_cell, "does not match the results schema at cells[0]: 'provider' is a required"),
        (
            lambda d: {**d, "run": {**d["run"], "elapsed": "soon"}},
            "at run.elapsed: 'soon' is not of type 'number'",
        ),
    ],
    ids=[
        "missing",
        "empty",
        "truncated",
        "not-object",
        "other-json",
        "newer-version",
        "no-version",
        "cell-field-missing",
        "wrong-type",
    ],
)
def test_bad_files_give_one_clear_error(tmp_path: Path, content: object, expected: str) -> None:
    path = tmp_path / "results.json"
    if callable(content):
        path.write_text(json.dumps(content(_valid())), encoding="utf-8")
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ResultsError) as caught:
        read_results(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and expected in message
    assert "\n" not in message


def test_a_folder_is_not_a_results_file(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="is a folder"):
        read_results(tmp_path)
