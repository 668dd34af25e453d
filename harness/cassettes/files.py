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
from harness.scrub import find_key

Loader: Any
Dumper: Any
try:
    Loader = yaml.CSafeLoader
    Dumper = yaml.CSafeDumper
except AttributeError:  # PyYAML built without libyaml
    Loader = yaml.SafeLoader
    Dumper = yaml.SafeDumper


NEW_FILE_MODE = 0o644
CACHE_VARIABLE = "HARNESS_CASSETTE_CACHE"
CACHE_VERSION = 1  # bump when the meaning of a parsed document changes


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
    try:
        text = Path(path).read_text("utf-8")
    except FileNotFoundError:
        raise CassetteError(f"{file}: no such cassette") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CassetteError(f"{file}: cannot read: {exc}") from None
    return cassette_from_text(file, text)


def cassette_from_text(file: str, text: str) -> Cassette:
    return cassette_from_yaml(file, parse_yaml(file, text))


def parse_yaml(file: str, text: str) -> Any:
    """The YAML document in `text`, from the cache when this exact text was parsed before."""
    cache = cache_folder()
    entry = None
    if cache is not None:
        digest = hashlib.sha256(f"{CACHE_VERSION}\n{text}".encode()).hexdigest()
        entry = cache / digest[:2] / f"{digest}.json"
        with contextlib.suppress(OSError, ValueError):
            return json.loads(entry.read_text("utf-8"))
    try:
        data = yaml.load(text, Loader=Loader)
    except yaml.YAMLError as exc:
        raise CassetteError(f"{file}: not valid YAML: {_one_line(exc)}") from None
    if entry is not None:
        _remember(entry, data)
    return data


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


def _one_line(exc: yaml.YAMLError) -> str:
    return " ".join(str(exc).split())
