"""Checks a JSON Schema cannot express: declared tools, argument schemas, consistent history,
and expectations that agree with what the script makes a correct loop do."""

from __future__ import annotations

from collections import Counter
from typing import Any

from harness.chat import AssistantMessage, ToolMessage
from harness.scenario.closing import check_closing_text
from harness.scenario.expected import derive_outcome
from harness.scenario.located import ErrorAt
from harness.scenario.model import Scenario, ScriptedCall, ScriptedTurn, Tool
from harness.scenario.tool_schema import argument_errors, schema_problem


def check_semantics(s: Scenario, data: dict[str, Any], error: ErrorAt) -> None:
    _check_tools(s, error)
    _check_history(s, error)
    _check_messages(s, error)
    _check_result_counts(s, error)


def _check_tools(s: Scenario, error: ErrorAt) -> None:
    seen: set[str] = set()
    for i, tool in enumerate(s.tools):
        if tool.name in seen:
            raise error(("tools", i, "name"), f"tool {tool.name!r} is declared twice")
        seen.add(tool.name)
        problem = schema_problem(tool.parameters)
        if problem is not None:
            raise error(("tools", i, "parameters", *problem.path), problem.problem)
        for k, case in enumerate(tool.cases):
            _check_arguments(tool, case.when, ("tools", i, "cases", k, "when"), error, partial=True)


def _check_arguments(
    tool: Tool, args: Any, path: tuple[str | int, ...], error: ErrorAt, partial: bool = False
) -> None:
    problems = argument_errors(tool.parameters, args, partial=partial)
    if problems:
        where = "/".join(str(p) for p in problems[0].absolute_path) or "(arguments)"
        raise error(
            path,
            f"arguments do not fit the parameters of tool {tool.name!r}: "
            f"{where}: {problems[0].message}",
        )


def _check_case(
    tool: Tool, index: int, call: ScriptedCall, path: tuple[str | int, ...], error: ErrorAt
) -> None:
    """A call no `cases:` entry matches would get an error result at run time, silently."""
    if tool.result_kind != "cases" or any(c.matches(call.arguments) for c in tool.cases):
        return
    raise error(
        (*path, "arguments"),
        f"no case of tool {tool.name!r} (tools[{index}].cases) matches this call's arguments "
        f"{dict(call.arguments)!r}; add a case whose `when:` fits them",
    )


def _check_history(s: Scenario, error: ErrorAt) -> None:
    open_ids: dict[str, str] = {}
    for i, msg in enumerate(s.history):
        if isinstance(msg, AssistantMessage):
            if open_ids:
                raise error(
                    ("history", i),
                    "this assistant message comes before the results "
                    f"of {', '.join(sorted(open_ids))}; every tool call needs its "
                    "result right after its turn (L6)",
                )
            open_ids = {c.id: c.name for c in msg.tool_calls}
        elif isinstance(msg, ToolMessage):
            if msg.call_id not in open_ids:
                raise error(
                    ("history", i, "id"),
                    f"tool result {msg.call_id!r} answers no "
                    "tool call of the assistant message before it",
                )
            del open_ids[msg.call_id]
        elif open_ids:
            raise error(
                ("history", i),
                "a user message comes before the results of "
                f"{', '.join(sorted(open_ids))}; every tool call needs its result",
            )
    if open_ids:
        raise error(
            ("history",),
            f"the saved history ends with unanswered tool calls {', '.join(sorted(open_ids))}",
        )


def _check_messages(s: Scenario, error: ErrorAt) -> None:
    texts = Counter(m.text for m in s.messages)
    for i, msg in enumerate(s.messages):
        base: tuple[str | int, ...] = ("messages", i)
        if texts[msg.text] > 1:
            raise error(
                (*base, "text"),
                "user messages must differ: the emulator tells the queries apart by their text",
            )
        for t, turn in enumerate(msg.script.turns):
            _check_repeat(msg.script.turns, t, (*base, "script", "turns", t, "repeat"), error)
            for c, call in enumerate(turn.calls):
                path = (*base, "script", "turns", t, "calls", c)
                tool = s.tool(call.name)
                if tool is None:
                    declared = ", ".join(x.name for x in s.tools) or "none"
                    raise error(
                        (*path, "name"),
                        f"the script requests tool {call.name!r}, "
                        f"which is not declared (declared: {declared})",
                    )
                _check_arguments(tool, dict(call.arguments), (*path, "arguments"), error)
                _check_case(tool, s.tools.index(tool), call, path, error)
        _check_expectation(s, i, error)


def _check_repeat(
    turns: tuple[ScriptedTurn, ...], t: int, path: tuple[str | int, ...], error: ErrorAt
) -> None:
    """`repeat: until_limit` stands for every call up to the budget: a tool turn, the last."""
    if turns[t].repeat is None:
        return
    if turns[t].is_answer:
        raise error(
            path,
            "an answer turn cannot repeat: it ends the query (L2); put `repeat: until_limit` "
            "on a turn with `calls:`",
        )
    if t != len(turns) - 1:
        raise error(
            path,
            f"only the last turn may repeat: turn {t} repeats until the budget is spent, so "
            f"the {len(turns) - 1 - t} turn(s) after it would never be played",
        )


def _check_expectation(s: Scenario, i: int, error: ErrorAt) -> None:
    msg = s.messages[i]
    base: tuple[str | int, ...] = ("messages", i)
    outcome = derive_outcome(msg.script, s.max_rounds)
    if outcome.problem:
        raise error((*base, "script", "turns"), outcome.problem)
    if outcome.turns_played < len(msg.script.turns):
        raise error(
            (*base, "script", "turns", outcome.turns_played),
            f"this turn is never played: with max_rounds {s.max_rounds} the query "
            f"ends ({outcome.ending}) at turn {outcome.turns_played}",
        )
    exp = msg.expect
    checks: list[tuple[str, object, object]] = [
        ("ending", exp.ending, outcome.ending),
        ("rounds", exp.rounds, outcome.rounds),
        ("tools", list(exp.tools), list(outcome.executed)),
    ]
    repeats = any(turn.repeat for turn in msg.script.turns)
    for field, said, derived in checks:
        if said != derived:
            why = " (a turn repeats until the limit, so they follow max_rounds)" if repeats else ""
            raise error(
                (*base, "expect", field),
                f"says {said!r}, but with max_rounds "
                f"{s.max_rounds} this script makes a correct loop give {derived!r}{why}",
            )
    for k, name in enumerate(exp.not_run):
        if s.tool(name) is None:
            raise error((*base, "expect", "not_run", k), f"tool {name!r} is not declared")
        if name in outcome.executed:
            raise error(
                (*base, "expect", "not_run", k),
                f"tool {name!r} is run by the script within the budget, so a correct loop runs it",
            )
    if exp.closing is not None and exp.ending != "step_limit":
        raise error(
            (*base, "expect", "closing"),
            "closing-message expectations need "
            "ending: step_limit (only then is there a closing call)",
        )
    if outcome.ending == "step_limit":
        check_closing_text(s, i, outcome.pending, error)


def _check_result_counts(s: Scenario, error: ErrorAt) -> None:
    calls: Counter[str] = Counter()
    for msg in s.messages:
        calls.update(derive_outcome(msg.script, s.max_rounds).executed)
    for i, tool in enumerate(s.tools):
        if tool.result_kind == "results" and calls[tool.name] > len(tool.results):
            raise error(
                ("tools", i, "results"),
                f"{len(tool.results)} result(s) listed but a "
                f"correct loop runs {tool.name!r} {calls[tool.name]} time(s); list one "
                "per call or use `result:` for a fixed value",
            )
