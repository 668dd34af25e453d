"""Every command: a --help that reads well, and bad usage as one line with exit 2."""

from __future__ import annotations

import pytest

from harness.cli import COMMANDS, main


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_exits_0_with_a_description(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main([command, "--help"])
    assert caught.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: harness {command}")
    assert len(out.splitlines()) > 8  # a description, not just the usage line


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_unknown_option_is_one_line_and_exit_2(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main([command, "--no-such-option"])
    assert caught.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"harness {command}: error:") and "--help" in err[-1]


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out
