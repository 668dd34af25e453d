"""A Gemini client that drops the call ids the model gave (langchain-google-genai does) breaks
L5 once; the results it sends without ids still answer the requests by position, which is how
Gemini pairs them, so L11 and L7 do not report the same defect again. And a tool's JSON text
sent as the object `functionResponse.response` takes is the same result (L7)."""

from __future__ import annotations

import json
from typing import Any

from tests.checks.support import Body, Runs, edit_request, explain, findings

WRITE = "limit_reached_pending_write"
TWO = "two_user_messages_fresh_budget"


def _without_ids(body: Body) -> None:
    for content in body["contents"]:
        for part in content["parts"]:
            for kind in ("functionCall", "functionResponse"):
                if kind in part:
                    part[kind].pop("id", None)


def _closing_result(body: Body, text: str) -> None:
    part = body["contents"][-1]["parts"][-1]["functionResponse"]
    part["response"] = {"output": text}


def _structured(body: Body, change: dict[str, Any] | None = None) -> None:
    """Every result that is JSON text sent as the object itself (optionally changed)."""
    for content in body["contents"]:
        for part in content["parts"]:
            response = part.get("functionResponse", {}).get("response", {})
            text = response.get("output")
            if isinstance(text, str) and text.lstrip().startswith("{"):
                part["functionResponse"]["response"] = {**json.loads(text), **(change or {})}


def _calls(runs: Runs, scenario: str) -> int:
    return len(runs.get(scenario, "gemini").exchanges)


def test_dropped_ids_are_l5_alone_at_the_limit(runs: Runs) -> None:
    run = runs.get(WRITE, "gemini")
    for call in range(2, _calls(runs, WRITE) + 1):
        run = edit_request(run, call, _without_ids)
    found = findings(run)
    assert {f.rule for f in found} == {"L5"}, explain(found)


def test_dropped_ids_and_a_wrong_pending_result_is_still_l11(runs: Runs) -> None:
    run = runs.get(WRITE, "gemini")
    last = _calls(runs, WRITE)
    for call in range(2, last + 1):
        run = edit_request(run, call, _without_ids)
    run = edit_request(run, last, lambda body: _closing_result(body, "skipped"))
    found = findings(run)
    assert {f.rule for f in found} >= {"L5", "L11"}, explain(found)
    assert any("not answered as not executed" in f.message for f in found if f.rule == "L11")


def test_json_results_sent_as_objects_are_the_saved_results(runs: Runs) -> None:
    run = runs.get(TWO, "gemini")
    for call in range(2, _calls(runs, TWO) + 1):
        run = edit_request(run, call, _structured)
    found = findings(run)
    assert found == [], explain(found)


def test_a_changed_json_result_in_the_saved_context_is_still_l7(runs: Runs) -> None:
    run = runs.get(TWO, "gemini")
    first_of_second_query = next(
        i
        for i, e in enumerate(sorted(run.exchanges, key=lambda e: e.seq), 1)
        if e.seq == run.queries[1].exchanges[0].seq
    )
    run = edit_request(run, first_of_second_query, lambda b: _structured(b, {"weight_kg": 1}))
    found = findings(run)
    assert "L7" in {f.rule for f in found}, explain(found)
