"""Faults in how a round's results pair with its requests (L5, L6, Anthropic's results-first).

The reference loop pairs results in `pair_results` (request order, by id); Anthropic and OpenAI
send them as paired. Gemini's adapter pairs again by position with the turn's function calls
(`results_to_gemini`), so a Gemini fault in the order or number of results is spelled there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from google.genai import types

from harness.chat import ToolCall, ToolMessage
from harness.loop import reference
from harness.loop.adapters import Turn
from harness.loop.adapters import anthropic as anthropic_adapter
from harness.loop.adapters import gemini as gemini_adapter
from harness.loop.contract import ToolSpec
from tests.faulty_loops.variants import per_provider, reference_with

_pair = reference.pair_results
_gemini_results = gemini_adapter.results_to_gemini
_anthropic_results = anthropic_adapter.results_to_anthropic
_run_tools = reference.run_tools


def _gemini_parts(edit: Any) -> Any:
    """`results_to_gemini` with its parts list edited by `edit(parts) -> parts`."""

    def results(turn: types.Content, results: Sequence[ToolMessage]) -> types.Content:
        content = _gemini_results(turn, results)
        return content.model_copy(update={"parts": edit(list(content.parts or []))})

    return results


# ---- results out of order (L6) ---------------------------------------------------------------


def _reversed(requests: Sequence[ToolCall], results: Sequence[ToolMessage]) -> Any:
    """Each result with its own id, but the last request answered first."""
    return tuple(reversed(_pair(requests, results)))


results_out_of_order = per_provider(
    {
        "anthropic": reference_with((reference, "pair_results", _reversed)),
        "openai": reference_with((reference, "pair_results", _reversed)),
        "gemini": reference_with(
            (gemini_adapter, "results_to_gemini", _gemini_parts(lambda p: p[::-1]))
        ),
    }
)


# ---- ids swapped (L5) ------------------------------------------------------------------------


def _rotated_ids(turn: Turn[Any], tools: Sequence[ToolSpec]) -> tuple[ToolMessage, ...]:
    """The tools run correctly, but each output is filed under the next request's id (an
    off-by-one when zipping outputs with ids): every id answered once, with another's output."""
    results = _run_tools(turn, tools)
    ids = [r.call_id for r in results]
    return tuple(replace(r, call_id=ids[(i + 1) % len(ids)]) for i, r in enumerate(results))


ids_swapped = reference_with((reference, "run_tools", _rotated_ids))


# ---- a result missing (L6) -------------------------------------------------------------------


def _last_dropped(requests: Sequence[ToolCall], results: Sequence[ToolMessage]) -> Any:
    return _pair(requests, results)[:-1]


result_missing = per_provider(
    {
        "anthropic": reference_with((reference, "pair_results", _last_dropped)),
        "openai": reference_with((reference, "pair_results", _last_dropped)),
        "gemini": reference_with(
            (gemini_adapter, "results_to_gemini", _gemini_parts(lambda p: p[:-1]))
        ),
    }
)


# ---- a result sent twice (L6) ----------------------------------------------------------------


def _first_twice(requests: Sequence[ToolCall], results: Sequence[ToolMessage]) -> Any:
    paired = _pair(requests, results)
    return (*paired, paired[0])


result_twice = per_provider(
    {
        "anthropic": reference_with((reference, "pair_results", _first_twice)),
        "openai": reference_with((reference, "pair_results", _first_twice)),
        "gemini": reference_with(
            (gemini_adapter, "results_to_gemini", _gemini_parts(lambda p: [*p, p[0]]))
        ),
    }
)


# ---- Anthropic: text before the results (anthropic.results_first) ----------------------------


def _text_first(results: Any) -> list[Mapping[str, Any]]:
    """A friendly line before the results in the same user message (E4: the message after
    tool_use must begin with the tool_result blocks)."""
    return [{"type": "text", "text": "Here are the tool results."}, *_anthropic_results(results)]


anthropic_text_before_results = reference_with(
    (anthropic_adapter, "results_to_anthropic", _text_first)
)
