"""The checks on bare exchanges (what `harness audit` runs on any cassette): queries inferred
from the wire, never an exception on bad data, verdicts and the catalogue."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.capture import Exchange
from harness.checks import (
    RULES,
    Rule,
    catalogue,
    input_from_exchanges,
    input_from_run,
    rule_verdicts,
    run_checks,
)
from harness.checks.input import CheckInput
from harness.findings import Finding
from tests.checks.support import Runs
from tests.conftest import REALWIRE_BATCHES, realwire_files
from tests.trace.exchanges import exchange

RS = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB" + "x" * 40}
ANSWER = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "About 122 kg.", "annotations": []}],
}


def responses_call(inputs: list[Any], output: list[Any], seq: int) -> Exchange:
    request = {
        "model": "gpt-5",
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "input": inputs,
    }
    response = {"id": f"resp_{seq}", "status": "completed", "output": output, "usage": {}}
    return exchange("openai-responses", request, response)


def test_queries_are_inferred_from_the_requests() -> None:
    first = responses_call([{"role": "user", "content": "A"}], [RS, ANSWER], 1)
    second = responses_call(
        [{"role": "user", "content": "A"}, RS, ANSWER, {"role": "user", "content": "B"}],
        [ANSWER],
        2,
    )
    again = responses_call([{"role": "user", "content": "B"}], [ANSWER], 3)  # same text anew
    data = input_from_exchanges([first, second, again])
    assert [q.message for q in data.queries] == ["A", "B", "B"]
    assert [[c.number for c in q.calls] for q in data.queries] == [[1], [2], [3]]


def test_reasoning_carried_into_the_next_query_breaks_l10() -> None:
    first = responses_call([{"role": "user", "content": "A"}], [RS, ANSWER], 1)
    second = responses_call(
        [{"role": "user", "content": "A"}, RS, ANSWER, {"role": "user", "content": "B"}],
        [ANSWER],
        2,
    )
    found = run_checks(input_from_exchanges([first, second]), wire_only=True)
    assert [(f.rule, f.call, f.path, f.ids) for f in found] == [("L10", 2, "input[1]", ("rs_1",))]


def test_a_retry_of_a_failed_call_stays_in_its_query() -> None:
    ask = responses_call([{"role": "user", "content": "A"}], [ANSWER], 1)
    failed = exchange(
        "openai-responses",
        ask.request_body,
        {"error": {"message": "overloaded", "type": "server_error"}},
        status=500,
    )
    data = input_from_exchanges([failed, ask])
    assert len(data.queries) == 1
    assert not run_checks(data, wire_only=True)  # the retry is no second call after an answer


GARBAGE: list[tuple[str, Any, Any]] = [
    ("anthropic", "not json at all", None),
    ("anthropic", {"messages": "nope", "tools": 3}, {"content": 7}),
    ("openai-responses", {"input": [{"type": "alien"}], "tool_choice": []}, ["x"]),
    ("openai-chat", {"messages": [{"role": "tool"}]}, {"choices": "no"}),
    ("gemini", {"contents": [{"role": "model", "parts": [{"functionCall": 1}]}]}, [1, 2]),
    ("gemini", [], {"candidates": [{"content": {"parts": "x"}}, {}]}),
]


@pytest.mark.parametrize(("api", "request_body", "response_body"), GARBAGE)
def test_checks_never_raise_on_bad_data(api: str, request_body: Any, response_body: Any) -> None:
    data = input_from_exchanges([exchange(api, request_body, response_body)] * 2)
    found = run_checks(data)
    assert "wire.parse" in {f.rule for f in found}
    assert not [f for f in found if "check itself failed" in f.message]
    rule_verdicts(data, found)


def test_a_check_that_raises_becomes_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(data: CheckInput) -> Iterator[Finding]:
        raise KeyError("surprise")

    rule = Rule(
        id="test.broken",
        title="Broken",
        description="Raises.",
        apis=frozenset({"anthropic"}),
        needs="wire",
        check=broken,
        applies=lambda data: True,
    )
    monkeypatch.setitem(RULES, rule.id, rule)
    data = input_from_exchanges([exchange("anthropic", {"messages": []}, {"content": []})])
    found = [f for f in run_checks(data) if f.rule == "test.broken"]
    assert len(found) == 1 and "check itself failed" in found[0].message
    assert rule_verdicts(data, found)["test.broken"] == "fail"


def test_wire_only_input_leaves_run_and_scenario_rules_not_applicable(runs: Runs) -> None:
    run = runs.get("limit_reached_pending_write", "gemini")
    full = rule_verdicts(input_from_run(run))
    bare = rule_verdicts(input_from_exchanges(run.exchanges))
    needs = {r.id: r.needs for r in RULES.values()}
    for rule_id, verdict in bare.items():
        if needs[rule_id] != "wire":
            assert verdict == "n/a", rule_id
        else:
            assert verdict == full[rule_id], rule_id
    assert full["L11"] == full["L14"] == "pass"
    assert full["anthropic.tools_declared"] == full["openai.store_false"] == "n/a"


def test_limit_rules_are_not_applicable_without_a_limit(runs: Runs) -> None:
    verdicts = rule_verdicts(input_from_run(runs.get("one_tool_then_answer", "openai")))
    assert {verdicts[r] for r in ("L11", "L12", "L13", "L14")} == {"n/a"}
    assert verdicts["L10"] == verdicts["openai.store_false"] == "pass"


def test_a_failing_provider_rule_fails_its_loop_rule() -> None:
    request = {"model": "gpt-5", "store": True, "input": [{"role": "user", "content": "A"}]}
    data = input_from_exchanges([exchange("openai-responses", request, {"output": []})])
    verdicts = rule_verdicts(data)
    assert verdicts["openai.store_false"] == verdicts["L10"] == "fail"


def test_the_same_defect_on_every_call_is_one_finding() -> None:
    request = {"model": "gpt-5", "input": [{"role": "user", "content": "A"}]}
    calls = [exchange("openai-responses", request, {"output": [ANSWER]})] * 3
    found = [f for f in run_checks(input_from_exchanges(calls)) if f.rule == "openai.store_false"]
    assert [(f.call, f.message) for f in found] == [
        (1, "the call does not send store: false (also on calls 2, 3)")
    ]


def test_catalogue_lists_every_rule_in_order() -> None:
    entries = catalogue()
    ids = [e.id for e in entries]
    assert set(ids) == set(RULES) and len(ids) == len(RULES)
    assert ids[:16] == ["wire.parse", *(f"L{n}" for n in range(1, 16))]
    for entry in entries:
        assert entry.title and entry.description.endswith((".", ")"))
        assert entry.apis and entry.needs in ("wire", "run", "scenario")
        assert entry.part_of is None or entry.part_of in RULES
    assert {e.id for e in entries if e.needs == "wire"} >= {
        "L2",
        "L5",
        "L6",
        "L8",
        "L9",
        "L10",
        "L12",
        "L13",
    }


def _cassettes() -> list[Path]:
    return realwire_files()


@pytest.mark.skipif(
    not _cassettes(), reason=f"no real recordings in {[str(b) for b in REALWIRE_BATCHES]}"
)
def test_real_recordings_run_through_every_wire_check() -> None:
    from harness.cassettes.read import read_cassette
    from harness.trace.parse import exchange_from_recorded

    found: dict[str, set[str]] = {}
    for path in _cassettes():
        recorded = [exchange_from_recorded(r) for r in read_cassette(path)]
        findings = run_checks(input_from_exchanges(recorded), wire_only=True)
        assert not [f for f in findings if "check itself failed" in f.message], path.name
        found[path.name] = {f.rule for f in findings}
    # A real defect the API itself rejected (O6): reasoning saved and sent with the next query.
    reasoning = "pydantic-ai__responses_error_400_reasoning_item_without_following_item__gpt-5.yaml"
    if reasoning in found:
        assert "L10" in found[reasoning]
    # realwire2: the API accepts the stateful chains, the loops still break L10
    for chained in (
        "pydantic-ai__responses_previous_response_id_tool_loop_4rounds__gpt-4.1.yaml",
        "openinference__responses_previous_response_id_parallel_outputs__gpt-4o-mini.yaml",
    ):
        if chained in found:
            assert {"openai.no_previous_response_id", "openai.store_false"} <= found[chained]
    # the reasoning went back as one of the blobs its stream gave: resent unchanged
    restreamed = "pydantic-ai__responses_stream_encrypted_reasoning_resent__gpt-5.5.yaml"
    if restreamed in found:
        assert "openai.reasoning_resent" not in found[restreamed]
    # redacted thinking resent unchanged; Gemini 3 ids echoed by functionResponse.id
    for clean in (
        "pydantic-ai__redacted_thinking_resent__claude-sonnet-4-5.yaml",
        "pydantic-ai__generate_content_function_call_ids_3rounds__gemini-3.6-flash.yaml",
        "pydantic-ai__stream_sse_function_call_with_id_thought_signature__gemini-3-flash-preview.yaml",
    ):
        if clean in found:
            assert not found[clean], (clean, found[clean])


CALL_ITEM = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "lookup",
    "arguments": "{}",
    "status": "completed",
}


def streamed_reasoning_reply(blobs: list[str]) -> Exchange:
    """A streamed reply whose item events carry the reasoning re-encrypted, the last blob in
    `response.completed` (as realwire2 records)."""
    request = {"model": "gpt-5.5", "store": False, "include": ["reasoning.encrypted_content"]}
    request["input"] = [{"role": "user", "content": "A"}]
    item = {**RS, "encrypted_content": blobs[-1]}
    events: list[tuple[str | None, Any]] = [
        (
            "response.output_item.added",
            {"type": "response.output_item.added", "item": {**RS, "encrypted_content": blobs[0]}},
        ),
        (
            "response.output_item.done",
            {"type": "response.output_item.done", "item": {**RS, "encrypted_content": blobs[1]}},
        ),
        (
            "response.completed",
            {
                "type": "response.completed",
                "response": {"id": "resp_1", "status": "completed", "output": [item, CALL_ITEM]},
            },
        ),
    ]
    return exchange("openai-responses", request, None, events=events)


@pytest.mark.parametrize(
    ("sent", "flagged"),
    [("gAAAAB-done", False), ("gAAAAB-completed", False), ("gAAAAB-forged", True)],
)
def test_reasoning_resent_as_any_blob_its_stream_gave(sent: str, flagged: bool) -> None:
    first = streamed_reasoning_reply(["gAAAAB-added", "gAAAAB-done", "gAAAAB-completed"])
    output = {"type": "function_call_output", "call_id": "call_1", "output": "x"}
    second = responses_call(
        [{"role": "user", "content": "A"}, {**RS, "encrypted_content": sent}, CALL_ITEM, output],
        [ANSWER],
        2,
    )
    found = run_checks(input_from_exchanges([first, second]), wire_only=True)
    rules = [f.rule for f in found if f.rule == "openai.reasoning_resent"]
    assert bool(rules) is flagged, found


def anthropic_redacted_query(resent: dict[str, Any]) -> list[Exchange]:
    tool = {"name": "lookup", "input_schema": {"type": "object"}}
    block = {"type": "redacted_thinking", "data": "EvgFCkYIBxgCKkBm"}
    use = {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}
    ask = {"role": "user", "content": "A"}
    first = exchange(
        "anthropic",
        {"model": "m", "max_tokens": 10, "tools": [tool], "messages": [ask]},
        {"id": "msg_1", "content": [block, use], "stop_reason": "tool_use"},
    )
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}
    messages = [ask, {"role": "assistant", "content": [resent, use]}]
    messages.append({"role": "user", "content": [result]})
    second = exchange(
        "anthropic",
        {"model": "m", "max_tokens": 10, "tools": [tool], "messages": messages},
        {"id": "msg_2", "content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"},
    )
    return [first, second]


@pytest.mark.parametrize(
    ("data", "flagged"), [("EvgFCkYIBxgCKkBm", False), ("EvgFCkYIBxgCKkBX", True)]
)
def test_redacted_thinking_must_go_back_unchanged(data: str, flagged: bool) -> None:
    resent = {"type": "redacted_thinking", "data": data}
    found = run_checks(input_from_exchanges(anthropic_redacted_query(resent)), wire_only=True)
    rules = [f.rule for f in found if f.rule == "anthropic.thinking_unchanged"]
    assert bool(rules) is flagged, found


GEMINI_ASK = {"contents": [{"role": "user", "parts": [{"text": "My squat record?"}]}]}
GEMINI_ANSWER = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "120 kg."}]}, "finishReason": "STOP"}
    ]
}


def test_an_exchange_that_is_no_model_call_is_named_not_failed() -> None:
    """A token count the SDK made before the call: skipped and named (README), not a defect."""
    count = replace(
        exchange("gemini", GEMINI_ASK, {"totalTokens": 5}),
        url=exchange("gemini").url.replace(":generateContent", ":countTokens"),
    )
    data = input_from_exchanges([count, exchange("gemini", GEMINI_ASK, GEMINI_ANSWER)])
    assert [p.message for p in data.trace.problems] == ["not a model call; skipped"]
    assert not [f for f in run_checks(data) if f.rule == "wire.parse"]
    assert rule_verdicts(data)["wire.parse"] == "pass"


def test_a_transport_error_is_no_unreadable_envelope() -> None:
    """The SDK closed a 429 before reading its body, then retried: no envelope arrived, and
    that is no parse failure of the provider's format."""
    request = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "A"}],
    }
    answer = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": "About 122 kg."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 4},
    }
    closed = exchange("anthropic", request, None, status=429, error="closed before the body")
    data = input_from_exchanges([closed, exchange("anthropic", request, answer)])
    assert data.trace.calls[0].problems  # the parser still notes what it could not read
    assert data.interrupted == {1}
    assert not [f for f in run_checks(data) if f.rule == "wire.parse"]
    assert rule_verdicts(data)["wire.parse"] == "pass"


def test_a_cell_with_a_transport_error_passes_wire_parse(runs: Runs) -> None:
    from tests.checks.support import edit_response

    run = runs.get("one_tool_then_answer", "anthropic")
    cut = edit_response(run, 1, lambda body: body.clear(), status=500, error="stream closed")
    data = input_from_run(cut)
    assert data.interrupted == {1} and data.trace.calls[0].problems
    assert not [f for f in run_checks(data) if f.rule == "wire.parse"]
