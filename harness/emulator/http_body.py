"""Reading a request body off the socket, bounded: `Content-Length` or chunked framing, never
more than the limit, and every malformed framing a problem to answer instead of an exception.

A problem means the rest of the connection cannot be trusted (how much of the body is still
unread is unknown), so the server answers it and closes the connection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from email.message import Message
from typing import Protocol

# A chunk-size line (`1a2b;ext=1`) or a trailer line longer than this is not a real client's.
MAX_LINE = 4096
MAX_TRAILER_LINES = 100
# 16 hex digits reach 2**64; any real chunk is far smaller, and longer ones are not parsed.
CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
# More digits than this exceed every limit; they are not converted (a 5,000-digit
# Content-Length would raise Python's int-conversion limit).
MAX_LENGTH_DIGITS = 18


class Reader(Protocol):
    """A buffered socket file: `read(n)` returns fewer than n bytes only at the end of the
    stream (the client closed its side), which both framings rely on to see a cut body."""

    def read(self, size: int = -1, /) -> bytes: ...
    def readline(self, size: int = -1, /) -> bytes: ...


@dataclass(frozen=True, kw_only=True)
class BodyProblem:
    """Why no body was read: `too_large` (the 413; `size` is the declared size, or for a
    chunked body the bytes seen when it passed the limit) or a framing error (a 400)."""

    too_large: bool
    message: str
    size: int = 0


def read_body(headers: Message, rfile: Reader, limit: int) -> bytes | BodyProblem:
    encodings = headers.get_all("transfer-encoding") or []
    lengths = headers.get_all("content-length") or []
    if encodings and lengths:
        # RFC 9112 §6.3: both at once is how requests are smuggled; a server may reject it.
        return _framing("both Transfer-Encoding and Content-Length were sent; send one")
    if encodings:
        if [e.strip().lower() for e in ",".join(encodings).split(",")] != ["chunked"]:
            return _framing(
                f"Transfer-Encoding {', '.join(encodings)!r} is not supported; "
                "send chunked or a Content-Length"
            )
        return _read_chunked(rfile, limit)
    return _read_sized(lengths, rfile, limit)


def _read_sized(lengths: list[str], rfile: Reader, limit: int) -> bytes | BodyProblem:
    values = {v.strip() for v in lengths}
    if not values:
        return b""
    if len(values) > 1:
        return _framing(f"conflicting Content-Length headers: {', '.join(sorted(values))}")
    text = values.pop()
    if not text.isascii() or not text.isdigit():
        return _framing(f"Content-Length {text[:40]!r} is not a number of bytes")
    if len(text) > MAX_LENGTH_DIGITS or int(text) > limit:
        size = int(text) if len(text) <= MAX_LENGTH_DIGITS else limit + 1
        return BodyProblem(too_large=True, message="body over the limit", size=size)
    size = int(text)
    body = rfile.read(size) if size else b""
    if len(body) < size:  # the client closed its side first: the request never arrived whole
        return _framing(f"the body ended after {len(body)} of its {size} bytes (Content-Length)")
    return body


def _read_chunked(rfile: Reader, limit: int) -> bytes | BodyProblem:
    body = bytearray()
    while True:
        line = rfile.readline(MAX_LINE + 1)
        size_text = line.split(b";", 1)[0].strip()
        if not line.endswith(b"\n") or not CHUNK_SIZE.fullmatch(size_text):
            return _framing(f"bad chunk-size line {bytes(line[:40])!r} in a chunked body")
        size = int(size_text, 16)
        if size == 0:
            return _read_trailers(rfile, bytes(body))
        if len(body) + size > limit:
            return BodyProblem(too_large=True, message="body over the limit", size=len(body) + size)
        data = rfile.read(size)
        if len(data) < size or rfile.read(2) != b"\r\n":
            return _framing("a chunk of the chunked body ended early or without CRLF")
        body += data


def _read_trailers(rfile: Reader, body: bytes) -> bytes | BodyProblem:
    for _ in range(MAX_TRAILER_LINES):
        line = rfile.readline(MAX_LINE + 1)
        if line in (b"\r\n", b"\n"):
            return body
        if not line.endswith(b"\n"):
            return _framing("the chunked body ended without its final empty line")
    return _framing(f"more than {MAX_TRAILER_LINES} trailer lines after a chunked body")


def _framing(what: str) -> BodyProblem:
    return BodyProblem(too_large=False, message=f"harness emulator: {what}")
