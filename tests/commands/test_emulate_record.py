"""`harness emulate --record DIR` as a user runs it: a separate process, an app on the printed
base URLs, then Ctrl-C or SIGTERM; the cassettes written are named on stderr and judged clean by
`harness audit --scenario`. Bad options are one line and exit 2."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import anthropic
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "one_tool_then_answer.yaml"
CLI = [sys.executable, "-m", "harness.cli"]


def _app(base_url: str, stream: bool) -> None:
    """The reference loop on its own client, as an app outside the harness would run it."""
    from harness.commands.common import load_all
    from harness.loop.contract import LoopCall
    from harness.loop.reference import reference_loop
    from harness.tools import ToolRecorder

    scenario = load_all([str(SCENARIO)])[0]
    client = anthropic.Anthropic(base_url=base_url, api_key="dummy", max_retries=0)
    for turn in scenario.messages:
        result = reference_loop(
            LoopCall(
                provider="anthropic",
                client=client,
                async_client=None,
                base_url=base_url,
                api_key="dummy",
                env={},
                model="claude-test",
                system=scenario.system,
                history=scenario.history,
                message=turn.text,
                tools=ToolRecorder(scenario, lambda: 0).specs(),
                max_rounds=scenario.max_rounds,
                stream=stream,
            )
        )
        assert result.error is None


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_record_writes_on_stop_and_audits_clean(tmp_path: Path, stop: signal.Signals) -> None:
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [*CLI, "emulate", str(SCENARIO), "--record", str(out), "--idle", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        env = dict(proc.stdout.readline().rstrip("\n").split("=", 1) for _ in range(3))
        _app(env["ANTHROPIC_BASE_URL"], stream=False)
        _app(env["ANTHROPIC_BASE_URL"], stream=True)
        assert not out.exists()  # --idle 0: nothing before the stop
    finally:
        proc.send_signal(stop)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    written = [line for line in err.splitlines() if line.startswith("harness emulate: wrote ")]
    files = sorted(out.rglob("*.yaml"))
    names = [p.relative_to(out).as_posix() for p in files]
    assert names == [
        "anthropic/one_tool_then_answer.stream.yaml",
        "anthropic/one_tool_then_answer.yaml",
    ]
    assert len(written) == 2 and all("run 'default'" in line for line in written)
    audited = subprocess.run(
        [*CLI, "audit", "--scenario", str(SCENARIO), *map(str, files)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert audited.returncode == 0, audited.stdout + audited.stderr
    assert "judged: " in audited.stdout


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--idle", "3"], "--idle applies to --record"),
        (["--record", "{file}"], "exists and is not a folder"),
        (["--record", "{dir}", "--idle", "-1"], "must be 0 or more seconds"),
        (["--record", "{dir}", "--idle", "nan"], "must be 0 or more seconds"),
    ],
)
def test_bad_record_options_are_one_line_and_exit_2(
    tmp_path: Path, argv: list[str], says: str
) -> None:
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    argv = [a.format(file=a_file, dir=tmp_path / "out") for a in argv]
    result = subprocess.run(
        [*CLI, "emulate", str(SCENARIO), *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=30,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and says in result.stderr
