"""Characters a report file cannot hold as they are, shown as escapes instead.

XML 1.0 (§2.2 Char) forbids the C0 controls other than tab, newline and carriage return, lone
surrogates and U+FFFE/U+FFFF: ElementTree writes them anyway, and the JUnit file no longer parses.
In HTML a NUL is dropped by the parser and a lone surrogate cannot be encoded as UTF-8 at all.
A tool result or a loop's error can hold any of them (an ANSI colour code, a binary read), so
both reports write each one as a visible `\\xNN` / `\\uNNNN` escape.
"""

from __future__ import annotations

import re

FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible_controls(text: str) -> str:
    """`text` with every character XML 1.0 forbids written as an escape (`\\x1b`, `\\ud800`)."""
    return FORBIDDEN.sub(_escape, text)
