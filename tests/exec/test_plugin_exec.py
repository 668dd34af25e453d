"""The pytest plugin runs a program as the loop under test (`--harness-exec`, ini
`harness_exec`): a conforming program passes, a failing one fails its item with its exec.*
finding, and naming both a loop and a program is a usage error."""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Iterator

import pytest

from tests.conftest import ROOT, SCENARIOS

pytest_plugins = ["pytester"]

PROGRAM = f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'tests/exec/loop_program.py'))}"
ONLY = ("--harness-source", "scripted", "--harness-provider", "gemini", "--harness-stream", "off")


@pytest.fixture
def project(pytester: pytest.Pytester) -> Iterator[pytest.Pytester]:
    shutil.copy(SCENARIOS / "one_tool_then_answer.yaml", pytester.mkdir("scenarios"))
    yield pytester


def test_a_program_from_the_ini_passes(project: pytest.Pytester) -> None:
    project.makeini(f"[pytest]\nharness_scenarios = scenarios\nharness_exec = {PROGRAM}\n")
    result = project.runpytest(*ONLY)
    result.assert_outcomes(passed=1)


def test_a_failing_program_fails_its_item_with_its_finding(project: pytest.Pytester) -> None:
    failing = "echo no model here >&2; exit 3"
    result = project.runpytest("--harness", *ONLY, "--harness-exec", failing)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*exec.failed*exited with status 3*no model here*"])


def test_a_loop_and_a_program_are_a_usage_error(project: pytest.Pytester) -> None:
    args = ("--harness-loop", "m:f", "--harness-exec", "true")
    result = project.runpytest("--harness", *ONLY, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--harness-loop and --harness-exec both name the loop*"])
