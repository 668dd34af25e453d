"""Console output never carries a raw control, bidi or lone-surrogate character: a loop's error
text, a tool result, a file name or a cassette can hold ESC sequences (recolour, clear, set the
title, write the clipboard), NUL, CR or a bidi override, and every command prints them as
visible escapes (`harness.terminal`)."""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.loop.contract import LoopCall, LoopResult
from harness.report.console import summary_lines
from harness.terminal import neutralised_output, terminal_output, terminal_safe
from tests.conftest import SCENARIOS
from tests.results.runs import control_results

ONE = str(SCENARIOS / "one_tool_then_answer.yaml")
BIDI = {
    "\u061c",
    "\u200e",
    "\u200f",
    *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A)),
}
# What a hostile loop error can hold: clear the screen, set the window title, write the
# clipboard (OSC 52), NUL, CR over the line, a C1 CSI, a right-to-left override.
HOSTILE = (
    "boom\x1b[2J\x1b]0;pwned\x07\x1b]52;c;cm0gLXJm\x07 nul\x00 cr\r c1\x9b31m rlo\u202eexe.txt"
)
# (A lone surrogate in a loop's error still stops `harness run` writing results.json: issue 14's
# "surrogates" item, owned elsewhere; the terminal side is tested below.)


def unsafe(text: str, keep: str = "") -> set[str]:
    """The characters of `text` that must not reach a terminal (test's own definition)."""
    return {
        c for c in text if c not in keep and (unicodedata.category(c) in ("Cc", "Cs") or c in BIDI)
    }


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain text, café, 🏋️, مرحبا", "plain text, café, 🏋️, مرحبا"),
        ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
        ("nul\x00bel\x07bs\x08", "nul\\x00bel\\x07bs\\x08"),
        ("line\nnext\ttab\rover", "line\\x0anext\\x09tab\\x0dover"),
        ("del\x7f c1\x85\x9b", "del\\x7f c1\\x85\\x9b"),
        ("\u202eevil\u202c", "\\u202eevil\\u202c"),
        ("\u2066\u2067\u2068\u2069", "\\u2066\\u2067\\u2068\\u2069"),
        ("\u200e\u200f\u061c", "\\u200e\\u200f\\u061c"),
        ("\u202a\u202b\u202d", "\\u202a\\u202b\\u202d"),
        ("lone\ud800\udfff", "lone\\ud800\\udfff"),
    ],
)
def test_terminal_safe_shows_each_unsafe_character_as_an_escape(text: str, shown: str) -> None:
    assert terminal_safe(text) == shown


def test_terminal_output_keeps_the_layout_newlines_and_tabs() -> None:
    assert terminal_output("a\tb\nc\x1b[2J\r\u202e") == "a\tb\nc\\x1b[2J\\x0d\\u202e"


def test_the_guard_escapes_whatever_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    with neutralised_output():
        print(HOSTILE + "\ud800")
        print(HOSTILE, file=sys.stderr)
        sys.stderr.writelines([HOSTILE, "\n"])
    out, err = capsys.readouterr()
    assert not unsafe(out + err, keep="\n")
    assert out == terminal_output(HOSTILE) + "\\ud800\n"
    assert "Neutralising" not in type(sys.stdout).__name__  # restored after the block


def hostile_loop(call: LoopCall) -> LoopResult:
    """A loop whose error text holds raw terminal controls."""
    raise RuntimeError(HOSTILE)


def test_run_prints_a_hostile_loop_error_as_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_files = [
        f"--{v}={tmp_path / n}"
        for v, n in [("results", "r.json"), ("html", "i.html"), ("junit", "j.xml")]
    ]
    args = ["--source", "scripted", "--provider", "anthropic", "--stream", "off", *out_files]
    loop = "tests.commands.test_terminal_output:hostile_loop"
    assert main(["run", ONE, "--loop", loop, *args]) == 1
    out, err = capsys.readouterr()
    assert not unsafe(out + err, keep="\n")
    assert "boom\\x1b[2J\\x1b]0;pwned\\x07" in err  # the finding line, in the progress
    assert "ERROR: " in out and "boom\\x1b[2J" in out  # the table's answer column
    assert "\\u202eexe.txt" in err and "\\x9b31m" in err


def test_hostile_file_names_are_escaped_in_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad\x1b[2J\u202e.yaml"
    bad.write_text("title: [unclosed\n", encoding="utf-8")
    runs = [
        ["report", str(tmp_path / "missing\x1b]0;pwned\x07.json")],  # the CLI's error line
        ["check", str(bad)],  # `check`'s own lines
        ["audit", str(tmp_path / "none\x9b31m\u2066.yaml")],  # `audit`'s
    ]
    for argv in runs:
        assert main(argv) == 2, argv
        out, err = capsys.readouterr()
        assert not unsafe(out + err, keep="\n"), argv
        assert "\\x1b" in err or "\\x9b" in err, argv


def test_usage_errors_are_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--no-such-\x1b[31m\u202e"])
    err = capsys.readouterr().err
    assert not unsafe(err, keep="\n") and "--no-such-\\x1b[31m\\u202e" in err


def test_the_error_line_stays_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "two\nlines\r.json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "two\\x0alines\\x0d.json" in err


def test_console_summary_lines_are_terminal_safe() -> None:
    lines = summary_lines(control_results())
    assert not unsafe("".join(lines))
    assert any("\\x1b[31m" in line for line in lines)


@settings(max_examples=60, deadline=None)
@given(
    st.text(
        st.one_of(
            st.characters(exclude_categories=()),  # every code point, surrogates included
            st.sampled_from([*sorted(BIDI), "\x1b", "\x00", "\x9b", "\r", "\n"]),
        )
    )
)
def test_nothing_unsafe_survives_terminal_safe(text: str) -> None:
    assert not unsafe(terminal_safe(text))
    assert not unsafe(terminal_output(text), keep="\n\t")
    terminal_safe(text).encode("utf-8")  # and a terminal can always encode it
