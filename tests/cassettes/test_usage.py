"""Token usage from each provider's usage fields (JSON and streams, real shapes), the price
estimate, and the budget that stops a refresh before it passes its limit."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from harness.cassettes.budget import Budget, guessed_usage
from harness.cassettes.read import read_cassette
from harness.cassettes.usage import PRICES, Price, Usage, price_for, usage_of
from tests.cassettes.conftest import scenarios
from tests.conftest import REALWIRE_BATCHES, realwire_files

CASES: list[tuple[str, list[Any], Usage]] = [
    (
        "anthropic",
        [{"usage": {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 7}}],
        Usage(input_tokens=15, output_tokens=7),
    ),
    (
        "anthropic",  # stream: message_start then cumulative message_delta
        [
            {
                "type": "message_start",
                "message": {"usage": {"input_tokens": 40, "output_tokens": 1}},
            },
            {"type": "message_delta", "usage": {"output_tokens": 30}},
        ],
        Usage(input_tokens=40, output_tokens=30),
    ),
    (
        "openai",
        [
            {
                "type": "response.completed",
                "response": {"usage": {"input_tokens": 9, "output_tokens": 4}},
            }
        ],
        Usage(input_tokens=9, output_tokens=4),
    ),
    (
        "openai",
        [{"usage": {"prompt_tokens": 3, "completion_tokens": 2}}],
        Usage(input_tokens=3, output_tokens=2),
    ),
    (
        "gemini",
        [
            {"usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 1}},
            {
                "usageMetadata": {
                    "promptTokenCount": 5,
                    "candidatesTokenCount": 6,
                    "thoughtsTokenCount": 10,
                }
            },
        ],
        Usage(input_tokens=5, output_tokens=16),
    ),
    ("gemini", ["[DONE]", None, {"candidates": []}], Usage()),
]


@pytest.mark.parametrize(("provider", "docs", "expected"), CASES)
def test_usage_from_responses(provider: str, docs: list[Any], expected: Usage) -> None:
    assert usage_of(provider, docs) == expected


@pytest.mark.skipif(
    not realwire_files(), reason=f"no realwire folder in {[str(b) for b in REALWIRE_BATCHES]}"
)
@pytest.mark.parametrize(
    "provider,folder", [("anthropic", "anthropic"), ("openai", "openai"), ("gemini", "google")]
)
def test_real_responses_report_usage(provider: str, folder: str) -> None:
    from harness.capture import parse_sse

    found = []
    for path in realwire_files(folder):
        for exchange in read_cassette(path):
            if exchange.status != 200:
                continue
            docs = (
                [exchange.response_json]
                if exchange.response_json is not None
                else [e.data for e in parse_sse(exchange.response_text)]
            )
            if "json" in (exchange.header("content-type") or "") and isinstance(
                exchange.response_json, list
            ):
                docs = exchange.response_json  # Gemini's streamed JSON array
            found.append(usage_of(provider, docs))
    # (one pydantic-ai recording has its usage zeroed; every other reports both counts)
    assert sum(1 for u in found if u.input_tokens > 0 and u.output_tokens > 0) >= len(found) - 1


def test_prices_match_dated_model_names_and_bound_unknown_ones() -> None:
    assert price_for("anthropic", "claude-haiku-4-5-20251001") == (
        Price(input=1.0, output=5.0),
        True,
    )
    assert price_for("openai", "gpt-5-mini-2025-08-07")[0] == Price(input=0.25, output=2.0)
    price, listed = price_for("openai", "gpt-99")
    assert not listed and price == max(PRICES["openai"].values(), key=lambda p: p.input + p.output)
    assert (
        Usage(input_tokens=1_000_000, output_tokens=500_000).cost(Price(input=3, output=15)) == 10.5
    )


def test_budget_waits_for_running_cells_then_decides() -> None:
    budget = Budget(1.0)
    assert budget.reserve(0.6)
    outcome: list[bool] = []
    waiting = threading.Thread(target=lambda: outcome.append(budget.reserve(0.5)))
    waiting.start()  # 0.6 reserved + 0.5 > 1.0: it waits for the running cell
    waiting.join(timeout=0.05)
    assert outcome == []
    budget.settle("anthropic", 0.6, 0.2)  # it cost less than feared
    waiting.join(timeout=5)
    assert outcome == [True] and budget.spent == pytest.approx(0.2)
    budget.settle("anthropic", 0.5, 0.5)
    assert not budget.reserve(0.5)  # 0.7 spent, nothing running: 0.5 cannot fit


def test_estimates_prefer_history_then_averages_then_a_guess() -> None:
    [scenario] = scenarios(["one_tool_then_answer"])
    budget = Budget(None)
    previous = Usage(input_tokens=1000, output_tokens=100)
    price, _ = price_for("anthropic", "claude-sonnet-4-5")
    assert budget.estimate("anthropic", "claude-sonnet-4-5", scenario, previous) == previous.cost(
        price
    )
    guess = budget.estimate("anthropic", "claude-sonnet-4-5", scenario, None)
    assert guess == guessed_usage(scenario).cost(price) > previous.cost(price)
    assert budget.reserve(0.0)
    budget.settle("anthropic", 0.0, 0.01)
    assert budget.estimate("anthropic", "claude-sonnet-4-5", scenario, None) == 0.01
    assert Budget(None).reserve(1e9)  # no limit
