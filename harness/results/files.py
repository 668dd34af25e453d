"""Write a results file atomically; read one back, checked against the shipped JSON Schema.

Reading never raises anything but `ResultsError`, whose message names the file and says what
is wrong with it in one line (the CLI prints it and exits 2).
"""

from __future__ import annotations

import functools
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from harness import __version__
from harness.errors import HarnessError
from harness.limits import MAX_RESULTS_BYTES, MAX_RESULTS_DEPTH, LimitError, loads_json, read_text
from harness.results.codec import from_json, to_json
from harness.results.model import SCHEMA_NAME, SCHEMA_VERSION, Results
from harness.scrub import redact

SCHEMA_FILE = Path(__file__).with_name("schema.json")
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class ResultsError(HarnessError):
    """A results file is missing, unreadable, of another schema version, or malformed."""


@functools.cache
def results_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return schema


@functools.cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator

    # The same schema with its `$ref`s replaced by their definitions (it has no recursion):
    # resolving references was ~40% of the time to check a 500-cell file.
    schema = results_schema()
    return Draft202012Validator(_inline(schema, schema["$defs"]))


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and len(node) == 1:
            return _inline(defs[ref.removeprefix("#/$defs/")], defs)
        return {k: _inline(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def results_json(results: Results) -> dict[str, Any]:
    data: dict[str, Any] = to_json(results)
    return data


def write_results(results: Results, path: str | Path) -> Path:
    # Compact: 500 cells of raw exchanges are tens of megabytes; `jq .` pretty-prints.
    text = json.dumps(results_json(results), ensure_ascii=False, separators=(",", ":"))
    # A lone surrogate (a model's `"\ud800"` escape, a loop's text) cannot be UTF-8; it is
    # kept visible as the text `\ud800` (the reader refuses real lone surrogates).
    return write_text_atomic(path, LONE_SURROGATE.sub(lambda m: f"\\\\u{ord(m[0]):04x}", text))


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write `path` (folders created) through a temporary file, so a reader never sees half.
    Key-shaped strings and secret values are redacted first (`harness.scrub.redact`): results,
    reports and JUnit hold what loops and users sent, which may include a pasted key.
    A path that cannot be written is the user's input error (`ResultsError`), not a crash."""
    target = Path(path)
    try:
        visible = LONE_SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)
        return _write(target, redact(visible))
    except OSError as exc:
        raise ResultsError(f"{target}: cannot write it: {exc.strerror or exc}") from None


def _write(target: Path, text: str) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; a report is to be read
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def read_results(path: str | Path) -> Results:
    data = load_results_json(path)
    try:
        return from_json(Results, data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        # The schema let it through but it does not build (a check the schema cannot say).
        raise ResultsError(f"{path}: not a readable results file: {exc}") from None


def load_results_json(path: str | Path) -> dict[str, Any]:
    """The file's JSON, checked: its schema name, its version, then the whole schema."""
    source = Path(path)
    data = _parse(source)
    if not isinstance(data, dict) or data.get("schema") != SCHEMA_NAME:
        raise ResultsError(
            f'{source}: not a harness results file (no "schema": "{SCHEMA_NAME}" at the top)'
        )
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ResultsError(
            f"{source}: results schema version {version!r}, but harness {__version__} reads "
            f"version {SCHEMA_VERSION}; write it again with this harness (`harness run`)"
        )
    validate_results_json(data, source)
    return data


def validate_results_json(data: Any, source: str | Path = "results") -> None:
    from jsonschema.exceptions import best_match

    error = best_match(_validator().iter_errors(data))
    if error is not None:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.path)
        raise ResultsError(
            f"{source}: does not match the results schema at {where.lstrip('.') or 'the top'}: "
            f"{error.message}"
        )


def _parse(source: Path) -> Any:
    """The file's JSON within `harness.limits` (size, nesting, valid Unicode)."""
    try:
        text = read_text(source, MAX_RESULTS_BYTES)
    except FileNotFoundError:
        raise ResultsError(
            f"{source}: no such results file (`harness run` writes reports/results.json)"
        ) from None
    except IsADirectoryError:
        raise ResultsError(f"{source}: is a folder, not a results file") from None
    except OSError as exc:
        raise ResultsError(f"{source}: cannot read it: {exc.strerror or exc}") from None
    except LimitError as exc:
        raise ResultsError(f"{source}: cannot read it: {exc}") from None
    try:
        return loads_json(text, MAX_RESULTS_DEPTH)
    except json.JSONDecodeError as exc:
        raise ResultsError(
            f"{source}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "is it a results file, and was it written completely?"
        ) from None
    except LimitError as exc:
        raise ResultsError(f"{source}: refused: {exc}") from None
