"""How much an untrusted file may cost to read: scenarios, cassettes and results files can come
from a pull request, so CI reads them as hostile input.

Every limit is a named constant here; a file past one is refused with `LimitError` (a
`ValueError`, so the readers' existing "malformed" handling names the file and interaction),
which each reader turns into its own one-line `HarnessError`.

- size: a file is read in chunks and refused past its limit, so a symlink to `/dev/zero` or a
  huge file never fills memory (at most limit + one chunk is ever held);
- text: strict UTF-8, refused at the first bad byte (its line is named); a lone surrogate
  (`"\\ud800"`, which YAML and JSON escapes can produce) is refused too, since it cannot be
  written back as UTF-8 and would kill a run at its first write;
- nesting: Python's recursion limit (1,000 frames) is reached by many libraries (jsonschema,
  deepdiff, the checks) well before 1,000 levels, so documents are refused past a depth that
  keeps every recursive reader far from it;
- compressed bodies: a gzip/deflate body is refused once it would inflate past
  `MAX_BODY_BYTES`, before the memory is spent.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MIB = 1024 * 1024
READ_CHUNK = MIB

MAX_SCENARIO_BYTES = 1 * MIB  # the library's largest scenario is under 10 KB
MAX_CASSETTE_BYTES = 64 * MIB  # the library's largest cassette is ~130 KB
MAX_RESULTS_BYTES = 256 * MIB  # 500 cells of raw exchanges are tens of MB
# A decompressed (gzip/deflate) body: the real APIs refuse requests above 32 MB (413).
MAX_BODY_BYTES = 32 * MIB

# Nesting, counted in mappings/lists. A scenario's deepest field in the library is 10 levels;
# its tool parameters and arguments travel inside request bodies, so a cassette (and each JSON
# body in it) gets more room, and a results file, which holds those bodies a few levels down,
# more again. 100 is also the emulator's limit (harness/emulator/limits.py) and Google's.
MAX_SCENARIO_DEPTH = 50
MAX_DOCUMENT_DEPTH = 100
MAX_RESULTS_DEPTH = 128

# Integers: Python refuses to print one of more than 4,300 digits (a ValueError at the first
# error message or JSON dump that shows it), so far fewer are accepted; no API takes more.
MAX_INT_DIGITS = 300
_INT_BOUND = 10**MAX_INT_DIGITS

# YAML aliases: how many values all aliases together may add to a document beyond what is
# written. Merge keys (`<<: *defaults`) and vcrpy's shared-object anchors (`&id001`) add a few
# hundred; a "billion laughs" bomb of 600 bytes would add ~10^9.
MAX_ALIAS_VALUES = 100_000


class LimitError(ValueError):
    """An input past a limit, or text that is not valid UTF-8/Unicode; `line` when known."""

    def __init__(self, problem: str, line: int | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line

    def __str__(self) -> str:
        return self.problem if self.line is None else f"line {self.line}: {self.problem}"


def read_bytes(path: str | Path, limit: int) -> bytes:
    """At most `limit` bytes of the file; LimitError past that, OSError as open() gives it."""
    chunks: list[bytes] = []
    total = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(READ_CHUNK):
            total += len(chunk)
            if total > limit:
                raise LimitError(f"larger than {_size(limit)}, the limit for this kind of file")
            chunks.append(chunk)
    return b"".join(chunks)


def decode_utf8(data: bytes) -> str:
    """The text, or LimitError naming the line of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        bad = data[exc.start : exc.start + 1].hex()
        raise LimitError(f"not UTF-8 text (byte 0x{bad} cannot be decoded)", line) from None


def read_text(path: str | Path, limit: int) -> str:
    return decode_utf8(read_bytes(path, limit))


def surrogate_in(text: str) -> str | None:
    """The first lone surrogate in `text`, escaped (`\\ud800`), or None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"\\u{ord(text[exc.start]):04x}"
    return None


def check_text(text: str) -> None:
    found = surrogate_in(text)
    if found is not None:
        raise LimitError(
            f"holds a lone surrogate ({found}), which is not valid Unicode and cannot be "
            "written as UTF-8; escape a whole character instead (e.g. \\U0001F600)"
        )


def check_json_value(value: Any, max_depth: int) -> None:
    """Refuse (LimitError, with the JSON path) nesting past `max_depth`, lone surrogates in any
    string or key, and integers past `MAX_INT_DIGITS`. Iterative: it must not itself recurse
    on what it guards against."""
    for path, item, depth in _walk(value):
        if depth > max_depth:
            raise LimitError(f"{_path(path)}: nested deeper than {max_depth} levels")
        try:
            if isinstance(item, str):
                check_text(item)
            elif isinstance(item, int):
                check_int(item)
        except LimitError as exc:
            raise LimitError(f"{_path(path)}: {exc.problem}") from None


def check_int(value: int) -> None:
    if not -_INT_BOUND < value < _INT_BOUND:
        raise LimitError(f"an integer of more than {MAX_INT_DIGITS} digits")


def _walk(value: Any) -> Iterator[tuple[tuple[str | int, ...], Any, int]]:
    stack: list[tuple[tuple[str | int, ...], Any, int]] = [((), value, 0)]
    while stack:
        path, item, depth = stack.pop()
        yield path, item, depth
        if isinstance(item, dict):
            for key, child in item.items():
                yield (*path, str(key)), key, depth  # keys are checked as text, not nested
                stack.append(((*path, str(key)), child, depth + 1))
        elif isinstance(item, list):
            stack.extend(((*path, i), child, depth + 1) for i, child in enumerate(item))


def _path(path: tuple[str | int, ...], keep: int = 6) -> str:
    """The JSON path; a deep one as its first and last parts (it is one line of a message)."""
    if len(path) > keep:
        return f"{_path(path[:3])}…(depth {len(path)})…{_path(path[-2:])}"
    out = "".join(f"[{p}]" if isinstance(p, int) else f".{_key(p)}" for p in path).lstrip(".")
    return out or "(top)"


def _key(key: str, keep: int = 40) -> str:
    text = key if key.isprintable() else repr(key)
    return text if len(text) <= keep else text[:keep] + "…"


def loads_json(text: str, max_depth: int = MAX_DOCUMENT_DEPTH) -> Any:
    """`json.loads`, but nesting past `max_depth` or a lone surrogate is a LimitError (the
    decoder itself raises RecursionError near Python's limit); JSONDecodeError as usual."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise LimitError(f"nested deeper than {max_depth} levels") from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # an integer past Python's 4,300 digits
        raise LimitError(f"an integer of more than {MAX_INT_DIGITS} digits") from None
    check_json_value(value, max_depth)
    return value


def decompress(data: bytes, limit: int = MAX_BODY_BYTES) -> bytes:
    """A gzip (one or more members) or zlib body, refused (LimitError) past `limit` bytes out;
    `zlib.error` when the data is not compressed as it says."""
    out: list[bytes] = []
    total = 0
    rest = data
    while rest:
        inflater = zlib.decompressobj(wbits=47)  # 32 + 15: gzip or zlib header, detected
        piece = inflater.decompress(rest, limit - total + 1)
        total += len(piece)
        if total > limit or inflater.unconsumed_tail:
            raise LimitError(f"a compressed body inflates past {_size(limit)}")
        if not inflater.eof:
            raise zlib.error("the compressed body ends early")
        out.append(piece)
        rest = inflater.unused_data.lstrip(b"\x00")  # gzip allows zero padding after a member
    return b"".join(out)


def _size(limit: int) -> str:
    return f"{limit // MIB} MiB" if limit % MIB == 0 else f"{limit:,} bytes"
