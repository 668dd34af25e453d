"""The Gemini front end's JSON syntax errors: reason, quoted context and caret, as production
words them (rows quoted in public code that mirrors it), and the lenient forms it accepts."""

from __future__ import annotations

import pytest

from harness.emulator.gemini_json import syntax_error

P = "Invalid JSON payload received. "


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        # quoted in public code as production's answers
        (b"not json", P + "Unexpected token.\nnot json\n^"),
        (b"{not json", P + "Expected : between key:value pair.\n{not json\n     ^"),
        (b'{"structuredQuery":', P + "Unexpected end of string. Expected a value.\n\n^"),
        # Gemini's own answer to Python's NaN (the reason; context per the same rules)
        (b'{"a": NaN}', P + "Unexpected token.\nNaN}\n^"),
        # the same grammar, other reasons
        (b'{"a": "x', P + 'Closing quote expected in string.\n"x\n^'),
        (b'{"a":1} x', P + 'Parsing terminated before end of input.\n{"a":1} x\n        ^'),
        (b"[1 2]", P + "Expected , or ] after array value.\n[1 2]\n   ^"),
        (b'{"a":01}', P + 'Octal/hex numbers are not valid JSON values.\n{"a":01}\n     ^'),
        (b'{"a":1e999}', P + 'Number exceeds the range of double.\n{"a":1e999}\n     ^'),
        (b'{"a": "\\u12"}', P + 'Invalid escape sequence.\n{"a": "\\u12"}\n       ^'),
        (b'{"a" 1}', P + 'Expected : between key:value pair.\n{"a" 1}\n     ^'),
        (
            b'{"a": 1 "b": 2}',
            P + 'Expected , or } after key:value pair.\n{"a": 1 "b": 2}\n        ^',
        ),
    ],
)
def test_syntax_errors(raw: bytes, message: str) -> None:
    assert syntax_error(raw) == message


def test_context_is_twenty_bytes_either_side() -> None:
    raw = b'{"contents": [{"parts": [{"text": "hello there"}]} {"role": "user"}]}'
    message = syntax_error(raw)
    assert message is not None
    _, quoted, caret = message.split("\n")
    at = raw.index(b' {"role"') + 1
    assert quoted == raw[at - 20 : at + 20].decode()
    assert caret == " " * 20 + "^"


@pytest.mark.parametrize(
    "raw",
    [b'{"a": 1,}', b"{contents: []}", b"{'a': 'b'}", b'{"a": [1, 2,]}', b'{"a": "x\ty"}'],
)
def test_lenient_forms_parse(raw: bytes) -> None:
    """Bare keys, single quotes, trailing commas and raw control characters are accepted."""
    assert syntax_error(raw) is None


def test_too_deep() -> None:
    raw = b'{"a":' + b"[" * 101 + b"]" * 101 + b"}"
    assert syntax_error(raw) == P + "Message too deep. Max recursion depth reached for key 'a'"
