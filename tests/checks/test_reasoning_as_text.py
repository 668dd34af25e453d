"""Reasoning resent as plain text in a later request is L10 (found by `harness audit` on the
real recordings: pydantic-ai sends a reasoning summary back as `<think>…` assistant text)."""

from __future__ import annotations

from typing import Any

from harness.checks import input_from_exchanges, run_checks
from harness.findings import Finding
from tests.checks.support import explain
from tests.trace.exchanges import exchange

SUMMARY = "**Weighing the options** The user asks for the squat record; look it up first."
RS = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": SUMMARY}],
    "encrypted_content": "gAAAAB" + "x" * 40,
}
ANSWER = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "120 kg.", "annotations": []}],
}


def _call(inputs: list[Any], output: list[Any]) -> Any:
    request = {
        "model": "gpt-5",
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "input": inputs,
    }
    return exchange("openai-responses", request, {"status": "completed", "output": output})


def _l10(inputs_of_second_call: list[Any]) -> list[Finding]:
    first = _call([{"role": "user", "content": "A"}], [RS, ANSWER])
    second = _call(inputs_of_second_call, [ANSWER])
    found = run_checks(input_from_exchanges([first, second]), wire_only=True)
    return [f for f in found if f.rule == "L10"]


def test_a_reasoning_summary_resent_as_assistant_text_breaks_l10() -> None:
    """pydantic-ai's fallback (realwire): the summary goes back as `<think>…` text."""
    thought = {"role": "assistant", "content": f"<think>\n{SUMMARY}\n</think>"}
    found = _l10([{"role": "user", "content": "A"}, thought, {"role": "user", "content": "B"}])
    assert [(f.call, f.path) for f in found] == [(2, "input[1]")], explain(found)
    assert "reasoning of call 1 was sent back as model text" in found[0].message


def test_the_answer_text_alone_is_not_reasoning() -> None:
    answer = {"role": "assistant", "content": "120 kg."}
    assert not _l10([{"role": "user", "content": "A"}, answer, {"role": "user", "content": "B"}])
