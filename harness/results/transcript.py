"""The normalised transcript of a cell: each captured exchange kept raw, and each model call
as its neutral request and response (`harness.trace`), numbered from 1 in the cell and tied to
the user message it served."""

from __future__ import annotations

from collections.abc import Sequence

from harness.capture import Exchange
from harness.results.model import (
    CallRecord,
    ExchangeRecord,
    MessageRecord,
    OpaqueRecord,
    ProblemRecord,
    RequestRecord,
    ResponseRecord,
    SseEventRecord,
    ToolCallRecord,
    ToolResultRecord,
)
from harness.runner import QueryRun
from harness.trace.model import (
    Opaque,
    ParseProblem,
    WireMessage,
    WireRequest,
    WireResponse,
    WireToolCall,
    WireToolResult,
)
from harness.trace.parse import api_of, parse_exchange


def exchange_record(exchange: Exchange) -> ExchangeRecord:
    events = exchange.events
    return ExchangeRecord(
        seq=exchange.seq,
        method=exchange.method,
        url=exchange.url,
        status=exchange.status,
        request_headers=dict(exchange.request_headers),
        request_body=exchange.request_body,
        response_headers=dict(exchange.response_headers),
        response_body=exchange.response_body,
        events=None
        if events is None
        else tuple(SseEventRecord(event=e.event, data=e.data) for e in events),
        error=exchange.error,
        elapsed=round(exchange.elapsed, 6),
    )


def call_records(queries: Sequence[QueryRun]) -> tuple[CallRecord, ...]:
    """Every model call of the cell in order; other requests stay in the raw exchanges only."""
    out: list[CallRecord] = []
    for query in queries:
        for exchange in query.exchanges:
            if api_of(exchange.url) is None:
                continue
            call = parse_exchange(len(out) + 1, exchange)
            out.append(
                CallRecord(
                    number=call.number,
                    query=query.index,
                    exchange=exchange.seq,
                    url=call.url,
                    request=request_record(call.request),
                    response=response_record(call.response),
                    problems=tuple(_problem(p) for p in call.problems),
                )
            )
    return tuple(out)


def request_record(request: WireRequest) -> RequestRecord:
    return RequestRecord(
        api=request.api,
        model=request.model,
        stream=request.stream,
        declared_tools=request.declared_tools,
        tool_choice=request.tool_choice,
        tool_choice_name=request.tool_choice_name,
        system=request.system,
        messages=tuple(_message(m) for m in request.messages),
        store=request.store,
        previous_response_id=request.previous_response_id,
        parallel_tool_calls=request.parallel_tool_calls,
        size_bytes=request.size_bytes,
    )


def response_record(response: WireResponse) -> ResponseRecord:
    return ResponseRecord(
        status=response.status,
        text=response.text,
        calls=tuple(_tool_call(c) for c in response.calls),
        opaque=tuple(_opaque(o) for o in response.opaque),
        stop_reason=response.stop_reason,
        usage=dict(response.usage),
        error=response.error,
        error_type=response.error_type,
        id=response.id,
        streamed=response.streamed,
    )


def _message(message: WireMessage) -> MessageRecord:
    return MessageRecord(
        role=message.role,
        text=message.text,
        calls=tuple(_tool_call(c) for c in message.calls),
        results=tuple(_tool_result(r) for r in message.results),
        opaque=tuple(_opaque(o) for o in message.opaque),
        path=message.path,
    )


def _tool_call(call: WireToolCall) -> ToolCallRecord:
    return ToolCallRecord(
        id=call.id, name=call.name, arguments=call.arguments, path=call.path, item_id=call.item_id
    )


def _tool_result(result: WireToolResult) -> ToolResultRecord:
    return ToolResultRecord(
        call_id=result.call_id,
        name=result.name,
        content=result.content,
        is_error=result.is_error,
        path=result.path,
    )


def _opaque(item: Opaque) -> OpaqueRecord:
    return OpaqueRecord(
        kind=item.kind,
        id=item.id,
        text=item.text,
        token_chars=len(item.token or ""),
        path=item.path,
    )


def _problem(problem: ParseProblem) -> ProblemRecord:
    return ProblemRecord(message=problem.message, path=problem.path, side=problem.side)
