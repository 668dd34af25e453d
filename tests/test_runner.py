"""The runner end to end: every scenario × provider × stream through the real SDKs and the
emulator, the loop contract serving a loop that is not ours, the live path pointed at the
emulator through the SDKs' base-URL variables, and the errors a user can make."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.emulator.server import Emulator
from harness.errors import HarnessError, ProviderError
from harness.loop.contract import LoopCall, LoopResult
from harness.outcome import cell_findings, query_outcome
from harness.runner import CellRun, cells, load_loop, run_cell, run_cells
from harness.sources import LiveSource, ScriptedSource
from tests.conftest import SCENARIOS, library


def _assert_matches_scenario(run: CellRun) -> None:
    assert run.error is None, run.error
    assert list(run.rejections) == [], [e.error for e in run.rejections]
    for query in run.queries:
        expect = run.cell.scenario.messages[query.index].expect
        got = query_outcome(query)
        assert (got.ending, got.rounds, got.executed) == (
            expect.ending,
            expect.rounds,
            expect.tools,
        ), run.cell.id
        for name in expect.not_run:
            assert name not in got.executed, f"{run.cell.id}: {name} ran"
    assert cell_findings(run) == []


def test_library_covers_every_provider_and_stream(reference_library_runs: list[CellRun]) -> None:
    seen = {(r.cell.provider, r.cell.stream) for r in reference_library_runs}
    assert seen == {(p, s) for p in ("anthropic", "openai", "gemini") for s in (False, True)}
    assert len({r.cell.scenario.id for r in reference_library_runs}) >= 14


def test_reference_loop_matches_every_scenario(reference_library_runs: list[CellRun]) -> None:
    for run in reference_library_runs:
        _assert_matches_scenario(run)


def test_not_executed_tools_never_ran(reference_library_runs: list[CellRun]) -> None:
    limited = [
        r for r in reference_library_runs if any(m.expect.not_run for m in r.cell.scenario.messages)
    ]
    assert limited
    for run in limited:
        ran = {t.name for t in run.tool_runs}
        for message in run.cell.scenario.messages:
            assert not ran & set(message.expect.not_run), run.cell.id


def test_a_minimal_loop_that_is_not_ours_is_served_by_the_contract() -> None:
    scenarios = library()
    source = ScriptedSource(scenarios, {})
    try:
        runs = list(
            run_cells(
                cells(scenarios, stream=False), source, load_loop("examples.minimal_loop:run")
            )
        )
    finally:
        source.close()
    assert runs
    for run in runs:
        if run.cell.scenario.id == "gemini_request_over_size_limit":
            # The minimal loop deliberately ignores `request_size_limit`; the checks say so.
            assert {f.rule for f in cell_findings(run)} == {"L9"}
            continue
        _assert_matches_scenario(run)


def test_live_source_uses_the_sdks_base_url_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """The code path of a user with keys: keys and base URLs from the environment only."""
    scenario = next(s for s in library() if s.id == "limit_reached_pending_write")
    with Emulator([scenario]) as emu:
        urls = emu.base_urls(scenario.id, "live")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", urls["anthropic"])
        monkeypatch.setenv("OPENAI_BASE_URL", urls["openai"])
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", urls["gemini"])
        for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
            monkeypatch.setenv(var, "real-key-from-env")
        source = LiveSource(scenario.providers, {})
        loop = load_loop("harness.loop.reference:reference_loop")
        calls = 0
        try:
            for number, cell in enumerate(cells([scenario])):
                run = run_cell(cell, source, loop, run_id=str(number))
                # captured at the live source's own endpoint, forwarded to the "real" API
                assert run.exchanges and all(
                    e.url.startswith(source.endpoint.root) for e in run.exchanges
                )
                _assert_matches_scenario(run)
                calls += len(run.exchanges)
        finally:
            source.close()
        forwarded = emu.exchanges("live")
        assert len(forwarded) == calls and all(e.status == 200 for e in forwarded)
        # the loop held a dummy key; the forwarder sent the environment's key upstream
        sent = [r for r in (emu.capture("live").records() or [])]  # type: ignore[union-attr]
        assert all("real-key-from-env" in str(r.request_headers) for r in sent)


def test_live_source_without_a_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ProviderError, match="GOOGLE_API_KEY or GEMINI_API_KEY"):
        LiveSource(["gemini"], {})


def test_cli_live_without_a_key_is_one_line_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    code = main(
        [
            "run",
            "--source",
            "live",
            "--provider",
            "anthropic",
            str(SCENARIOS / "answer_without_tools.yaml"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "ANTHROPIC_API_KEY" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("no_colon", "module:function"),
        ("not_a_module_xyz:run", "cannot import"),
        ("examples.minimal_loop:absent", "no callable"),
    ],
)
def test_bad_loop_spec_is_a_clear_error(spec: str, problem: str) -> None:
    with pytest.raises(HarnessError, match=problem):
        load_loop(spec)


def raising_loop(call: LoopCall) -> LoopResult:
    raise RuntimeError("my loop broke")


def test_a_loop_that_raises_is_reported_not_crashed() -> None:
    scenario = next(s for s in library() if s.id == "answer_without_tools")
    source = ScriptedSource([scenario], {})
    try:
        run = run_cell(cells([scenario])[0], source, raising_loop, run_id="raise")
    finally:
        source.close()
    assert run.error is not None and "RuntimeError: my loop broke" in run.error
    assert any(f.rule == "harness.loop_error" for f in cell_findings(run))


def test_cli_scripted_run_prints_progress_and_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # the reports go under ./reports: never the repository's
    code = main(
        [
            "run",
            "--source",
            "scripted",
            "--provider",
            "openai",
            "--stream",
            "off",
            str(SCENARIOS / "limit_reached_pending_write.yaml"),
            str(SCENARIOS / "one_tool_then_answer.yaml"),
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "[1/2]" in captured.err and "[2/2]" in captured.err
    assert "limit_reached_pending_write" in captured.out and "step_limit" in captured.out
    assert "2 cell(s): 2 conform" in captured.out


def test_cli_run_with_a_faulty_loop_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    monkeypatch.chdir(tmp_path)  # the reports go under ./reports: never the repository's
    code = main(
        [
            "run",
            "--source",
            "scripted",
            "--provider",
            "anthropic",
            "--stream",
            "off",
            "--loop",
            "test_runner:raising_loop",
            str(SCENARIOS / "answer_without_tools.yaml"),
        ]
    )
    assert code == 1
    assert "my loop broke" in capsys.readouterr().err
