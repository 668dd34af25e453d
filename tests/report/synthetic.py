"""A synthetic results file of any size, shaped like a real run (Anthropic-style raw bodies
that grow with each round, streamed variants as SSE events, findings at calls, drift), for the
500-cell report test and `benchmarks/report_500.py`. Deterministic for a given seed."""

from __future__ import annotations

import functools
import random
from typing import Any

from harness.results.build import HARNESS_GROUPS, usage_totals
from harness.results.model import (
    CallRecord,
    CellResult,
    DriftRecord,
    ExchangeRecord,
    Expected,
    FindingRecord,
    MessageRecord,
    QueryRecord,
    RequestRecord,
    ResponseRecord,
    Results,
    RuleInfo,
    RunMeta,
    ScenarioRef,
    SseEventRecord,
    Timing,
    ToolCallRecord,
    ToolResultRecord,
    ToolRunRecord,
    Verdict,
)

PROVIDERS = ("anthropic", "openai", "gemini")
RULES = tuple(RuleInfo(id=f"L{n}", title=f"Loop rule {n}") for n in range(1, 16))
TOOLS = ("get_personal_record", "get_week_plan", "save_goal")
SYSTEM = "You are Gymnasia's training assistant. Answer briefly; use the tools for facts."
CLOSING = "You have reached the step limit for this answer, so no more tools can be run now."
PARAMS = {
    "type": "object",
    "properties": {"exercise": {"type": "string", "description": "The exercise name."}},
    "required": ["exercise"],
}


@functools.cache  # results are immutable: tests share them
def synthetic_results(cells: int = 500, seed: int = 0) -> Results:
    rng = random.Random(seed)
    out: list[CellResult] = []
    index = 0
    while len(out) < cells:
        scenario = ScenarioRef(
            id=f"scenario_{index:03d}",
            title=f"Synthetic situation {index}: {rng.choice(['chain', 'limit', 'parallel'])}",
            path=f"scenarios/scenario_{index:03d}.yaml",
            rules=("L1", "L3", "L12"),
        )
        rounds = rng.randint(0, 3)
        limited = rng.random() < 0.3
        for provider in PROVIDERS:
            for stream in (False, True):
                if len(out) < cells:
                    out.append(_cell(rng, scenario, provider, stream, rounds, limited))
        index += 1
    meta = RunMeta(
        harness_version="0.1.0",
        sdk_versions={"anthropic": "2.14.0", "openai": "3.57.0", "google-genai": "3.6.1"},
        python="3.11.7",
        source="cassette",
        loop="reference",
        started="2026-01-01T00:00:00+00:00",
        finished="2026-01-01T00:01:00+00:00",
        elapsed=60.0,
        argv=("harness", "run"),
    )
    return Results(run=meta, rules=(*RULES, *HARNESS_GROUPS), cells=tuple(out))


def _cell(
    rng: random.Random,
    scenario: ScenarioRef,
    provider: str,
    stream: bool,
    rounds: int,
    limited: bool,
) -> CellResult:
    cell_id = f"{scenario.id}[{provider}{'-stream' if stream else ''}]"
    message = f"How is my {rng.choice(['squat', 'bench press', 'deadlift'])} going this month?"
    calls, exchanges, runs = _calls(rng, message, stream, rounds, limited)
    findings = _findings(rng, calls)
    verdicts: dict[str, Verdict] = {r.id: rng.choice(("pass", "pass", "n/a")) for r in RULES}
    verdicts.update({g.id: "pass" for g in HARNESS_GROUPS})
    for f in findings:
        verdicts[f.rule] = "fail"
    drift = (
        (DriftRecord(call=1, path="messages[0].content", message="recorded 'a', sent 'b'"),)
        if rng.random() < 0.05
        else ()
    )
    return CellResult(
        id=cell_id,
        scenario=scenario,
        provider=provider,
        model=f"{provider}-model-1",
        source="cassette",
        stream=stream,
        verdict="fail" if findings else "pass",
        error=None,
        queries=(
            QueryRecord(
                index=0,
                message=message,
                answer=calls[-1].response.text,
                error=None,
                ending="step_limit" if limited else "answer",
                rounds=len(runs),
                executed=tuple(r.name for r in runs),
                calls=tuple(c.number for c in calls),
                expected=Expected(
                    ending="step_limit" if limited else "answer",
                    rounds=len(runs),
                    tools=tuple(r.name for r in runs),
                ),
            ),
        ),
        tool_runs=tuple(runs),
        findings=tuple(findings),
        verdicts=verdicts,
        calls=tuple(calls),
        exchanges=tuple(exchanges),
        usage=usage_totals(c.response.usage for c in calls),
        drift=drift,
        timing=Timing(elapsed=0.05 * len(calls), http=0.01 * len(calls), tools=0.002),
    )


def _calls(
    rng: random.Random, message: str, stream: bool, rounds: int, limited: bool
) -> tuple[list[CallRecord], list[ExchangeRecord], list[ToolRunRecord]]:
    wire: list[dict[str, Any]] = [{"role": "user", "content": message}]
    neutral = [_msg("user", message, path="messages[0]")]
    calls: list[CallRecord] = []
    exchanges: list[ExchangeRecord] = []
    runs: list[ToolRunRecord] = []
    total = rounds + 1
    for number in range(1, total + 1):
        closing = limited and number == total
        asks = number < total
        tool = TOOLS[number % len(TOOLS)]
        call_id = f"toolu_{rng.getrandbits(64):016x}"
        text = f"Checking your {tool}." if asks else _answer(rng, closing)
        body = _request_body(wire, stream, closing)
        response = ResponseRecord(
            status=200,
            text=text,
            calls=(ToolCallRecord(id=call_id, name=tool, arguments={"exercise": "squat"}, path=""),)
            if asks
            else (),
            opaque=(),
            stop_reason="tool_use" if asks else "end_turn",
            usage={"input_tokens": 300 + 120 * number, "output_tokens": 40 + number},
            error=None,
            error_type=None,
            id=f"msg_{rng.getrandbits(64):016x}",
            streamed=stream,
        )
        calls.append(
            CallRecord(
                number=number,
                query=0,
                exchange=number,
                url="https://api.anthropic.com/v1/messages",
                request=RequestRecord(
                    api="anthropic",
                    model="anthropic-model-1",
                    stream=stream,
                    declared_tools=TOOLS,
                    tool_choice="none" if closing else "auto",
                    tool_choice_name=None,
                    system=SYSTEM + (" " + CLOSING if closing else ""),
                    messages=tuple(neutral),
                    store=None,
                    previous_response_id=None,
                    parallel_tool_calls=None,
                    size_bytes=len(str(body)),
                ),
                response=response,
            )
        )
        exchanges.append(_exchange(number, body, response, stream))
        if asks:
            result = f'{{"exercise": "squat", "weight_kg": {rng.randint(60, 200)}}}'
            runs.append(
                ToolRunRecord(
                    seq=len(runs) + 1,
                    name=tool,
                    arguments={"exercise": "squat"},
                    result=result,
                    is_error=False,
                    after_exchange=number,
                    elapsed=0.002,
                )
            )
            wire += [
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": text},
                        {"type": "tool_use", "id": call_id, "name": tool, "input": {}},
                    ],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result}],
                },
            ]
            at = len(neutral)
            neutral += [
                MessageRecord(
                    role="model",
                    text=text,
                    calls=response.calls,
                    results=(),
                    opaque=(),
                    path=f"messages[{at}]",
                ),
                MessageRecord(
                    role="tool",
                    text="",
                    calls=(),
                    results=(
                        ToolResultRecord(
                            call_id=call_id,
                            name=None,
                            content=result,
                            is_error=False,
                            path=f"messages[{at + 1}].content[0]",
                        ),
                    ),
                    opaque=(),
                    path=f"messages[{at + 1}]",
                ),
            ]
    return calls, exchanges, runs


def _msg(role: Any, text: str, path: str) -> MessageRecord:
    return MessageRecord(role=role, text=text, calls=(), results=(), opaque=(), path=path)


def _answer(rng: random.Random, closing: bool) -> str:
    base = f"Your best squat is {rng.randint(60, 200)} kg, up 5 kg this month."
    return base + (" I reached the step limit; should I continue?" if closing else "")


def _request_body(wire: list[dict[str, Any]], stream: bool, closing: bool) -> dict[str, Any]:
    return {
        "model": "anthropic-model-1",
        "max_tokens": 1024,
        "stream": stream,
        "system": SYSTEM + (" " + CLOSING if closing else ""),
        "tools": [
            {"name": t, "description": f"The user's {t}.", "input_schema": PARAMS} for t in TOOLS
        ],
        "tool_choice": {"type": "none" if closing else "auto"},
        "messages": list(wire),
    }


def _exchange(seq: int, body: Any, response: ResponseRecord, stream: bool) -> ExchangeRecord:
    reply = {
        "id": response.id,
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": response.text}]
        + [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
            for c in response.calls
        ],
        "stop_reason": response.stop_reason,
        "usage": dict(response.usage),
    }
    events = None
    if stream:
        words = response.text.split()
        events = (
            SseEventRecord(event="message_start", data={"type": "message_start", "message": reply}),
            *(
                SseEventRecord(
                    event="content_block_delta",
                    data={
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": w + " "},
                    },
                )
                for w in words
            ),
            SseEventRecord(event="message_stop", data={"type": "message_stop"}),
        )
    return ExchangeRecord(
        seq=seq,
        method="POST",
        url="https://api.anthropic.com/v1/messages",
        status=200,
        request_headers={"content-type": "application/json", "x-api-key": "<scrubbed>"},
        request_body=body,
        response_headers={"content-type": "text/event-stream" if stream else "application/json"},
        response_body=None if stream else reply,
        events=events,
        error=None,
        elapsed=0.01,
    )


def _findings(rng: random.Random, calls: list[CallRecord]) -> list[FindingRecord]:
    if rng.random() > 0.12:
        return []
    call = calls[-1]
    return [
        FindingRecord(
            rule=rng.choice(("L5", "L12", "L13")),
            message="the closing call still declared tools the model may call",
            call=call.number,
            path="tool_choice",
            ids=tuple(c.id for c in call.response.calls if c.id),
            expected='{"type": "none"}',
            actual='{"type": "auto"}',
        )
    ]
