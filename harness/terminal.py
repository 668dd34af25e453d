"""Text for the terminal: no character from a loop, a tool, a file or a file name acts on it.

A loop's error text, a tool result or a cassette can hold raw controls: ESC starts the sequences
that recolour, clear the screen, move the cursor, set the window title or (OSC 52) write the
clipboard; CR and backspace overwrite what was printed; a C1 byte is ESC's 8-bit form for some
terminals; a bidi override reorders the line it sits in (CVE-2021-42574). The harness prints
each of them as a visible escape (`\\x1b`, `\\u202e`), the same sets the reports use
(`harness.report.controls`); a lone surrogate, which no terminal encoding can write, likewise.

`terminal_safe` is for one field of a line (newlines and tabs escaped too, so a message stays
on its line); `neutralised_output` guards everything a command prints, keeping newlines and
tabs (the harness's own layout) and escaping the rest.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TextIO, cast

from harness.report.controls import BIDI, SURROGATES, escape

_C0_DEL_C1 = "\x00-\x1f\x7f-\x9f"
FIELD_UNSAFE = re.compile(f"[{_C0_DEL_C1}{BIDI}{SURROGATES}]")
OUTPUT_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI}{SURROGATES}]")


def terminal_safe(text: str) -> str:
    """`text` for one field of a console line: every control, bidi and lone surrogate escaped."""
    return FIELD_UNSAFE.sub(escape, text)


def terminal_output(text: str) -> str:
    """`text` for the console as a whole: like `terminal_safe`, but newlines and tabs kept."""
    return OUTPUT_UNSAFE.sub(escape, text)


class _Neutralising:
    """A text stream that writes through `terminal_output`; everything else is the stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(terminal_output(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def neutralised_output() -> Iterator[None]:
    """Within the block, `sys.stdout` and `sys.stderr` escape what `terminal_output` escapes."""
    saved = sys.stdout, sys.stderr
    if saved[0] is not None:  # None under pythonw: nothing is printed anyway
        sys.stdout = cast(TextIO, _Neutralising(saved[0]))
    if saved[1] is not None:
        sys.stderr = cast(TextIO, _Neutralising(saved[1]))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
