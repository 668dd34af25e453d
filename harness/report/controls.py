"""Characters a report file cannot hold as they are, shown as escapes instead.

XML 1.0 (§2.2 Char) forbids the C0 controls other than tab, newline and carriage return, lone
surrogates and U+FFFE/U+FFFF: ElementTree writes them anyway, and the JUnit file no longer parses.
In HTML a NUL is dropped by the parser and a lone surrogate cannot be encoded as UTF-8 at all.
DEL and the C1 controls are invisible, and the bidirectional overrides, isolates and marks
reorder the text around them, so a tool result can read differently from what it holds
("Trojan Source", CVE-2021-42574). A tool result or a loop's error can hold any of them (an ANSI
colour code, a binary read, a hostile page), so both reports write each one as a visible
`\\xNN` / `\\uNNNN` escape. The terminal output uses the same sets (`harness.terminal`).
"""

from __future__ import annotations

import re

# The bidirectional formatting characters of Unicode's UAX #9 (§2): the embeddings and
# overrides U+202A–U+202E, the isolates U+2066–U+2069, and the marks LRM, RLM and ALM.
BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# C0 (but tab, newline, carriage return, which text needs), DEL and C1.
CONTROLS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
SURROGATES = "\ud800-\udfff"

FORBIDDEN = re.compile(f"[{CONTROLS}{BIDI}{SURROGATES}\ufffe\uffff]")


def escape(match: re.Match[str]) -> str:
    """One matched character as the escape Python would write for it (`\\x1b`, `\\u202e`)."""
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def json_escape(match: re.Match[str]) -> str:
    """One matched character as a JSON escape (`\\u001b`), so a raw body stays valid JSON."""
    return f"\\u{ord(match.group(0)):04x}"


def visible_controls(text: str) -> str:
    """`text` with every control, bidi and unencodable character written as an escape."""
    return FORBIDDEN.sub(escape, text)
