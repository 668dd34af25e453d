"""Traces for the check tests: real reference-loop runs against the emulator (cached per cell),
and small edits of what they sent or what happened, each breaking one rule."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from harness.capture import Exchange
from harness.checks import input_from_run, rule_verdicts, run_checks
from harness.findings import Finding
from harness.loop.contract import Loop
from harness.loop.reference import reference_loop
from harness.runner import Cell, CellRun, QueryRun, run_cell
from harness.scenario.model import Provider, Scenario
from harness.sources import ScriptedSource
from harness.tools import ToolRun
from tests.conftest import library

PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai", "gemini")
LIBRARY: dict[str, Scenario] = {s.id: s for s in library()}
Body = dict[str, Any]


class Runs:
    """Reference runs of library cells, each run once per test session."""

    def __init__(self) -> None:
        self.source = ScriptedSource(LIBRARY.values(), {})
        self.cache: dict[tuple[str, Provider, bool], CellRun] = {}
        self.count = 0

    def get(self, scenario: str, provider: Provider, stream: bool = False) -> CellRun:
        key = (scenario, provider, stream)
        if key not in self.cache:
            self.cache[key] = self.run(scenario, provider, stream, reference_loop)
        return self.cache[key]

    def run(self, scenario: str, provider: Provider, stream: bool, loop: Loop) -> CellRun:
        return self.run_scenario(LIBRARY[scenario], provider, stream, loop)

    def run_scenario(
        self, scenario: Scenario, provider: Provider, stream: bool, loop: Loop = reference_loop
    ) -> CellRun:
        """A run of `scenario` (a library scenario, maybe with other settings: the emulator
        plays the library script of the same id)."""
        cell = Cell(scenario=scenario, provider=provider, stream=stream)
        self.count += 1  # each run its own id: the emulator keeps logs per run id
        run_id = f"checks-{self.count}-{scenario.id}-{provider}-{int(stream)}"
        return run_cell(cell, self.source, loop, run_id=run_id)

    def close(self) -> None:
        self.source.close()


# ---- reading results -------------------------------------------------------------------------


def findings(run: CellRun) -> list[Finding]:
    return run_checks(input_from_run(run))


def rules(run: CellRun) -> set[str]:
    return {f.rule for f in findings(run)}


def verdicts(run: CellRun) -> dict[str, str]:
    return dict(rule_verdicts(input_from_run(run)))


def explain(found: list[Finding]) -> str:
    return "\n".join(f.line() for f in found) or "no findings"


# ---- editing what happened -------------------------------------------------------------------


def _exchanges(run: CellRun) -> list[Exchange]:
    return sorted(run.exchanges, key=lambda e: e.seq)


def _swap_exchange(run: CellRun, old: Exchange, new: Exchange | None) -> CellRun:
    def swap(items: tuple[Exchange, ...]) -> tuple[Exchange, ...]:
        out = [new if e.seq == old.seq else e for e in items]
        return tuple(e for e in out if e is not None)

    queries = tuple(replace(q, exchanges=swap(q.exchanges)) for q in run.queries)
    return replace(run, exchanges=swap(run.exchanges), queries=queries)


def edit_request(run: CellRun, call: int, edit: Callable[[Body], None]) -> CellRun:
    """Model call `call` (1-based) with its request body changed in place by `edit`."""
    old = _exchanges(run)[call - 1]
    body = copy.deepcopy(old.request_body)
    edit(body)
    return _swap_exchange(run, old, replace(old, request_body=body))


def edit_headers(run: CellRun, call: int, headers: dict[str, str]) -> CellRun:
    old = _exchanges(run)[call - 1]
    return _swap_exchange(
        run, old, replace(old, request_headers={**old.request_headers, **headers})
    )


def edit_response(run: CellRun, call: int, edit: Callable[[Body], None], **fields: Any) -> CellRun:
    old = _exchanges(run)[call - 1]
    body = copy.deepcopy(old.response_body)
    edit(body)
    return _swap_exchange(run, old, replace(old, response_body=body, **fields))


def drop_calls(run: CellRun, first: int) -> CellRun:
    """The run as if the loop had stopped before model call `first` (no tool ran after the
    call before it)."""
    for old in _exchanges(run)[first - 1 :]:
        run = _swap_exchange(run, old, None)
    for index in range(len(run.queries)):
        run = edit_runs(run, lambda runs: [r for r in runs if r.after_call < first - 1], index)
    return run


def drop_calls_after_tools(run: CellRun, first: int) -> CellRun:
    """The run as if the loop had run the tools of call `first - 1`'s reply and then stopped,
    without model call `first` (a loop that counts its budget in tool runs)."""
    for old in _exchanges(run)[first - 1 :]:
        run = _swap_exchange(run, old, None)
    for index in range(len(run.queries)):
        run = edit_runs(run, lambda runs: [r for r in runs if r.after_call < first], index)
    return run


def repeat_call(run: CellRun, call: int) -> CellRun:
    """Model call `call` sent once more at the end of its query."""
    old = _exchanges(run)[call - 1]
    new = replace(old, seq=max(e.seq for e in run.exchanges) + 1)
    queries = tuple(
        replace(q, exchanges=(*q.exchanges, new))
        if any(e.seq == old.seq for e in q.exchanges)
        else q
        for q in run.queries
    )
    return replace(run, exchanges=(*run.exchanges, new), queries=queries)


def edit_query(run: CellRun, index: int = 0, **fields: Any) -> CellRun:
    queries = list(run.queries)
    queries[index] = replace(queries[index], **fields)
    return replace(run, queries=tuple(queries))


def edit_runs(
    run: CellRun, edit: Callable[[list[ToolRun]], list[ToolRun]], index: int = 0
) -> CellRun:
    query: QueryRun = run.queries[index]
    runs = edit(list(query.tool_runs))
    others = [r for r in run.tool_runs if r not in query.tool_runs]
    return replace(edit_query(run, index, tool_runs=tuple(runs)), tool_runs=(*others, *runs))


def edit_scenario(run: CellRun, **fields: Any) -> CellRun:
    return replace(run, cell=replace(run.cell, scenario=replace(run.cell.scenario, **fields)))


# ---- wire spellings --------------------------------------------------------------------------


def conversation(body: Body, provider: Provider) -> list[Any]:
    key = {"anthropic": "messages", "openai": "input", "gemini": "contents"}[provider]
    items: list[Any] = body[key]
    return items


def user_index(body: Body, provider: Provider, text: str) -> int:
    """Where the query's user message sits in the request's conversation."""
    for i, item in enumerate(conversation(body, provider)):
        if provider == "gemini":
            parts = item.get("parts", [])
            if item.get("role") == "user" and parts and parts[0].get("text") == text:
                return i
        elif item.get("role") == "user" and item.get("content") == text:
            return i
    raise AssertionError(f"no user message {text!r}")


def set_system(body: Body, provider: Provider, text: str) -> None:
    if provider == "anthropic":
        body["system"] = text
    elif provider == "openai":
        body["instructions"] = text
    else:
        body["systemInstruction"] = {"parts": [{"text": text}], "role": "user"}


def drop_tool_choice(body: Body, provider: Provider) -> None:
    body.pop("toolConfig" if provider == "gemini" else "tool_choice", None)


def results(body: Body, provider: Provider) -> list[Body]:
    """The result entries of the request's last round (blocks, items or parts)."""
    items = conversation(body, provider)
    if provider == "anthropic":
        return [b for b in items[-1]["content"] if b.get("type") == "tool_result"]
    if provider == "openai":
        tail: list[Body] = []
        for item in reversed(items):
            if item.get("type") != "function_call_output":
                break
            tail.insert(0, item)
        return tail
    return [p for p in items[-1]["parts"] if "functionResponse" in p]


def result_container(body: Body, provider: Provider) -> list[Body]:
    """The list holding the last round's results (to drop, add or reorder them)."""
    items = conversation(body, provider)
    if provider == "anthropic":
        container: list[Body] = items[-1]["content"]
        return container
    if provider == "openai":
        return items
    parts: list[Body] = items[-1]["parts"]
    return parts


def set_result_text(result: Body, provider: Provider, text: str) -> None:
    if provider == "anthropic":
        result["content"] = text
    elif provider == "openai":
        result["output"] = text
    else:
        response = result["functionResponse"]["response"]
        response[next(iter(response), "output")] = text


def result_text(result: Body, provider: Provider) -> str:
    if provider == "anthropic":
        return str(result["content"])
    if provider == "openai":
        return str(result["output"])
    return str(next(iter(result["functionResponse"]["response"].values())))


def set_result_id(result: Body, provider: Provider, value: str) -> None:
    if provider == "anthropic":
        result["tool_use_id"] = value
    elif provider == "openai":
        result["call_id"] = value
    else:
        result["functionResponse"]["id"] = value


def first_turn(body: Body, provider: Provider, text: str) -> list[Body]:
    """The items of the first model turn after the query's user message (Anthropic: its
    content blocks; OpenAI: its output items; Gemini: its parts)."""
    items = conversation(body, provider)
    at = user_index(body, provider, text) + 1
    if provider == "anthropic":
        blocks: list[Body] = items[at]["content"]
        return blocks
    if provider == "gemini":
        parts: list[Body] = items[at]["parts"]
        return parts
    turn: list[Body] = []
    for item in items[at:]:
        if item.get("type") == "function_call_output":
            break
        turn.append(item)
    return turn


def set_turn_text(body: Body, provider: Provider, text: str, new: str) -> None:
    for item in first_turn(body, provider, text):
        if provider == "openai" and item.get("type") == "message":
            item["content"][0]["text"] = new
            return
        if provider != "openai" and "text" in item and not item.get("thought"):
            item["text"] = new
            return
    raise AssertionError("the turn has no text")


def set_turn_argument(body: Body, provider: Provider, text: str, key: str, value: Any) -> None:
    for item in first_turn(body, provider, text):
        if provider == "anthropic" and item.get("type") == "tool_use":
            item["input"][key] = value
            return
        if provider == "openai" and item.get("type") == "function_call":
            arguments = json.loads(item["arguments"])
            arguments[key] = value
            item["arguments"] = json.dumps(arguments)
            return
        if provider == "gemini" and "functionCall" in item:
            item["functionCall"]["args"][key] = value
            return
    raise AssertionError("the turn has no tool request")


def drop_first_round(body: Body, provider: Provider, text: str) -> None:
    """Remove the first turn and its results after the query's user message."""
    items = conversation(body, provider)
    at = user_index(body, provider, text) + 1
    if provider == "openai":
        end = at
        while items[end].get("type") != "function_call_output":
            end += 1
        while end < len(items) and items[end].get("type") == "function_call_output":
            end += 1
        del items[at:end]
    else:
        del items[at : at + 2]


def set_reply_text(body: Body, provider: Provider, text: str) -> None:
    """The text of a non-streamed answer reply."""
    if provider == "anthropic":
        body["content"] = [{"type": "text", "text": text}]
    elif provider == "openai":
        message = next(i for i in body["output"] if i.get("type") == "message")
        message["content"] = [{"type": "output_text", "text": text, "annotations": []}]
    else:
        body["candidates"][0]["content"]["parts"] = [{"text": text}]


def orphan_chain(provider: Provider) -> Any:
    """A saved tool result whose request was cut off (the cut inside a chain)."""
    if provider == "anthropic":
        return {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "hist_call_2", "content": "logged"}],
        }
    if provider == "openai":
        return {"type": "function_call_output", "call_id": "hist_call_2", "output": "logged"}
    return {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": "hist_call_2",
                    "name": "log_workout",
                    "response": {"output": "logged"},
                }
            }
        ],
    }
