"""A live run or refresh that reaches no API (a closed port on 127.0.0.1 as the base URL) is
one line naming the provider and its base URL, and exit 2 — a harness or input problem, not
the loop's findings (exit 1). A live run that reaches its API is judged as usual."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from harness.cli import main
from harness.emulator.server import Emulator
from tests.conftest import SCENARIOS

ANSWER = str(SCENARIOS / "answer_without_tools.yaml")
ONE_CELL = ("--provider", "anthropic", "--stream", "off", ANSWER)


@contextmanager
def closed_port() -> Iterator[int]:
    """A port on 127.0.0.1 that refuses connections while the block runs: bound but not
    listening, so no other socket (an endpoint the run starts) can take it meanwhile."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def outputs(tmp_path: Path) -> list[str]:
    out = tmp_path / "reports"
    return [
        *("--results", str(out / "results.json"), "--html", str(out / "index.html")),
        *("--junit", str(out / "junit.xml")),
    ]


@pytest.fixture
def nowhere(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with closed_port() as port:
        url = f"http://127.0.0.1:{port}"
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-" + "Fake0Key1" * 6)
        yield url


KEY_VARIABLE = {"anthropic": "ANTHROPIC", "openai": "OPENAI"}


def at_the_emulator(
    monkeypatch: pytest.MonkeyPatch, emulator: Emulator, run_id: str, provider: str
) -> None:
    """`provider`'s SDK variables pointing live mode at the emulator, with a fake key."""
    url = emulator.base_urls("answer_without_tools", run_id)[provider]
    monkeypatch.setenv(f"{KEY_VARIABLE[provider]}_BASE_URL", url)
    monkeypatch.setenv(f"{KEY_VARIABLE[provider]}_API_KEY", "sk-ant-api03-" + "Fake0Key1" * 6)


def _one_line(err: str, command: str, url: str) -> None:
    line = next(line for line in err.splitlines() if line.startswith(f"harness {command}: error"))
    assert "the live API could not be reached (anthropic at " + url + ")" in line, line
    assert "ConnectError" in line and "Traceback" not in err


def test_live_run_that_reaches_no_api_exits_2(
    nowhere: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--source", "live", *ONE_CELL, *outputs(tmp_path)]) == 2
    _one_line(capsys.readouterr().err, "run", nowhere)
    assert not (tmp_path / "reports").exists()  # no report of a run that never reached the API


def test_live_refresh_that_reaches_no_api_exits_2(
    nowhere: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassettes = tmp_path / "cassettes"
    assert main(["record", "--source", "live", "--cassettes", str(cassettes), *ONE_CELL]) == 2
    _one_line(capsys.readouterr().err, "record", nowhere)
    assert not list(cassettes.rglob("*.yaml"))


def test_live_run_that_reaches_its_api_is_judged_as_usual(
    emulator: Emulator,
    run_id: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    at_the_emulator(monkeypatch, emulator, run_id, "anthropic")
    assert main(["run", "--source", "live", *ONE_CELL, *outputs(tmp_path)]) == 0
    assert "could not be reached" not in capsys.readouterr().err
    assert (tmp_path / "reports" / "results.json").is_file()


def test_one_provider_unreachable_among_others_exits_2_with_the_others_judged(
    nowhere: str,
    emulator: Emulator,
    run_id: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    at_the_emulator(monkeypatch, emulator, run_id, "openai")
    argv = ["run", "--source", "live", "--provider", "anthropic", "--provider", "openai"]
    assert main([*argv, "--stream", "off", ANSWER, *outputs(tmp_path)]) == 2
    err = capsys.readouterr().err
    _one_line(err, "run", nowhere)
    assert "openai at" not in err and "the report holds the other providers' cells" in err
    cells = (tmp_path / "reports" / "results.json").read_text()
    assert "answer_without_tools[openai]" in cells
