"""`harness emulate` as a user runs it: a separate process, shell lines first, SIGTERM stops it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_emulate_prints_sourceable_lines_serves_an_sdk_and_stops_cleanly() -> None:
    import anthropic

    scenarios = [
        ROOT / "scenarios" / "one_tool_then_answer.yaml",
        ROOT / "scenarios" / "answer_without_tools.yaml",
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "emulate", *map(str, scenarios), "--run", "demo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline().rstrip("\n") for _ in range(4)]
        env = dict(line.split("=", 1) for line in lines[:3])
        assert list(env) == ["ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL"]
        assert env["ANTHROPIC_BASE_URL"].endswith("/s/one_tool_then_answer/r/demo")
        assert env["OPENAI_BASE_URL"].endswith("/s/one_tool_then_answer/r/demo/v1")
        assert lines[3].startswith("# answer_without_tools: ANTHROPIC_BASE_URL=")
        # The printed lines are valid shell assignments.
        shell = subprocess.run(
            ["bash", "-c", "\n".join(lines) + '\necho "$OPENAI_BASE_URL"'],
            capture_output=True,
            text=True,
            check=True,
        )
        assert shell.stdout.strip() == env["OPENAI_BASE_URL"]
        client = anthropic.Anthropic(
            base_url=env["ANTHROPIC_BASE_URL"], api_key="dummy", max_retries=0
        )
        reply = client.messages.create(
            model="claude-test",
            max_tokens=64,
            messages=[{"role": "user", "content": "How is my bench press going?"}],
            tools=[
                {
                    "name": "get_workout_history",
                    "description": "d",
                    "input_schema": {"type": "object", "properties": {}},
                }
            ],
        )
        assert reply.stop_reason == "tool_use"
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert "stopped" in err


def test_emulate_bad_scenario_exits_2_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("title: x\n")
    result = subprocess.run(
        [sys.executable, "-m", "harness.cli", "emulate", str(bad)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=30,
        env={**os.environ},
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "bad.yaml" in result.stderr


def test_emulate_refuses_a_run_id_that_is_not_one_with_one_line(tmp_path: Path) -> None:
    scenario = ROOT / "scenarios" / "one_tool_then_answer.yaml"
    for run in ("$(touch pwned)", "a b", "..", "x" * 129):
        result = subprocess.run(
            [sys.executable, "-m", "harness.cli", "emulate", str(scenario), "--run", run],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=30,
        )
        assert result.returncode == 2, result.stderr
        assert result.stderr.count("\n") == 1 and "--run" in result.stderr
        assert result.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_printed_lines_only_assign_even_for_a_hostile_value(tmp_path: Path) -> None:
    from harness.commands.emulate import shell_assignment

    value = "http://127.0.0.1:1/s/x/r/~a/$(touch pwned)`touch pwned2`;touch pwned3"
    line = shell_assignment("OPENAI_BASE_URL", value)
    shell = subprocess.run(
        ["bash", "-c", f'{line}\necho "$OPENAI_BASE_URL"'],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    )
    assert shell.stdout.strip() == value
    assert list(tmp_path.iterdir()) == []
    assert shell_assignment("A", "http://127.0.0.1:8765/s/x/r/demo/v1") == (
        "A=http://127.0.0.1:8765/s/x/r/demo/v1"
    )
