"""`harness audit --scenario`: the library's cassettes judged with their scenarios are clean;
a copy broken in the test is caught by a rule only the scenario makes possible; what was judged
and what not is printed; bad input is one line and exit 2."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.cli import main
from tests.conftest import SCENARIOS

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = ROOT / "cassettes"
PENDING_WRITE = "limit_reached_pending_write"


def audit(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["audit", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def scenario_file(scenario_id: str) -> str:
    return str(SCENARIOS / f"{scenario_id}.yaml")


@pytest.mark.parametrize("scenario", sorted(p.stem for p in SCENARIOS.glob("*.yaml")))
def test_library_cassettes_are_clean_with_their_scenario(
    capsys: pytest.CaptureFixture[str], scenario: str
) -> None:
    files = sorted(str(p) for p in CASSETTES.glob(f"*/{scenario}.*yaml"))
    code, out, err = audit(capsys, "--scenario", scenario_file(scenario), *files)
    assert (code, err) == (0, ""), out


def test_prints_what_was_judged_and_what_not(capsys: pytest.CaptureFixture[str]) -> None:
    scenario = "two_user_messages_fresh_budget"
    path = CASSETTES / "anthropic" / f"{scenario}.yaml"
    code, out, _ = audit(capsys, "--scenario", scenario_file(scenario), str(path))
    assert code == 0
    judged = next(line for line in out.splitlines() if line.strip().startswith("judged: "))
    assert {"L3", "L7", "L11", "L12", "L14", "L15", "expect.ending"} <= set(judged.split())
    assert "L1 " not in judged and "L4" not in judged
    assert "not judged: L1 L4 expect.rounds expect.tools expect.not_run: need the tool log" in out
    assert "not judged on user message 2: L7:" in out
    quiet = audit(capsys, "--quiet", "--scenario", scenario_file(scenario), str(path))[1]
    assert "judged" not in quiet


def _broken_closing(path: Path, folder: Path, text: str) -> Path:
    """A copy whose closing reply says `text` (Anthropic JSON)."""
    data: Any = yaml.safe_load(path.read_text("utf-8"))
    data = copy.deepcopy(data)
    last = data["interactions"][-1]["response"]["parsed_body"]
    last["content"] = [{"type": "text", "text": text}]
    out = folder / path.name
    out.write_text(yaml.safe_dump(data, allow_unicode=True), "utf-8")
    return out


def test_the_closing_answer_is_judged_from_the_served_text(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    original = CASSETTES / "anthropic" / f"{PENDING_WRITE}.yaml"
    broken = _broken_closing(original, tmp_path, "Done, your goal is saved.")
    code, out, _ = audit(capsys, "--scenario", scenario_file(PENDING_WRITE), str(broken))
    assert code == 1
    l14 = [line for line in out.splitlines() if ": L14" in line]
    assert l14 and all(f"{broken}:" in line for line in l14)
    assert any("does not ask whether to continue" in line for line in l14)
    # Without the scenario, the same cassette passes the wire-only checks.
    assert audit(capsys, str(broken))[0] == 0


def test_a_cassette_of_another_scenario_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    other = CASSETTES / "openai" / "one_tool_then_answer.yaml"
    code, out, err = audit(capsys, "--scenario", scenario_file(PENDING_WRITE), str(other))
    assert code == 2
    assert err.count("\n") == 1 and str(other) in err
    assert "recorded from scenario 'one_tool_then_answer'" in err
    assert "1 unreadable" in out


def test_a_foreign_cassette_whose_messages_are_not_the_scenarios_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data: Any = yaml.safe_load((CASSETTES / "openai" / "one_tool_then_answer.yaml").read_text())
    del data["harness"]  # another tool's cassette: no block saying where it came from
    path = tmp_path / "foreign.yaml"
    path.write_text(yaml.safe_dump(data), "utf-8")
    code, _, err = audit(capsys, "--scenario", scenario_file(PENDING_WRITE), str(path))
    assert code == 2 and err.count("\n") == 1
    assert f"{path}: user message 1 on the wire (from interaction 1)" in err
    assert "another scenario" in err


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("missing.yaml", "--scenario missing.yaml: no such file"),
        ("scenarios", "--scenario scenarios: a folder"),
    ],
)
def test_a_bad_scenario_option_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, given: str, says: str
) -> None:
    monkeypatch.chdir(ROOT)
    cassette = str(CASSETTES / "anthropic" / f"{PENDING_WRITE}.yaml")
    code, out, err = audit(capsys, "--scenario", given, cassette)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and says in err


def test_an_invalid_scenario_file_names_its_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("title: x\nmax_rounds: many\n")
    cassette = str(CASSETTES / "anthropic" / f"{PENDING_WRITE}.yaml")
    code, out, err = audit(capsys, "--scenario", str(bad), cassette)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and f"{bad}" in err
