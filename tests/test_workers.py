"""`harness run --jobs N`: cells in worker processes give the results file of the sequential run
(but for timings and the endpoint's port), from cassettes, from the emulator with a faulty loop,
and with an --exec program; a worker that dies or a run that is interrupted is one clear line."""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from harness import workers
from harness.cli import main
from tests.conftest import ROOT, SCENARIOS
from tests.same_results import comparable, outputs

SUBSET = [
    str(SCENARIOS / f"{name}.yaml")
    for name in (
        "one_tool_then_answer",
        "answer_after_failing_tool",
        "limit_reached_pending_write",
        "gemini_calls_without_ids",
    )
]
ONE_TOO_MANY = "tests.faulty_loops.limit:one_round_too_many"  # L3


def run(tmp_path: Path, name: str, *args: str) -> tuple[int, Path]:
    folder = tmp_path / name
    code = main(["run", *args, *outputs(folder)])
    return code, folder / "results.json"


def test_jobs_2_from_cassettes_writes_the_sequential_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, one = run(tmp_path, "one", "--cassettes", str(ROOT / "cassettes"), *SUBSET)
    capsys.readouterr()
    assert code == 0
    code, two = run(tmp_path, "two", "--jobs", "2", "--cassettes", str(ROOT / "cassettes"), *SUBSET)
    err = capsys.readouterr().err
    assert code == 0
    assert "2 worker processes" in err
    cells = comparable(one)["cells"]
    assert len(cells) == 20  # 3 scenarios x 3 providers x 2 variants, and a Gemini-only one
    assert comparable(two) == comparable(one)
    # every cell's progress line, numbered as they finished
    assert sorted(
        line.split("]")[0] for line in err.splitlines() if line.startswith("[")
    ) == sorted(f"[{n}/20" for n in range(1, 21))


def test_jobs_3_scripted_with_findings_matches_sequential(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("--source", "scripted", "--loop", ONE_TOO_MANY, "--stream", "off", *SUBSET[2:])
    code, one = run(tmp_path, "one", *args)
    seq_err = capsys.readouterr().err
    code_jobs, three = run(tmp_path, "three", "--jobs", "3", *args)
    jobs_err = capsys.readouterr().err
    assert code == code_jobs == 1
    assert comparable(three) == comparable(one)
    rules = {f["rule"] for c in comparable(three)["cells"] for f in c["findings"]}
    assert "L3" in rules
    # the same findings under each cell's line, whatever order the cells finished in
    assert sorted(_cell_blocks(jobs_err)) == sorted(_cell_blocks(seq_err))


def _cell_blocks(err: str) -> list[str]:
    """Each progress line (without its number and time) with the lines indented under it."""
    blocks: list[str] = []
    for line in err.splitlines():
        if line.startswith("["):
            blocks.append(line.split("] ", 1)[1].rsplit(" ", 1)[0].rstrip())
        elif line.startswith("    ") and blocks:
            blocks[-1] += "\n" + line
    return blocks


def test_jobs_2_with_an_exec_program_matches_sequential(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    program = f"{sys.executable} -m tests.exec.loop_program"
    args = ("--source", "scripted", "--exec", program, "--provider", "anthropic", SUBSET[0])
    code, one = run(tmp_path, "one", *args)
    code_jobs, two = run(tmp_path, "two", "--jobs", "2", *args)
    capsys.readouterr()
    assert code == code_jobs == 0
    assert len(comparable(two)["cells"]) == 2
    assert comparable(two) == comparable(one)


def test_jobs_must_be_at_least_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run(tmp_path, "zero", "--jobs", "0", SUBSET[0])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "harness run: error: --jobs 0: give 1 or more worker processes"
    )


DYING_LOOP = """\
import os
from harness.loop.reference import reference_loop

def run(call):
    if call.provider == "openai":
        os._exit(3)  # as a crash in native code would end the process
    return reference_loop(call)
"""


def test_a_worker_that_dies_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "dying_loop.py").write_text(DYING_LOOP)
    monkeypatch.chdir(tmp_path)
    args = ("--source", "scripted", "--loop", "dying_loop:run", "--stream", "off", SUBSET[0])
    code, results = run(tmp_path, "out", "--jobs", "2", *args)
    err = capsys.readouterr().err
    assert code == 2
    line = err.strip().splitlines()[-1]
    assert line == (
        "harness run: error: a worker process stopped (exit code 3) while running "
        "one_tool_then_answer[openai]; no report written. Run that cell alone with --jobs 1 "
        "to see why"
    )
    assert "Traceback" not in err
    assert not results.exists()


def test_a_cell_the_harness_cannot_run_in_a_worker_is_its_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = run(
        tmp_path, "out", "--jobs", "2", "--source", "scripted", "--loop", "nowhere:run", SUBSET[0]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert (
        err.strip()
        .splitlines()[-1]
        .startswith("harness run: error: --loop 'nowhere:run': cannot import 'nowhere'")
    )
    assert "Traceback" not in err


STUCK_LOOP = """\
import os, pathlib, time

def run(call):
    try:
        pathlib.Path(f"started-{os.getpid()}").touch()
        while True:
            time.sleep(0.1)
    except KeyboardInterrupt:
        pathlib.Path(f"heard-{os.getpid()}").touch()
        raise
"""


def pids(folder: Path, what: str) -> set[str]:
    return {p.name.split("-", 1)[1] for p in folder.glob(f"{what}-*")}


def test_ctrl_c_stops_the_workers_with_one_line_and_exit_130(tmp_path: Path) -> None:
    (tmp_path / "stuck_loop.py").write_text(STUCK_LOOP)
    harness = Path(sys.executable).with_name("harness")
    command = [str(harness), "run", "--jobs", "2", "--source", "scripted"]
    command += ["--loop", "stuck_loop:run", "--stream", "off", SUBSET[0], *outputs(tmp_path)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # its own session, so the interrupt reaches the run and its workers, as Ctrl-C does
    process = subprocess.Popen(
        command, cwd=tmp_path, env=env, start_new_session=True, stderr=subprocess.PIPE, text=True
    )
    try:
        for _ in range(1200):  # a worker has started a cell (at most two minutes)
            if pids(tmp_path, "started") or process.poll() is not None:
                break
            time.sleep(0.1)
        assert pids(tmp_path, "started")
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130
    assert err.strip().splitlines()[-1] == "harness run: interrupted"
    assert "Traceback" not in err
    assert not (tmp_path / "results.json").exists()
    # every worker running a cell heard the interrupt in its loop (it listens again), and a
    # worker that missed it while starting took no cell (it saw the run stopping)
    assert pids(tmp_path, "started") <= pids(tmp_path, "heard")


def _interrupted_while_starting(told: Any, done: Any, deaf: bool) -> None:
    """A worker that Ctrl-C reaches before it can catch it (as while spawn unpickles its
    arguments): it says how it started, waits until the interrupt was sent, then listens."""
    done.send(deaf and signal.getsignal(signal.SIGINT) is signal.SIG_IGN)
    told.recv()  # sent by now: ignored, it is gone; heard, it has raised
    workers._listen(deaf)
    done.send(signal.getsignal(signal.SIGINT) is signal.default_int_handler)


def test_ctrl_c_while_a_worker_starts_is_ignored_there_then_heard_again() -> None:
    """The worker half of the Ctrl-C promise: an interrupt before its code runs would print
    multiprocessing's traceback; the parent, which heard it, stops the run."""
    context = multiprocessing.get_context("spawn")
    reader, writer = context.Pipe(duplex=False)
    told, tell = context.Pipe(duplex=False)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal
    try:
        worker = workers._start_deaf(context, _interrupted_while_starting, told, writer)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the parent's
    finally:
        signal.signal(signal.SIGINT, previous)
    writer.close()
    try:
        assert reader.poll(60) and reader.recv() is True
        os.kill(worker.pid, signal.SIGINT)
        tell.send("sent")
        assert reader.poll(60) and reader.recv() is True
        worker.join(60)
        assert worker.exitcode == 0
    finally:
        if worker.is_alive():
            worker.kill()


def test_a_worker_that_finds_the_run_stopping_takes_no_cell() -> None:
    """A worker that missed the interrupt while it started (the parent heard it and set
    `stopping`) ends as soon as it listens: no source opened, no cell taken, nothing sent."""
    from multiprocessing import Pipe

    todo: queue.Queue[int | None] = queue.Queue()
    todo.put(1)
    stopping = threading.Event()
    stopping.set()
    reader, writer = Pipe(duplex=False)
    plan = workers.Plan(cells=(), source="nowhere", cassettes="", models={}, strict=False, loop={})
    workers._work(plan, todo, writer, stopping, deaf=False)
    assert todo.get_nowait() == 1 and not reader.poll(0)


def test_a_live_run_in_workers_that_reaches_no_api_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.commands.test_live_unreachable import closed_port

    with closed_port() as port:
        url = f"http://127.0.0.1:{port}"
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)  # the workers inherit the environment
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-" + "Fake0Key1" * 6)
        args = ("--source", "live", "--provider", "anthropic", "--jobs", "2", SUBSET[0])
        code, results = run(tmp_path, "out", *args)
    err = capsys.readouterr().err
    assert code == 2
    line = err.strip().splitlines()[-1]
    assert line.startswith(
        f"harness run: error: the live API could not be reached (anthropic at {url})"
    )
    assert line.endswith("; no report written") and "Traceback" not in err
    assert not results.exists()
