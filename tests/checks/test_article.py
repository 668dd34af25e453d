"""The article's three failures at the step limit, each caught with the rules the loop-rules
table names (mission/loop-rules.md, "What the article's failures were")."""

from __future__ import annotations

import pytest

from harness.loop import reference
from harness.loop.closing import NOT_EXECUTED_RESULT
from harness.scenario.model import Provider
from tests.checks.support import PROVIDERS, Runs, drop_calls, edit_query, explain, findings

SCENARIO = "limit_reached_pending_read"  # max_rounds 2; call 3 still asks, call 4 closes
INTERIM = "Now let me fetch September…"  # call 3's half sentence
ORDER = f"{NOT_EXECUTED_RESULT} Answer with what you already know and ask whether to continue."


@pytest.mark.parametrize("provider", PROVIDERS)
def test_raising_at_the_limit(runs: Runs, provider: Provider) -> None:
    """Google: the last reply still asks for tools and the loop surfaces an error."""
    run = drop_calls(runs.get(SCENARIO, provider), 4)
    run = edit_query(run, answer="", error="ValueError: the response is still waiting for tools")
    found = findings(run)
    assert {"L11", "L12", "L15"} <= {f.rule for f in found}, explain(found)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("answer", [INTERIM, "", "Error: the provider returned no content."])
def test_handing_back_the_last_turn(runs: Runs, provider: Provider, answer: str) -> None:
    """OpenAI/Anthropic: the loop leaves silently with the last turn — the interim half
    sentence, nothing, or a generic no-content message."""
    run = edit_query(drop_calls(runs.get(SCENARIO, provider), 4), answer=answer)
    found = findings(run)
    assert {"L11", "L12", "L14", "L15"} <= {f.rule for f in found}, explain(found)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_closing_order_in_a_tool_result(
    runs: Runs, provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first fix: the "answer and ask to continue" order inside the tool result, the
    system instructions left as usual — run for real through the SDK and the emulator."""
    monkeypatch.setattr(reference, "NOT_EXECUTED_RESULT", ORDER)
    monkeypatch.setattr(reference, "closing_system", lambda system: system)
    run = runs.run(SCENARIO, provider, False, reference.reference_loop)
    found = findings(run)
    l13 = [f for f in found if f.rule == "L13"]
    assert {"carries an order", "not in the closing"} <= {
        m for f in l13 for m in ("carries an order", "not in the closing") if m in f.message
    }, explain(found)
    assert not run.rejections  # the API accepts it: only the checks can catch it
