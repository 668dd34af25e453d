"""The results builder on real runs (the reference loop through the real SDKs to the emulator):
what each cell keeps — outcome, findings with evidence, verdicts, the normalised transcript
beside the raw exchanges, usage, drift, timings."""

from __future__ import annotations

from harness.findings import Finding
from harness.results import HARNESS_GROUPS, CellResult, Results, build_results, run_meta
from harness.results.build import Judged, usage_totals, with_group_verdicts
from harness.results.files import results_json, validate_results_json
from tests.results.runs import HOSTILE_RESULT, broken_results, real_results, run_library


def _cell(results: Results, cell_id: str) -> CellResult:
    cell = results.cell(cell_id)
    assert cell is not None, [c.id for c in results.cells]
    return cell


def test_every_cell_of_the_run_is_kept_with_its_identity() -> None:
    results = real_results()
    assert len(results.cells) == 18
    assert {(c.provider, c.stream) for c in results.cells} == {
        (p, s) for p in ("anthropic", "openai", "gemini") for s in (False, True)
    }
    cell = _cell(results, "one_tool_then_answer[openai-stream]")
    assert (cell.scenario.id, cell.scenario.title) == (
        "one_tool_then_answer",
        "One tool, then an answer",
    )
    assert (cell.provider, cell.source, cell.stream, cell.verdict) == (
        "openai",
        "scripted",
        True,
        "pass",
    )
    assert cell.model and cell.scenario.path.endswith("one_tool_then_answer.yaml")


def test_run_metadata_names_versions_source_loop_times_and_argv() -> None:
    run = real_results().run
    assert run.source == "scripted" and run.loop == "reference" and run.argv == ("test",)
    assert set(run.sdk_versions) >= {"anthropic", "openai", "google-genai"}
    assert all(run.sdk_versions[n] for n in ("anthropic", "openai", "google-genai"))
    assert run.started <= run.finished and run.elapsed >= 0
    assert run.harness_version and run.python


def test_query_outcome_and_expectation_per_user_message() -> None:
    cell = _cell(real_results(), "limit_reached_pending_write[anthropic]")
    (query,) = cell.queries
    assert (query.ending, query.rounds, query.executed) == (
        "step_limit",
        1,
        ("get_personal_record",),
    )
    assert query.expected is not None and query.expected.not_run == ("save_goal",)
    assert query.calls == (1, 2, 3) and "step limit" in query.answer


def test_transcript_keeps_tool_requests_results_ids_and_the_closing_call() -> None:
    cell = _cell(real_results(), "limit_reached_pending_write[gemini]")
    first, second, closing = cell.calls
    assert [c.number for c in cell.calls] == [1, 2, 3]
    (asked,) = first.response.calls
    (sent_back,) = second.request.messages[-1].results
    assert asked.name == "get_personal_record" and sent_back.call_id == asked.id
    assert first.request.declared_tools == ("get_personal_record", "save_goal")
    assert first.request.system.startswith("You are Gymnasia")
    assert closing.request.tool_choice == "none"
    assert len(closing.request.system) > len(first.request.system)
    assert closing.response.text and not closing.response.calls
    assert all(c.response.usage for c in cell.calls)


def test_raw_exchanges_sit_beside_the_neutral_calls() -> None:
    cell = _cell(real_results(), "one_tool_then_answer[anthropic-stream]")
    raw = {e.seq: e for e in cell.exchanges}
    for call in cell.calls:
        exchange = raw[call.exchange]
        assert exchange.status == 200 and exchange.method == "POST"
        assert exchange.request_body["messages"]  # the body exactly as sent
        assert exchange.events and exchange.response_body is None  # streamed: SSE events kept
    assert cell.tool_runs[0].after_exchange == cell.calls[0].exchange
    assert HOSTILE_RESULT in str(
        _cell(real_results(), "hostile_markup[gemini]").exchanges[1].request_body
    )


def test_usage_totals_and_timings() -> None:
    cell = _cell(real_results(), "one_tool_then_answer[openai]")
    assert cell.usage.input_tokens > 0 and cell.usage.output_tokens > 0
    assert cell.usage.by_key["input_tokens"] == cell.usage.input_tokens
    assert cell.timing.elapsed >= cell.timing.http > 0
    totals = usage_totals(
        [{"promptTokenCount": 10, "candidatesTokenCount": 3, "thoughtsTokenCount": 2}] * 2
    )
    assert (totals.input_tokens, totals.output_tokens) == (20, 10)


def test_verdicts_cover_the_rule_catalogue_and_the_harness_groups() -> None:
    results = real_results()
    ids = [r.id for r in results.rules]
    assert ids[-len(HARNESS_GROUPS) :] == [g.id for g in HARNESS_GROUPS] and "L12" in ids
    cell = _cell(results, "limit_reached_pending_write[openai]")
    assert cell.verdicts["L12"] == "pass" and cell.verdicts["replay"] == "n/a"
    assert _cell(results, "one_tool_then_answer[openai]").verdicts["L12"] == "n/a"
    assert {cell.verdicts[g.id] for g in HARNESS_GROUPS if g.id != "replay"} == {"pass"}


def test_findings_keep_rule_ids_and_evidence_and_fail_their_rules() -> None:
    cell = broken_results().cells[0]
    assert cell.verdict == "fail"
    at_calls = [f for f in cell.findings if f.call is not None]
    assert at_calls and all(f.rule.startswith("L") for f in at_calls)
    assert {f.rule for f in at_calls} <= {r for r, v in cell.verdicts.items() if v == "fail"}
    assert cell.verdicts["expect"] == "fail"  # expect.ending, expect.not_run, …
    assert any(f.expected and f.actual for f in cell.findings)


def test_a_finding_without_a_verdict_fails_its_rule_and_groups_fold() -> None:
    findings = [
        Finding(rule="L7", message="x", call=2, path="messages[3]", ids=("toolu_1",)),
        Finding(rule="expect.rounds", message="y", expected="1", actual="2"),
    ]
    verdicts = with_group_verdicts(findings, {"L1": "pass"}, source="cassette")
    assert verdicts == {
        "L1": "pass",
        "L7": "fail",
        "expect": "fail",
        "api": "pass",
        "replay": "pass",
        "harness": "pass",
        "exec": "pass",
    }


def test_drift_reports_are_kept_whether_or_not_they_fail() -> None:
    (run,) = run_library("answer_without_tools", provider="anthropic", stream=False)
    drift = Finding(rule="replay.drift", message="recorded a, sent b", call=1, path="system")
    meta = real_results().run
    warned = build_results([Judged(run=run, findings=[], drift=[drift])], meta=meta)
    strict = build_results([Judged(run=run, findings=[drift], drift=[drift])], meta=meta)
    assert warned.cells[0].verdict == "pass" and warned.cells[0].drift[0].path == "system"
    assert strict.cells[0].verdict == "fail" and len(strict.cells[0].drift) == 1
    assert strict.cells[0].verdicts["replay"] == "fail"


def test_results_match_the_shipped_schema() -> None:
    for results in (real_results(), broken_results()):
        validate_results_json(results_json(results))


def test_run_meta_times_are_iso_utc() -> None:
    meta = run_meta(source="live", loop="x:y", started=0.0, finished=90.5, argv=[])
    assert (meta.started, meta.finished, meta.elapsed) == (
        "1970-01-01T00:00:00+00:00",
        "1970-01-01T00:01:30+00:00",
        90.5,
    )
