"""Cassette files on disk: reading them, writing them readable (block style, multi-line text as
`|` blocks, keys in wire order), and writing them safely: never a file that holds something that
looks like a key, and never a half-written one (a temporary file in the same folder, then an
atomic rename).

Reading: a replay loads every cassette of the library, and building Python objects from
block-style YAML costs ~10 ms per cassette even with libyaml (the constructor and resolver are
Python), about 15× what json takes for the same data. So each parsed document is kept in a
cache as JSON, keyed by the SHA-256 of the file's bytes: an edited file is a new key, so the
cache can never serve stale content. `HARNESS_CASSETTE_CACHE` names the cache folder (default
`$XDG_CACHE_HOME/harness/cassettes` or `~/.cache/harness/cassettes`); `off` disables it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from harness.cassettes.cassette import Cassette, cassette_from_yaml
from harness.errors import CassetteError
from harness.limits import MAX_CASSETTE_BYTES, MAX_DOCUMENT_DEPTH, LimitError, read_text
from harness.safe_yaml import Loader as Loader  # re-exported: tests load with it
from harness.safe_yaml import load_yaml, yaml_problem
from harness.scrub import find_key

Dumper: Any
try:
    Dumper = yaml.CSafeDumper
except AttributeError:  # PyYAML built without libyaml
    Dumper = yaml.SafeDumper


NEW_FILE_MODE = 0o644
CACHE_VARIABLE = "HARNESS_CASSETTE_CACHE"
# Bump when the meaning of a parsed document changes. 2: documents are cached only once
# within the limits of `harness.limits` and free of key-shaped text.
CACHE_VERSION = 2


class _CassetteDumper(Dumper):  # type: ignore[misc]
    """Multi-line strings as literal blocks, so prompts and SSE text read as written."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:  # the emitter falls back to quotes where a block cannot hold it
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_CassetteDumper.add_representer(str, _represent_str)


def load_cassette(path: str | Path) -> Cassette:
    """Read and check a cassette; CassetteError (file, interaction, field) when it is bad."""
    file = str(path)
    return cassette_from_text(file, read_cassette_text(file))


def read_cassette_text(file: str) -> str:
    """The file's text: at most `MAX_CASSETTE_BYTES` of strict UTF-8, else CassetteError."""
    try:
        return read_text(file, MAX_CASSETTE_BYTES)
    except FileNotFoundError:
        raise CassetteError(f"{file}: no such cassette") from None
    except OSError as exc:
        raise CassetteError(f"{file}: cannot read: {exc.strerror or exc}") from None
    except LimitError as exc:
        raise CassetteError(f"{file}: {exc}") from None


def cassette_from_text(file: str, text: str) -> Cassette:
    return cassette_from_yaml(file, parse_yaml(file, text))


def parse_yaml(file: str, text: str) -> Any:
    """The YAML document in `text`, from the cache when this exact text was parsed before.

    Only a text within the limits (`harness.safe_yaml`) is parsed, and only one that holds
    nothing key-shaped (`harness.scrub.find_key`) is cached: a re-record the secret scan
    refuses must leave no copy of the key in the user's cache folder either."""
    entry = _cache_entry(text)
    if entry is not None:
        with contextlib.suppress(OSError, ValueError, RecursionError):
            return json.loads(entry.read_text("utf-8"))
    try:
        data = load_yaml(text, MAX_DOCUMENT_DEPTH)
    except yaml.YAMLError as exc:
        raise CassetteError(f"{file}: not valid YAML: {yaml_problem(exc, text)}") from None
    except LimitError as exc:
        raise CassetteError(f"{file}: {exc}") from None
    if entry is not None and find_key(text) is None:
        _remember(entry, data)
    return data


def _cache_entry(text: str) -> Path | None:
    cache = cache_folder()
    if cache is None:
        return None
    digest = hashlib.sha256(f"{CACHE_VERSION}\n{text}".encode("utf-8", "surrogatepass"))
    name = digest.hexdigest()
    return cache / name[:2] / f"{name}.json"


def cache_folder() -> Path | None:
    configured = os.environ.get(CACHE_VARIABLE, "")
    if configured.lower() == "off":
        return None
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "harness" / "cassettes"


def _remember(entry: Path, data: Any) -> None:
    """Cache `data` if JSON holds it exactly (not `!!binary`, dates, or non-string keys)."""
    try:
        dumped = json.dumps(data, ensure_ascii=False)
        if json.loads(dumped) != data:
            return
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
    except (OSError, TypeError, ValueError):
        return  # a cache that cannot be written only costs time
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(dumped)
        os.replace(temp, entry)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)


def dump_cassette(cassette: Cassette) -> str:
    return dump_yaml(cassette.to_yaml())


def dump_yaml(data: Any) -> str:
    text: str = yaml.dump(
        data,
        Dumper=_CassetteDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )
    return text


def check_no_secret(file: str, text: str, secrets: Iterable[str] = ()) -> None:
    """Refuse (CassetteError) a text holding a key-shaped string or a known secret value."""
    found = find_key(text)
    if found is None:
        found = next((f"{s[:4]}…({len(s)} chars)" for s in secrets if s and s in text), None)
    if found is not None:
        line = _line_of(text, found)
        raise CassetteError(
            f"{file}: not written: it would hold something that looks like a key ({found}"
            f"{line}); the header/query scrubbing missed it, so nothing was saved"
        )


def write_atomic(path: str | Path, text: str, secrets: Iterable[str] = ()) -> None:
    """Write `text` to `path` all at once: a temporary file beside it, flushed, then renamed
    over the old one. An error or an interrupt on the way leaves the old file untouched."""
    target = Path(path)
    check_no_secret(str(target), text, secrets)
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = target.stat().st_mode & 0o777 if target.exists() else NEW_FILE_MODE
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.chmod(temp, mode)  # mkstemp makes 0600; a cassette is a file to commit and share
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _line_of(text: str, masked: str) -> str:
    prefix = masked.split("…", 1)[0]
    at = text.find(prefix)
    return "" if at < 0 else f" at line {text.count(chr(10), 0, at) + 1}"
