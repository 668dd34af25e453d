"""Every interaction of every real recorded cassette parses without a problem, and each file
reads as what it is known to show (`../shared/realwire/SOURCES.md` and
`../shared/realwire2/SOURCES.md`)."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from harness.capture import SseEvent
from harness.cassettes.read import read_cassette
from harness.trace.gemini import signature_bytes
from harness.trace.model import Trace, WireCall
from harness.trace.parse import exchange_from_recorded, parse_exchange, parse_trace
from tests.conftest import REALWIRE_BATCHES, realwire_files

FILES = realwire_files()
API_OF_FOLDER = {
    "anthropic": {"anthropic"},
    "openai": {"openai-responses", "openai-chat"},
    "google": {"gemini"},
}
needs_realwire = pytest.mark.skipif(
    not FILES, reason=f"no realwire cassettes under {[str(b) for b in REALWIRE_BATCHES]}"
)


@cache
def trace_of(path: Path) -> Trace:
    return parse_trace([exchange_from_recorded(x) for x in read_cassette(path)])


def call_ids(call: WireCall) -> list[str | None]:
    return [c.id for c in call.response.calls]


def result_ids(call: WireCall) -> list[str | None]:
    return [r.call_id for m in call.request.messages for r in m.results]


def last_results(call: WireCall) -> list[str | None]:
    return [r.call_id for r in call.request.messages[-1].results]


# ---- what each file shows --------------------------------------------------------------


def anthropic_stream_parallel(t: Trace) -> None:
    first, second = t.calls
    assert first.response.streamed and first.response.stop_reason == "tool_use"
    assert [c.arguments for c in first.response.calls] == [{}, {}]  # `partial_json: ""`
    assert last_results(second) == call_ids(first)


def anthropic_thinking_chain(t: Trace) -> None:
    first, second = t.calls
    [thinking] = first.response.opaque
    assert thinking.kind == "thinking" and thinking.token and thinking.text
    assert second.request.messages[1].opaque[0].token == thinking.token
    assert first.response.usage["output_tokens_details.thinking_tokens"] == 53


def anthropic_mirascope_parallel(t: Trace) -> None:
    first, second = t.calls
    assert first.request.system == "Use parallel tool calling."
    assert [c.arguments for c in first.response.calls] == [
        {"password": "mellon"},
        {"password": "radiance"},
    ]
    assert first.response.text == "I'll retrieve the secrets for both passwords you provided."
    assert last_results(second) == call_ids(first)


def anthropic_error_400(t: Trace) -> None:
    [only] = t.calls
    assert only.response.error_type == "invalid_request_error"
    assert "effort level 'xhigh'" in (only.response.error or "")


def anthropic_parallel_x4(t: Trace) -> None:
    first, second = t.calls
    assert len(first.response.calls) == 4
    assert len(second.request.messages[-1].results) == 4
    assert last_results(second) == call_ids(first)
    assert second.request.messages[-1].results_first


def anthropic_thinking_then_tool(t: Trace) -> None:
    first, second = t.calls
    assert [o.kind for o in first.response.opaque] == ["thinking"]
    [sent], [received] = second.request.messages[1].opaque, first.response.opaque
    assert (sent.kind, sent.token, sent.text, sent.raw) == (
        received.kind,
        received.token,
        received.text,
        received.raw,
    )


def tool_choice(expected: str) -> Callable[[Trace], None]:
    def check(t: Trace) -> None:
        assert {c.request.tool_choice for c in t.calls} == {expected}

    return check


def no_call_ids(t: Trace) -> None:
    """This recording's Gemini gave its calls no id (the results are paired by position)."""
    assert all(c.id is None for call in t.calls for c in call.response.calls)


def gemini3_json_array_signature(t: Trace) -> None:
    no_call_ids(t)
    first, second = t.calls
    assert first.response.streamed and first.request.stream
    [call] = first.response.calls
    assert (call.id, call.name, call.arguments) == (None, "multiply", {"y": 3, "x": 5})
    assert call.signature and first.response.raw["parts"][-1] == {"text": ""}
    assert [(r.name, r.content) for r in second.request.messages[-1].results] == [
        ("multiply", "15")
    ]
    assert second.response.text == "5 times 3 is 15."
    assert second.response.usage["promptTokenCount"] == 121  # the last chunk's value wins


def gemini25_thoughts(t: Trace) -> None:
    no_call_ids(t)
    first = t.calls[0]
    assert [o.kind for o in first.response.opaque] == ["thought", "thought_signature"]
    assert first.response.calls[0].signature == first.response.opaque[1].token
    assert t.calls[-1].response.text == "How about Charles and Sammy?"


def gemini_sse_parallel(t: Trace) -> None:
    no_call_ids(t)
    first, second = t.calls
    assert [bool(c.signature) for c in first.response.calls] == [True, False]
    assert [r.name for r in second.request.messages[-1].results] == ["secret_retrieval_tool"] * 2
    assert first.request.system == "Use parallel tool calling."
    assert not first.request.automatic_function_calling


def gemini_mode_any(t: Trace) -> None:
    no_call_ids(t)
    assert {(c.request.tool_choice, c.request.tool_choice_name) for c in t.calls} == {
        ("required", None)
    }
    assert len(t.calls[0].response.calls) == 3
    assert t.calls[-1].response.calls[0].name == "final_result"


def gemini_auto(t: Trace) -> None:
    no_call_ids(t)
    tool_choice("auto")(t)
    assert t.calls[1].request.messages[-1].results[0].content == "Sunny, 22C in Paris"


def gemini3_sse_signature(t: Trace) -> None:
    no_call_ids(t)
    first, second = t.calls
    assert first.response.calls[0].signature
    sent, received = second.request.messages[1].calls[0], first.response.calls[0]
    assert sent.signature != received.signature  # sent back in URL-safe base64 …
    assert signature_bytes(sent.signature) == signature_bytes(received.signature)  # same bytes
    assert second.response.text == "The capital of Mexico is Mexico City."


def chat_three_rounds(t: Trace) -> None:
    assert [len(c.response.calls) for c in t.calls] == [1, 1, 0]
    assert t.calls[-1].response.text == "YES"
    assert result_ids(t.calls[-1]) == [call_ids(t.calls[0])[0], call_ids(t.calls[1])[0]]


def responses_interleaved(t: Trace) -> None:
    for call in t.calls:
        assert call.request.store is False
        assert call.response.opaque[0].kind == "reasoning" and call.response.opaque[0].token
    assert len(t.calls[-1].response.calls) == 5


def responses_store_false(t: Trace) -> None:
    first, second = t.calls[:2]
    assert (first.request.store, first.request.include) == (
        False,
        ("reasoning.encrypted_content",),
    )
    [reasoning] = first.response.opaque
    assert reasoning.kind == "reasoning" and reasoning.id and reasoning.token
    assert first.response.usage["output_tokens_details.reasoning_tokens"] > 0
    [sent] = second.request.messages[1].opaque
    assert (sent.id, sent.token) == (reasoning.id, reasoning.token)


def responses_stream_store_false(t: Trace) -> None:
    first, second = t.calls
    assert first.response.streamed and first.request.store is False
    [call] = first.response.calls
    assert (call.name, call.arguments) == ("multiply", {"a": 1231, "b": 2331})
    assert call.item_id and call.item_id.startswith("fc_") and call.id == result_ids(second)[0]
    assert second.response.text == "1231 × 2331 = **2,869,461**"


def responses_mirascope_parallel(t: Trace) -> None:
    assert len(t.calls) == 6  # the same two rounds recorded three times
    for first, second in zip(t.calls[::2], t.calls[1::2], strict=True):
        assert first.request.system == "Use parallel tool calling."
        assert len(first.response.calls) == 2
        assert result_ids(second) == call_ids(first)


def chat_stream(t: Trace) -> None:
    first, second = t.calls
    [call] = first.response.calls
    assert (call.name, call.arguments) == ("get_capital", {"country": "UK"})
    assert first.response.usage["prompt_tokens"] == 53  # from the include_usage chunk
    assert second.response.text == "The capital of the UK is London."


def responses_error_400(t: Trace) -> None:
    statuses = [c.response.status for c in t.calls]
    assert statuses == [200, 400, 200]
    assert t.calls[1].response.error == (
        "Item 'rs_68c42de022c881948db7ed1cc2529f2e0202c9ad459e0d23' of type 'reasoning' was "
        "provided without its required following item."
    )
    assert t.calls[0].response.opaque[0].text  # a reasoning summary


def responses_parallel(t: Trace) -> None:
    first, second = t.calls
    assert len(first.response.calls) == 2
    assert result_ids(second) == call_ids(first)
    assert [m.role for m in second.request.messages] == ["user", "model", "tool"]


def responses_auto_reasoning(t: Trace) -> None:
    tool_choice("auto")(t)
    first = t.calls[0]
    assert [o.kind for o in first.response.opaque] == ["reasoning"]
    assert t.calls[1].request.messages[1].opaque[0].token == first.response.opaque[0].token


# ---- the second batch (realwire2/SOURCES.md) ---------------------------------------------


def anthropic_consecutive_users(t: Trace) -> None:
    [only] = t.calls
    roles = [m.role for m in only.request.messages]
    # the tool result, then the client's extra user text: two user messages in a row
    assert roles == ["user", "model", "tool", "user", "model", "user"]
    assert only.request.messages[2].results[0].call_id == only.request.messages[1].calls[0].id
    assert only.response.status == 200 and only.response.stop_reason == "end_turn"


def anthropic_server_tool_400(t: Trace) -> None:
    first, second = t.calls
    assert first.response.calls == ()  # the server ran its own web search
    assert first.response.text.startswith("Let me search")
    assert second.response.status == 400 and second.response.error_type == "invalid_request_error"
    [call] = second.request.messages[1].calls
    assert call.id == "srvtoolu_01ALRFK59SkK8D9e1Xj2exhq"
    assert second.request.messages[2].results[0].call_id == call.id
    assert "without `tool_result` blocks immediately after" in (second.response.error or "")


def anthropic_redacted_resent(t: Trace) -> None:
    first, second = t.calls
    [given] = first.response.opaque
    assert given.kind == "redacted_thinking" and given.token and given.text is None
    [sent] = second.request.messages[1].opaque
    assert (sent.kind, sent.token, sent.raw) == (given.kind, given.token, given.raw)
    assert [o.kind for o in second.response.opaque] == ["redacted_thinking"]


def anthropic_stream_redacted(t: Trace) -> None:
    [only] = t.calls
    assert only.response.streamed
    assert [o.kind for o in only.response.opaque] == ["redacted_thinking"] * 2
    assert all(o.token for o in only.response.opaque) and only.response.text


def gemini_ids_three_rounds(t: Trace) -> None:
    first, second, third = t.calls
    assert call_ids(first) == ["g98os1Jf"] and call_ids(second) == ["grBScFvZ"]
    assert all(c.signature for c in (*first.response.calls, *second.response.calls))
    assert result_ids(second) == ["g98os1Jf"]
    assert result_ids(third) == ["g98os1Jf", "grBScFvZ"]
    # a second user content (text) right after the function response, accepted
    assert [m.role for m in second.request.messages] == ["user", "model", "tool", "user"]
    assert third.response.text and not third.response.calls


def gemini_sse_ids(t: Trace) -> None:
    first, second = t.calls
    assert first.response.streamed and call_ids(first) == ["96c1su3s"]
    sent, received = second.request.messages[1].calls[0], first.response.calls[0]
    assert sent.id == received.id == result_ids(second)[0]
    assert signature_bytes(sent.signature) == signature_bytes(received.signature)
    assert second.response.usage["promptTokenCount"] == 128  # the last chunk's value wins


def responses_chained_parallel(t: Trace) -> None:
    first, second = t.calls
    assert len(first.response.calls) == 2 and first.request.store is None
    assert second.request.previous_response_id == first.response.id
    # only the two outputs are sent: the calls live in the stored response
    assert [m.role for m in second.request.messages] == ["tool"]
    assert result_ids(second) == call_ids(first)


def responses_chained_four_rounds(t: Trace) -> None:
    assert [c.request.store for c in t.calls] == [None, True, True, True]
    for before, after in zip(t.calls, t.calls[1:], strict=False):
        assert after.request.previous_response_id == before.response.id
    assert [len(c.response.calls) for c in t.calls] == [0, 1, 1, 0]
    assert result_ids(t.calls[2]) == call_ids(t.calls[1])
    assert result_ids(t.calls[3]) == call_ids(t.calls[2])


def responses_stream_reasoning_resent(t: Trace) -> None:
    first, second = t.calls
    assert first.response.streamed and first.request.store is None
    [reasoning] = first.response.opaque
    # each item event re-encrypts the reasoning; the client sent back the `.done` one
    [sent] = second.request.messages[1].opaque
    assert sent.id == reasoning.id and sent.token in reasoning.alternates
    assert first.response.text and first.response.calls[0].name == "get_capital"
    assert second.request.previous_response_id is None


FACTS: dict[str, Callable[[Trace], None]] = {
    "pydantic-ai__consecutive_user_messages_after_tool_result__claude-sonnet-4-5": (
        anthropic_consecutive_users
    ),
    "pydantic-ai__error_400_tool_use_without_tool_result__claude-3-5-sonnet": (
        anthropic_server_tool_400
    ),
    "pydantic-ai__redacted_thinking_resent__claude-sonnet-4-5": anthropic_redacted_resent,
    "pydantic-ai__stream_redacted_thinking__claude-sonnet-4-5": anthropic_stream_redacted,
    "pydantic-ai__generate_content_function_call_ids_3rounds__gemini-3.6-flash": (
        gemini_ids_three_rounds
    ),
    "pydantic-ai__stream_sse_function_call_with_id_thought_signature__gemini-3-flash-preview": (
        gemini_sse_ids
    ),
    "openinference__responses_previous_response_id_parallel_outputs__gpt-4o-mini": (
        responses_chained_parallel
    ),
    "pydantic-ai__responses_previous_response_id_tool_loop_4rounds__gpt-4.1": (
        responses_chained_four_rounds
    ),
    "pydantic-ai__responses_stream_encrypted_reasoning_resent__gpt-5.5": (
        responses_stream_reasoning_resent
    ),
    "llm-anthropic__stream_parallel_tool_use_gzip__claude-haiku-4-5": anthropic_stream_parallel,
    "llm-anthropic__stream_thinking_signature_tool_chain__claude-haiku-4-5": (
        anthropic_thinking_chain
    ),
    "mirascope__stream_parallel_tool_use_plaintext__claude-sonnet-4-0": (
        anthropic_mirascope_parallel
    ),
    "pydantic-ai__error_400_invalid_request__claude-opus-4-6": anthropic_error_400,
    "pydantic-ai__parallel_tool_use_x4__claude-haiku-4-5": anthropic_parallel_x4,
    "pydantic-ai__thinking_then_tool_use__claude-sonnet-4-0": anthropic_thinking_then_tool,
    "pydantic-ai__tool_choice_any__claude-sonnet-4-5": tool_choice("required"),
    "pydantic-ai__tool_choice_auto__claude-sonnet-4-5": tool_choice("auto"),
    "pydantic-ai__tool_choice_none__claude-sonnet-4-5": tool_choice("none"),
    "llm-gemini__stream_json_array_gzip_thought_signature__gemini-3-flash-preview": (
        gemini3_json_array_signature
    ),
    "llm-gemini__stream_json_array_gzip_thoughts__gemini-2.5-flash": gemini25_thoughts,
    "mirascope__stream_sse_parallel_calls__gemini-2.5-flash": gemini_sse_parallel,
    "pydantic-ai__generate_content_parallel_calls_mode_any__gemini-3-flash-preview": (
        gemini_mode_any
    ),
    "pydantic-ai__generate_content_tool_config_auto__gemini-2.5-flash": gemini_auto,
    "pydantic-ai__generate_content_tool_config_none__gemini-2.5-flash": tool_choice("none"),
    "pydantic-ai__stream_sse_thought_signature__gemini-3-pro-preview": gemini3_sse_signature,
    "llm__chat_completions_tool_chain_3rounds__gpt-4o-mini": chat_three_rounds,
    "llm__responses_interleaved_reasoning_tool_calls__gpt-5.5": responses_interleaved,
    "llm__responses_store_false_encrypted_reasoning_3rounds__gpt-5.5": responses_store_false,
    "llm__responses_stream_store_false__gpt-5.5": responses_stream_store_false,
    "mirascope__responses_stream_parallel_function_calls__gpt-4o": (responses_mirascope_parallel),
    "pydantic-ai__chat_completions_stream_tool_calls__gpt-4o-mini": chat_stream,
    "pydantic-ai__responses_error_400_reasoning_item_without_following_item__gpt-5": (
        responses_error_400
    ),
    "pydantic-ai__responses_parallel_function_calls__gpt-4o": responses_parallel,
    "pydantic-ai__responses_tool_choice_auto_reasoning__gpt-5-mini": responses_auto_reasoning,
}


@needs_realwire
@pytest.mark.parametrize("path", FILES or [None], ids=lambda p: p.stem if p else "absent")
def test_every_interaction_parses(path: Path) -> None:
    trace = trace_of(path)
    assert len(trace.calls) == len(read_cassette(path))
    assert trace.problems == ()
    for call in trace.calls:
        assert call.problems == (), f"call {call.number}: {call.problems}"
        assert call.request.api in API_OF_FOLDER[path.parent.name]
        assert call.request.messages, f"call {call.number}: no messages"
        if call.response.status and call.response.status >= 400:
            assert call.response.error, f"call {call.number}: no error message"
        else:
            assert call.response.error is None and call.response.id
        if call.request.api == "gemini":
            # Older models give no functionCall ids (providers.md §4 correction); Gemini 3
            # issues them (realwire2): either way every call of a reply has one, or none.
            assert len({c.id is None for c in call.response.calls}) <= 1


@needs_realwire
@pytest.mark.parametrize("path", FILES or [None], ids=lambda p: p.stem if p else "absent")
def test_file_reads_as_what_it_shows(path: Path) -> None:
    assert path.stem in FACTS, f"{path.name}: add what it shows to FACTS"
    FACTS[path.stem](trace_of(path))


@needs_realwire
def test_every_file_is_covered() -> None:
    assert sorted(FACTS) == sorted(p.stem for p in FILES)


JUNK: list[Any] = [None, 0, -1, 1.5, True, "", "x", [], {}, [None], {"type": 3}, {"index": -1}]


def mangled(value: Any, rng: random.Random) -> Any:
    """`value` with random subtrees swapped for junk or dropped."""
    if rng.random() < 0.1:
        return copy.deepcopy(rng.choice(JUNK))
    if isinstance(value, dict):
        return {k: mangled(v, rng) for k, v in value.items() if rng.random() > 0.05}
    if isinstance(value, list):
        return [mangled(v, rng) for v in value if rng.random() > 0.05]
    return value


@needs_realwire
def test_mangled_interactions_never_raise() -> None:
    """Parsers turn bad data into problems, never exceptions: real exchanges with random
    parts replaced by junk (wrong types, negative indexes, missing keys) all parse."""
    rng = random.Random(20261130)
    exchanges = [exchange_from_recorded(x) for path in FILES for x in read_cassette(path)]
    for _ in range(4):
        for exchange in exchanges:
            events = exchange.events and tuple(
                SseEvent(event=e.event, data=mangled(e.data, rng)) for e in exchange.events
            )
            bad = replace(
                exchange,
                request_body=mangled(exchange.request_body, rng),
                response_body=mangled(exchange.response_body, rng),
                events=events,
                status=rng.choice([exchange.status, 200, 400, None]),
            )
            parse_exchange(1, bad)
