"""What a failing item prints: the findings grouped under their headlines (each with its rule's
title and evidence, the findings it caused indented under it), then an excerpt of the cell's
transcript as it reached the wire — the last model calls (and any call a finding names), each
with what the loop sent since the previous turn (the user message, tool results) and what came
back (tool requests with their ids, text, an error), then the final answer."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

from harness.findings import Finding
from harness.headlines import group, titled
from harness.results.model import CallRecord, MessageRecord, ResponseRecord, ToolCallRecord
from harness.runner import CellRun

LAST_CALLS = 3
TEXT_WIDTH = 160


def failure_text(run: CellRun, findings: Sequence[Finding], how: str, loop: str) -> str:
    """The findings grouped by root cause (each headline with its title, its consequences
    indented under it), then the transcript excerpt."""
    from harness.headlines import run_trail
    from harness.report.console import catalogue_titles, headline_lines
    from harness.results.build import finding_record

    records = [finding_record(f) for f in findings]
    trail = run_trail(run)
    heads = len(group(records, trail))
    head = (
        f"{run.cell.id}: {len(findings)} finding(s) under {heads} headline(s) · {how} · "
        f"loop {loop} · model {run.model}"
    )
    grouped = headline_lines(records, trail, catalogue_titles())
    return "\n".join([head, "", *grouped, "", *transcript_excerpt(run, findings)])


def failure_summary(findings: Sequence[Finding], run: CellRun | None = None) -> str:
    """One line for pytest's short summary and JUnit's failure message: the headline rules with
    their titles (every rule broken when the run is not given)."""
    from harness.headlines import Trail, run_trail
    from harness.report.console import catalogue_titles

    trail = run_trail(run) if run is not None else Trail()
    heads = group(findings, trail)
    rules = list(dict.fromkeys(h.finding.rule for h in heads))
    named = ", ".join(titled(r, catalogue_titles()) for r in rules)
    return f"{len(findings)} finding(s) under {len(heads)} headline(s): {named}"


def transcript_excerpt(run: CellRun, findings: Iterable[Finding] = ()) -> list[str]:
    from harness.results.transcript import call_records

    calls = call_records(run.queries)
    if not calls:
        return ["transcript: the loop made no model call", *_answers(run, None)]
    named = {f.call for f in findings if f.call is not None}
    shown = [c for c in calls if c.number in named or c.number > len(calls) - LAST_CALLS]
    lines = [f"transcript ({_shown_label(shown, len(calls))}):"]
    names = {c.id: c.name for call in calls for c in call.response.calls if c.id}
    previous: CallRecord | None = None
    for call in shown:
        if previous is not None and call.number != previous.number + 1:
            lines.append("  …")
        if previous is None or call.query != previous.query:
            lines.append(f"  user message {call.query + 1}")
        lines.extend(_call_lines(call, names))
        previous = call
    return lines + _answers(run, shown[-1].query)


def _shown_label(shown: Sequence[CallRecord], total: int) -> str:
    if len(shown) == total:
        return f"all {total} model call(s)"
    return f"calls {', '.join(str(c.number) for c in shown)} of {total}"


def _call_lines(call: CallRecord, names: Mapping[str, str]) -> list[str]:
    request = call.request
    choice = request.tool_choice + (
        f" {request.tool_choice_name}" if request.tool_choice_name else ""
    )
    tools = ", ".join(request.declared_tools) or "none"
    lines = [f"  call {call.number} ({request.api}): tools [{tools}] · tool choice {choice}"]
    added = _since_last_turn(request.messages)
    lines.extend(f"    → {line}" for m in added for line in _sent(m, names))
    lines.extend(f"    ← {line}" for line in _received(call.response))
    return lines


def _since_last_turn(messages: Sequence[MessageRecord]) -> list[MessageRecord]:
    """The messages after the request's last model turn: what the loop added this call."""
    tail: list[MessageRecord] = []
    for message in reversed(messages):
        if message.role == "model":
            break
        tail.append(message)
    return tail[::-1]


def _sent(message: MessageRecord, names: Mapping[str, str]) -> list[str]:
    if message.role == "user":
        return [f"user: {_short(message.text)}"]
    lines = [
        f"tool result {r.name or names.get(r.call_id or '', '?')}{_id(r.call_id)}"
        f"{' (error)' if r.is_error else ''}: {_short(r.content)}"
        for r in message.results
    ]
    if message.text:
        lines.append(f"text: {_short(message.text)}")
    return lines


def _received(response: ResponseRecord) -> list[str]:
    if response.error is not None:
        return [f"error {response.status}: {_short(response.error)}"]
    lines = [f"text: {_short(response.text)}"] if response.text else []
    lines.extend(_request_line(c) for c in response.calls)
    return lines or ["(an empty turn)"]


def _request_line(call: ToolCallRecord) -> str:
    arguments = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
    return f"tool request {call.name}{_id(call.id)} {_short(arguments)}"


def _answers(run: CellRun, query: int | None) -> list[str]:
    out: list[str] = []
    for q in run.queries:
        if query is not None and q.index != query:
            continue
        if q.error is not None:
            out.append(f"  loop error (user message {q.index + 1}): {_short(q.error)}")
        else:
            out.append(f"  final answer (user message {q.index + 1}): {_short(q.answer)}")
    if run.error is not None and not out:
        out.append(f"  loop error: {_short(run.error)}")
    return out


def _id(call_id: str | None) -> str:
    return f" ({call_id})" if call_id else ""


def _short(text: str, width: int = TEXT_WIDTH) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
