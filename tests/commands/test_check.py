"""`harness check` and the CLI's error handling."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_check_library_ok(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(ROOT / "scenarios")]) == 0
    out = capsys.readouterr().out
    assert "ok    " in out and " 0 invalid" in out


def test_check_reports_each_bad_file_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = (ROOT / "scenarios" / "one_tool_then_answer.yaml").read_text()
    (tmp_path / "good.yaml").write_text(good)
    (tmp_path / "bad.yaml").write_text(good.replace("effect: read", "effect: maybe"))
    assert main(["check", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert f"{tmp_path / 'bad.yaml'}:" in captured.err and "tools[0].effect" in captured.err
    assert "1 valid, 1 invalid" in captured.out


def test_missing_file_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "does/not/exist.yaml"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does/not/exist.yaml" in err


def test_bad_usage_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["emulate"])
    assert caught.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_help_reads_well(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--help"], ["check", "--help"], ["emulate", "--help"]):
        with pytest.raises(SystemExit) as caught:
            main(argv)
        assert caught.value.code == 0
    out = capsys.readouterr().out
    assert "Exit codes" in out and "ANTHROPIC_BASE_URL" in out


def test_help_does_not_import_provider_sdks() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from harness.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "bad = [m for m in ('anthropic', 'openai', 'google.genai') if m in sys.modules]\n"
        "sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, check=False)
    assert result.returncode == 0, "harness --help imported a provider SDK"
