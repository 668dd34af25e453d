"""Opaque tokens changed deep inside (where their first and last characters still match) are
shown where they differ (the faulty loops that change one character showed two identical
excerpts)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from harness.checks.view import token_pair
from harness.scenario.model import Provider
from tests.checks.support import Runs, edit_request, explain, findings

Body = dict[str, Any]


def _flip(token: str) -> str:
    """One character in the middle changed (still valid base64)."""
    at = len(token) // 2
    return token[:at] + ("A" if token[at] != "A" else "B") + token[at + 1 :]


def _thinking(body: Body) -> None:
    block = body["messages"][1]["content"][0]
    block["signature"] = _flip(block["signature"])


def _gemini(body: Body) -> None:
    part = next(p for p in body["contents"][1]["parts"] if "thoughtSignature" in p)
    part["thoughtSignature"] = _flip(part["thoughtSignature"])


def _reasoning(body: Body) -> None:
    item = next(i for i in body["input"] if i.get("type") == "reasoning")
    item["encrypted_content"] = _flip(item["encrypted_content"])


CHANGES: list[tuple[str, Provider, Callable[[Body], None], str]] = [
    ("anthropic_thinking_signatures", "anthropic", _thinking, "anthropic.thinking_unchanged"),
    ("one_tool_then_answer", "gemini", _gemini, "gemini.content_unchanged"),
    ("openai_reasoning_across_rounds", "openai", _reasoning, "openai.reasoning_resent"),
]


@pytest.mark.parametrize(("scenario", "provider", "change", "rule"), CHANGES)
def test_a_token_changed_inside_is_shown_where_it_differs(
    runs: Runs, scenario: str, provider: Provider, change: Callable[[Body], None], rule: str
) -> None:
    found = [
        f for f in findings(edit_request(runs.get(scenario, provider), 2, change)) if f.rule == rule
    ]
    assert len(found) == 1, explain(found)
    finding = found[0]
    assert finding.expected != finding.actual
    assert "differing from char" in finding.expected and "differing from char" in finding.actual


def test_token_pair_shows_the_first_difference() -> None:
    given, sent = "a" * 50 + "XYZ" + "b" * 50, "a" * 50 + "XQZ" + "b" * 50
    shown_given, shown_sent = token_pair(given, sent)
    assert shown_given == "…aaaaaaaaaXYZbbbbbbbb… (103 chars, differing from char 52)"
    assert shown_sent == "…aaaaaaaaaXQZbbbbbbbb… (103 chars, differing from char 52)"
    assert token_pair("same", "same") == ("same", "same")
    assert token_pair(None, "x" * 50)[0] == "absent"
