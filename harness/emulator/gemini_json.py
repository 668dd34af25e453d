"""How the Gemini API words a body that is not JSON.

Google's front end (ESF) runs protobuf's `JsonStreamParser` over the body and answers with its
text, prefixed `Invalid JSON payload received. `: the reason, then up to 20 bytes either side of
where it stopped, then a caret under that byte, e.g.
`Invalid JSON payload received. Expected : between key:value pair.\\n{not json\\n     ^`.
The parser reads in two passes: the first stops without an error where it would need more input
(a token running to the end of the body), and the second ("finishing") pass resumes there and
quotes only from that point on — so a truncated body quotes an empty context.

Evidence: the protobuf `json_stream_parser.cc` reasons and its `ReportFailure` (20 bytes of
context, caret line); real answers quoted in public code: `Unexpected token.\\nnot json\\n^`,
`Unexpected end of string. Expected a value.\\n\\n^`, and from Gemini itself
`Unexpected token.` for a bare `NaN` (Python's `allow_nan` output).

The grammar is more lenient than RFC 8259 (bare-word keys, single quotes, trailing commas, raw
control characters in strings); a body only that grammar accepts gets `None` here.
"""

from __future__ import annotations

import enum

PREFIX = "Invalid JSON payload received. "
_CONTEXT = 20
_MAX_DEPTH = 100
_SPACE = b" \t\n\x0b\x0c\r"


class _Tok(enum.Enum):
    UNKNOWN = 0  # end of body, or a byte no token starts with
    STRING = 1
    NUMBER = 2
    TRUE = 3
    FALSE = 4
    NULL = 5
    BEGIN_OBJECT = 6
    END_OBJECT = 7
    BEGIN_ARRAY = 8
    END_ARRAY = 9
    COLON = 10
    COMMA = 11
    KEY = 12  # a bare word: a key, never a value


_PUNCT = {
    ord("{"): _Tok.BEGIN_OBJECT,
    ord("}"): _Tok.END_OBJECT,
    ord("["): _Tok.BEGIN_ARRAY,
    ord("]"): _Tok.END_ARRAY,
    ord(":"): _Tok.COLON,
    ord(","): _Tok.COMMA,
}


class _Failure(Exception):
    def __init__(self, reason: str, position: int | None, context_start: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.position = position  # None: the message quotes no context
        self.context_start = context_start


def syntax_error(raw: bytes) -> str | None:
    """The API's message for a body it cannot parse, or None if its grammar accepts `raw`."""
    parser = _Parser(raw)
    try:
        parser.value(0, "")
        parser.skip_space()
        if parser.at < len(raw):
            raise parser.fail("Parsing terminated before end of input.", parser.at)
    except _Failure as failure:
        return _render(failure, raw)
    return None


def _render(failure: _Failure, raw: bytes) -> str:
    if failure.position is None:
        return PREFIX + failure.reason
    position = failure.position
    begin = max(position - _CONTEXT, failure.context_start)
    end = min(position + _CONTEXT, len(raw))
    quoted = raw[min(begin, end) : end].decode("utf-8", "replace")
    caret = " " * (position - min(begin, position)) + "^"
    return f"{PREFIX}{failure.reason}\n{quoted}\n{caret}"


def _is_letter(byte: int) -> bool:
    return chr(byte).isascii() and (chr(byte).isalpha() or byte in b"_$")


class _Parser:
    def __init__(self, body: bytes) -> None:
        self.body = body
        self.at = 0
        self.finishing = False  # the first pass stopped: nothing waits for more input now
        self.leftover = 0  # where the second pass started; its refusals quote from here

    def fail(self, reason: str, at: int) -> _Failure:
        return _Failure(
            reason=reason, position=at, context_start=self.leftover if self.finishing else 0
        )

    def stop_first_pass(self, at: int) -> None:
        if not self.finishing:
            self.finishing, self.leftover = True, at

    def unknown(self, reason: str) -> _Failure:
        self.stop_first_pass(self.at)
        if self.at == len(self.body):
            return self.fail(f"Unexpected end of string. {reason}", self.at)
        return self.fail(reason, self.at)

    def skip_space(self) -> None:
        while self.at < len(self.body) and self.body[self.at] in _SPACE:
            self.at += 1

    def token(self) -> _Tok:
        self.skip_space()
        rest = self.body[self.at :]
        if not rest:
            return _Tok.UNKNOWN
        first = rest[0]
        if first in b"\"'":
            return _Tok.STRING
        if first in b"-0123456789":
            return _Tok.NUMBER
        for word, tok in ((b"true", _Tok.TRUE), (b"false", _Tok.FALSE), (b"null", _Tok.NULL)):
            if rest.startswith(word):
                return tok
        if first in _PUNCT:
            return _PUNCT[first]
        return _Tok.KEY if _is_letter(first) else _Tok.UNKNOWN

    def value(self, depth: int, key: str) -> None:
        tok = self.token()
        if tok is _Tok.UNKNOWN:
            raise self.unknown("Expected a value.")
        if tok in (_Tok.BEGIN_OBJECT, _Tok.BEGIN_ARRAY):
            if depth >= _MAX_DEPTH:
                reason = f"Message too deep. Max recursion depth reached for key '{key}'"
                raise _Failure(reason, None)
            self.at += 1
            if tok is _Tok.BEGIN_OBJECT:
                self.object(depth + 1)
            else:
                self.array(depth + 1, key)
        elif tok is _Tok.STRING:
            self.string()
        elif tok is _Tok.NUMBER:
            self.number()
        elif tok in (_Tok.TRUE, _Tok.FALSE, _Tok.NULL):
            self.at += {_Tok.TRUE: 4, _Tok.FALSE: 5, _Tok.NULL: 4}[tok]
        else:
            # A short tail might still become a keyword: the first pass waits for it.
            if len(self.body) - self.at < len("false"):
                self.stop_first_pass(self.at)
            raise self.fail("Unexpected token.", self.at)

    def object(self, depth: int) -> None:
        while True:
            tok = self.token()
            if tok is _Tok.UNKNOWN:
                raise self.unknown("Expected an object key or }.")
            if tok is _Tok.END_OBJECT:  # a comma may trail the last member
                self.at += 1
                return
            if tok is _Tok.STRING:
                key = self.string()
            elif tok in (_Tok.KEY, _Tok.TRUE, _Tok.FALSE, _Tok.NULL):
                key = self.bare_key()
                if key in ("true", "false", "null"):
                    raise self.fail("Expected an object key or }.", self.at)
            else:
                raise self.fail("Expected an object key or }.", self.at)
            self.expect(_Tok.COLON, "Expected : between key:value pair.")
            self.value(depth, key)
            if self.separator(_Tok.END_OBJECT, "Expected , or } after key:value pair."):
                return

    def array(self, depth: int, key: str) -> None:
        while True:
            tok = self.token()
            if tok is _Tok.UNKNOWN:
                raise self.unknown("Expected a value or ] within an array.")
            if tok is _Tok.END_ARRAY:  # a comma may trail the last element
                self.at += 1
                return
            self.value(depth, key)
            if self.separator(_Tok.END_ARRAY, "Expected , or ] after array value."):
                return

    def expect(self, wanted: _Tok, reason: str) -> None:
        tok = self.token()
        if tok is _Tok.UNKNOWN:
            raise self.unknown(reason)
        if tok is not wanted:
            raise self.fail(reason, self.at)
        self.at += 1

    def separator(self, closer: _Tok, reason: str) -> bool:
        """Consume `,` (False: more follows) or the closer (True: done)."""
        tok = self.token()
        if tok is _Tok.UNKNOWN:
            raise self.unknown(reason)
        if tok not in (_Tok.COMMA, closer):
            raise self.fail(reason, self.at)
        self.at += 1
        return tok is closer

    def bare_key(self) -> str:
        start = self.at
        while self.at < len(self.body) and (
            _is_letter(self.body[self.at]) or chr(self.body[self.at]).isdigit()
        ):
            self.at += 1
        if self.at == len(self.body):
            self.stop_first_pass(start)
        return self.body[start : self.at].decode("ascii", "replace")

    def string(self) -> str:
        """Skip a string; its raw text (escapes left as written) names a key in messages."""
        start, quote = self.at, self.body[self.at]
        i = start + 1
        while True:
            if i >= len(self.body):
                self.stop_first_pass(start)
                raise self.fail("Closing quote expected in string.", start)
            byte = self.body[i]
            if byte == quote:
                self.at = i + 1
                return self.body[start + 1 : i].decode("utf-8", "replace")
            if byte != ord("\\"):
                i += 1
            elif i + 1 >= len(self.body):
                self.stop_first_pass(start)
                raise self.fail("Closing quote expected in string.", start)
            elif self.body[i + 1] == ord("u"):
                i += self.unicode_escape(i, start)
            else:
                i += 2  # any other escaped character stands for itself

    def unicode_escape(self, at: int, start: int) -> int:
        """Bytes taken by the `\\uXXXX` escape (a surrogate pair included) at `at`."""
        if len(self.body) - at < 6:
            self.stop_first_pass(start)
            raise self.fail("Illegal hex string.", at)
        code = self._hex4(at + 2)
        if code is None:
            raise self.fail("Invalid escape sequence.", at)
        if not 0xD800 <= code <= 0xDBFF:
            return 6
        if len(self.body) - at < 12:
            self.stop_first_pass(start)
            raise self.fail("Missing low surrogate.", at)
        if self.body[at + 6 : at + 8] != b"\\u":
            raise self.fail("Missing low surrogate.", at)
        low = self._hex4(at + 8)
        if low is None:
            raise self.fail("Invalid escape sequence.", at)
        if not 0xDC00 <= low <= 0xDFFF:
            raise self.fail("Invalid low surrogate.", at)
        return 12

    def _hex4(self, at: int) -> int | None:
        digits = self.body[at : at + 4]
        try:
            return int(digits.decode("ascii"), 16) if len(digits) == 4 else None
        except (UnicodeDecodeError, ValueError):
            return None

    def number(self) -> None:
        start = end = self.at
        floating = False
        while end < len(self.body) and self.body[end] in b"0123456789+-x.eE":
            floating = floating or self.body[end] in b".eE"
            end += 1
        if end == len(self.body):
            self.stop_first_pass(start)
        text = self.body[start:end].decode("ascii")
        digits = text.lstrip("-")
        if not floating and len(digits) >= 2 and digits[0] == "0":
            raise self.fail("Octal/hex numbers are not valid JSON values.", start)
        try:
            number = float(text)
        except ValueError:
            raise self.fail("Unable to parse number.", start) from None
        if number in (float("inf"), float("-inf")):
            raise self.fail("Number exceeds the range of double.", start)
        self.at = end
