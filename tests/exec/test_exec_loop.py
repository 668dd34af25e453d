"""`harness run --exec`: the same cell judged in process and through a program gives the same
verdicts (an exec wrapper around the same loop, scripted and cassette, every provider, JSON and
stream, clean and faulty loops); bad programs each give one clear finding and exit 1; the CLI,
`harness record` and the pytest plugin take a program."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.cassettes.source import CassetteSource
from harness.cli import main
from harness.exec.loop import ExecLoop
from harness.outcome import cell_verdicts
from harness.results.build import sort_findings
from harness.runner import REFERENCE_LOOP, CellRun, cells, load_loop, run_cell
from harness.scenario.loader import load_scenario
from harness.scenario.model import Provider
from harness.sources import ScriptedSource, Source
from tests.conftest import ROOT, SCENARIOS

PYTHON = shlex.quote(sys.executable)
ONE = str(SCENARIOS / "one_tool_then_answer.yaml")
PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai", "gemini")
PENDING_RUN = "tests.faulty_loops.tools:pending_run_after_limit"  # L11
ONE_TOO_MANY = "tests.faulty_loops.limit:one_round_too_many"  # L3


def program(loop: str = REFERENCE_LOOP) -> str:
    return f"{PYTHON} -m tests.exec.loop_program {loop}"


# (scenario, source, provider, stream, loop)
SAME_CELLS = [
    *(
        ("one_tool_then_answer", source, provider, stream, REFERENCE_LOOP)
        for source in ("scripted", "cassette")
        for provider in PROVIDERS
        for stream in (False, True)
    ),
    *(("answer_after_failing_tool", "scripted", p, False, REFERENCE_LOOP) for p in PROVIDERS),
    *(("limit_reached_parallel_pending", "scripted", p, True, REFERENCE_LOOP) for p in PROVIDERS),
    ("two_user_messages_fresh_budget", "cassette", "anthropic", False, REFERENCE_LOOP),
    ("limit_reached_pending_write", "scripted", "openai", False, PENDING_RUN),
    ("limit_reached_pending_write", "cassette", "gemini", True, ONE_TOO_MANY),
]


@pytest.fixture(scope="module")
def scripted() -> Iterator[ScriptedSource]:
    source = ScriptedSource([load_scenario(p) for p in sorted(SCENARIOS.glob("*.yaml"))], {})
    yield source
    source.close()


@pytest.fixture(scope="module")
def exec_loops() -> Iterator[dict[str, ExecLoop]]:
    loops: dict[str, ExecLoop] = {}
    yield loops
    for loop in loops.values():
        loop.close()


def judged(run: CellRun, source: Source) -> dict[str, Any]:
    """Everything a verdict is made of: findings, rule verdicts, the tool log, the answers."""
    cell = run.cell
    found = sort_findings(
        run, source.findings(cell.scenario, cell.provider, cell.stream), strict=True
    )
    return {
        "findings": [(f.rule, f.call, f.query, f.path, f.message) for f in found.findings],
        "verdicts": cell_verdicts(run, found.findings),
        "tools": [
            (r.name, dict(r.arguments), r.result, r.is_error, r.after_call) for r in run.tool_runs
        ],
        "answers": [(q.answer, q.error) for q in run.queries],
        "chat": run.chat,
        "calls": len(run.exchanges),
        "error": run.error,
    }


@pytest.mark.parametrize(("scenario_id", "source_name", "provider", "stream", "loop"), SAME_CELLS)
def test_in_process_and_through_a_program_the_verdicts_are_the_same(
    scenario_id: str,
    source_name: str,
    provider: Provider,
    stream: bool,
    loop: str,
    scripted: ScriptedSource,
    exec_loops: dict[str, ExecLoop],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)  # the program imports tests.*
    scenario = load_scenario(SCENARIOS / f"{scenario_id}.yaml")
    cell = cells([scenario], [provider], stream)[0]
    exec_loop = exec_loops.setdefault(loop, ExecLoop(command=program(loop), timeout=120))
    seen = []
    for name, under_test in (("in", load_loop(loop)), ("exec", exec_loop)):
        source: Source = scripted
        if source_name == "cassette":
            source = CassetteSource([(scenario, provider, stream)], ROOT / "cassettes")
        try:
            run = run_cell(cell, source, under_test, run_id=f"same-{name}-{provider}")
            seen.append(judged(run, source))
        finally:
            if source is not scripted:
                source.close()
    in_process, through_program = seen
    assert through_program == in_process
    if loop != REFERENCE_LOOP:  # a faulty loop: the same findings, and there are some
        assert in_process["findings"]


# ---- bad programs: one clear finding, exit 1 --------------------------------------------------


def run_cli(tmp_path: Path, *args: str) -> int:
    out = tmp_path / "reports"
    return main(
        [
            "run",
            "--source",
            "scripted",
            "--provider",
            "anthropic",
            "--stream",
            "off",
            ONE,
            *args,
            "--results",
            str(out / "results.json"),
            "--html",
            str(out / "index.html"),
            "--junit",
            str(out / "junit.xml"),
        ]
    )


def findings_of(tmp_path: Path) -> list[dict[str, Any]]:
    results = json.loads((tmp_path / "reports" / "results.json").read_text())
    [cell] = results["cells"]
    found: list[dict[str, Any]] = cell["findings"]
    return found


ANSWER_WITHOUT_CALLING = '{"answer": "Hi!", "chat": [{"role": "user", "text": "x"}], "error": null}'

BAD_PROGRAMS = [
    # (program, extra options, rule, words in the finding)
    # 2 s: long enough for a loaded machine to run the echo before the timeout
    ("echo waiting >&2; sleep 60 & sleep 60", ("--exec-timeout", "2"), "exec.timeout",
     ["2 s", "process group was killed", "waiting"]),
    ("echo boom >&2; exit 3", (), "exec.failed", ["exited with status 3", "boom"]),
    ("echo 'Here is your answer'", (), "exec.bad_output", ["not one JSON document", "Here is"]),
    ("printf '\\377\\376'", (), "exec.bad_output", ["not UTF-8"]),
    ("echo '{\"answer\": 42, \"chat\": [], \"error\": null}'", (), "exec.bad_output",
     ["does not match answer.json", "$.answer"]),
    ("echo '{\"answer\": \"a\", \"chat\": [{\"role\": \"bot\"}], \"error\": null}'", (),
     "exec.bad_output", ["$.chat[0]"]),
    (f"cat > /dev/null; echo '{ANSWER_WITHOUT_CALLING}'", (), "harness.no_model_call",
     ["no model call reached the harness endpoint"]),
]  # fmt: skip


@pytest.mark.parametrize(("command", "options", "rule", "words"), BAD_PROGRAMS)
def test_a_bad_program_is_one_clear_finding_and_exit_1(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    options: tuple[str, ...],
    rule: str,
    words: list[str],
) -> None:
    assert run_cli(tmp_path, "--exec", command, *options) == 1
    printed = capsys.readouterr()
    assert "Traceback" not in printed.out + printed.err
    [finding] = findings_of(tmp_path)
    assert finding["rule"] == rule
    for word in words:
        assert word in finding["message"], finding["message"]
    assert rule in printed.err and "\n" not in finding["message"]


def test_exec_and_loop_are_one_or_the_other(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as both:
        run_cli(tmp_path, "--exec", "true", "--loop", "examples.minimal_loop:run")
    assert both.value.code == 2
    assert run_cli(tmp_path, "--exec-timeout", "3") == 2
    assert "--exec-timeout applies to --exec" in capsys.readouterr().err
    assert run_cli(tmp_path, "--exec", "true", "--exec-timeout", "0") == 2


def test_record_takes_a_program(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    folder = tmp_path / "cassettes"
    args = ["record", "--source", "scripted", "--provider", "openai", "--stream", "off", ONE]
    assert main([*args, "--cassettes", str(folder), "--exec", program()]) == 0, capsys.readouterr()
    assert (folder / "openai" / "one_tool_then_answer.yaml").is_file()
