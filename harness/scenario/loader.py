"""Load scenario YAML: parse with line numbers, validate against the shipped JSON Schema, then
check what a schema cannot say (declared tools, argument schemas, a script that matches its
expectations). Every problem is a `ScenarioError` naming file, line and field; nothing runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import jsonschema
import yaml

from harness.chat import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from harness.errors import ScenarioError
from harness.limits import MAX_SCENARIO_BYTES, MAX_SCENARIO_DEPTH, LimitError, read_text
from harness.safe_yaml import check_yaml
from harness.scenario.expected import derive_outcome
from harness.scenario.located import Located, shown, yaml_error
from harness.scenario.model import (
    ClosingExpectation,
    ClosingPhrases,
    Expectation,
    Fault,
    Provider,
    ResultCase,
    Scenario,
    Script,
    ScriptedCall,
    ScriptedTurn,
    ScriptOptions,
    Tool,
    UserTurn,
)
from harness.scenario.semantics import check_semantics

if TYPE_CHECKING:  # harness.settings imports the scenario model: read it when a scenario loads
    from harness.settings import Settings

SCENARIO_ID = re.compile(r"^[a-z0-9][a-z0-9_]*$")
ALL_PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai", "gemini")
NOT_BLANK = "\\S"  # schema.json's pattern for text the person reads (an answer, a closing)


@cache
def scenario_schema() -> dict[str, Any]:
    text = resources.files("harness.scenario").joinpath("schema.json").read_text("utf-8")
    return cast(dict[str, Any], json.loads(text))


def load_scenario(path: str | Path, settings: Settings | None = None) -> Scenario:
    """Read and validate one scenario file. Raises `ScenarioError` on any problem. `settings`
    (the project's `[tool.harness]`) give the budget and context window a scenario sets none
    of; without them, the rules' defaults (10 rounds, 20 messages)."""
    file = str(path)
    text = _read(file)
    located = Located(file)
    try:
        check_yaml(text, MAX_SCENARIO_DEPTH, loader=yaml.SafeLoader)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise yaml_error(file, exc, "(syntax)", text=text) from None
    except LimitError as exc:
        raise ScenarioError(file, exc.line, "(document)", exc.problem) from None
    if node is None:
        raise ScenarioError(file, None, "(document)", "the file is empty")
    data = located.build(node, ())
    if not isinstance(data, dict):
        raise located.error((), "a scenario is a mapping of fields (title, rules, messages, …)")
    scenario_id = Path(path).stem
    if not SCENARIO_ID.match(scenario_id):
        raise ScenarioError(
            file,
            None,
            "(id)",
            "the file stem is the scenario id: use lowercase letters, "
            "digits and underscores, e.g. limit_reached_pending_write.yaml",
        )
    _validate_schema(data, located)
    if settings is None:
        from harness.settings import Settings

        settings = Settings()
    scenario = _to_scenario(data, scenario_id, file, settings)
    _check_semantics(scenario, data, located)
    return scenario


def _read(file: str) -> str:
    """The file's text, at most `MAX_SCENARIO_BYTES` of strict UTF-8."""
    try:
        return read_text(file, MAX_SCENARIO_BYTES)
    except OSError as exc:
        raise ScenarioError(file, None, "(file)", f"cannot read: {exc.strerror or exc}") from None
    except LimitError as exc:
        raise ScenarioError(file, exc.line, "(file)", exc.problem) from None


def _validate_schema(data: dict[str, Any], located: Located) -> None:
    validator = jsonschema.Draft202012Validator(scenario_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: located.line(e.absolute_path) or 0)
    if not errors:
        return
    best = errors[0]
    while best.validator in ("oneOf", "anyOf") and best.context and not _alternatives(best):
        # Descend into the branch that fits best (e.g. the one whose `role` matched), so the
        # message names the real problem rather than every alternative.
        deeper = jsonschema.exceptions.best_match(best.context)
        if deeper is None or deeper is best:
            break
        best = deeper
    path = tuple(best.absolute_path)
    extra = _unexpected_keys(best) or _given_keys(best)[-1:]
    if extra:
        path = (*path, extra[0])
    problem = _describe(best)
    if len(errors) > 1:
        problem += f" (and {len(errors) - 1} more problem(s) after this one)"
    raise located.error(path, problem)


def _unexpected_keys(error: jsonschema.ValidationError) -> list[str]:
    if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
        return []
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    allowed = set(cast(Mapping[str, Any], schema.get("properties", {})))
    return sorted(k for k in error.instance if k not in allowed)


def _alternatives(error: jsonschema.ValidationError) -> tuple[str, list[str]] | None:
    """("keys" | "types", names) when every branch of this oneOf is one required key (a
    tool's `result`/`results`/`cases`/`error`) or one type (a result value): the message
    then names the choice instead of the first branch's raw complaint."""
    branches = error.validator_value if error.validator == "oneOf" else None
    if not isinstance(branches, list) or not all(isinstance(b, Mapping) for b in branches):
        return None
    if all(list(b) == ["required"] and len(b["required"]) == 1 for b in branches):
        return "keys", [str(b["required"][0]) for b in branches]
    if all(list(b) == ["type"] and isinstance(b["type"], str) for b in branches):
        return "types", [str(b["type"]) for b in branches]
    return None


# JSON Schema type -> how a message names it and what YAML writes for it.
TYPE_NAMES = {
    "string": "text",
    "object": "a mapping",
    "array": "a list",
    "number": "a number",
    "integer": "an integer",
    "boolean": "true/false",
    "null": "null",
}


def _kind(value: Any) -> str:
    """What a YAML value is, in the words of `TYPE_NAMES` (never the value itself: a mapping
    would fill the line)."""
    if value is None or isinstance(value, bool):
        return "null" if value is None else "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, (str, dict, list)):
        return {str: "text", dict: "a mapping", list: "a list"}[type(value)]
    return f"a {type(value).__name__}; quote it to give text"


def _given_keys(error: jsonschema.ValidationError) -> list[str]:
    """The keys of a one-of-these-keys choice that are all given (the error is that)."""
    alternatives = _alternatives(error)
    if alternatives is None or alternatives[0] != "keys" or not isinstance(error.instance, dict):
        return []
    given = [k for k in alternatives[1] if k in error.instance]
    return given if len(given) > 1 else []


def _one_of(error: jsonschema.ValidationError, kind: str, names: list[str]) -> str:
    if kind == "types":
        wanted = [TYPE_NAMES.get(n, n) for n in names]
        return f"must be {', '.join(wanted[:-1])} or {wanted[-1]} (got {_kind(error.instance)})"
    listed = f"{', '.join(names[:-1])} or {names[-1]}"
    given = _given_keys(error)
    if given:
        others = " and ".join(given[:-1])
        return f"give only one of {listed}; {others} {'is' if len(given) == 2 else 'are'} given too"
    return f"needs one of {listed} (what it gives back)"


def _describe(error: jsonschema.ValidationError) -> str:
    alternatives = _alternatives(error)
    if alternatives is not None:
        return _one_of(error, *alternatives)
    if error.validator == "type" and isinstance(error.validator_value, str):
        wanted = TYPE_NAMES.get(error.validator_value, error.validator_value)
        return f"must be {wanted} (got {_kind(error.instance)})"
    if error.validator == "additionalProperties":
        schema = error.schema if isinstance(error.schema, Mapping) else {}
        allowed = sorted(cast(Mapping[str, Any], schema.get("properties", {})))
        extra = ", ".join(shown(k) for k in _unexpected_keys(error))
        return f"unknown key {extra}; allowed keys here: {', '.join(allowed)}"
    if error.validator == "pattern" and error.validator_value == NOT_BLANK:
        return "must hold some text, not be empty or only spaces"
    if error.validator in ("oneOf", "anyOf") and error.context:
        reasons = sorted({c.message for c in error.context})
        return "does not match any allowed form: " + "; ".join(reasons[:4])
    return error.message


def _to_scenario(data: dict[str, Any], scenario_id: str, file: str, settings: Settings) -> Scenario:
    streaming = data.get("streaming", "both")
    max_rounds = data.get("max_rounds", settings.max_rounds)
    return Scenario(
        id=scenario_id,
        path=file,
        title=data["title"],
        description=data.get("description", ""),
        rules=tuple(data["rules"]),
        system=data.get("system", ""),
        max_rounds=max_rounds,
        context_window=data.get("context_window", settings.context_window),
        streaming=(False, True) if streaming == "both" else (bool(streaming),),
        providers=tuple(data.get("providers", ALL_PROVIDERS)),
        models=dict(data.get("models", {})),
        history=tuple(_message(m) for m in data.get("history", [])),
        tools=tuple(_tool(t) for t in data.get("tools", [])),
        messages=tuple(_user_turn(m, max_rounds) for m in data["messages"]),
        script_options=_options(data.get("script_options", {})),
        closing_phrases=ClosingPhrases(
            **{k: tuple(v) for k, v in data.get("closing_phrases", {}).items()}
        ),
        gemini_max_request_bytes=data.get("gemini_max_request_bytes"),
    )


def _message(raw: dict[str, Any]) -> Message:
    role = raw["role"]
    if role == "user":
        return UserMessage(text=raw["text"])
    if role == "assistant":
        calls = tuple(
            ToolCall(id=c["id"], name=c["name"], arguments=c.get("arguments", {}))
            for c in raw.get("tool_calls", [])
        )
        return AssistantMessage(text=raw.get("text", ""), tool_calls=calls)
    return ToolMessage(
        call_id=raw["id"],
        name=raw["name"],
        content=raw["content"],
        is_error=raw.get("is_error", False),
    )


def _tool(raw: dict[str, Any]) -> Tool:
    kind = next(k for k in ("result", "results", "cases", "error") if k in raw)
    return Tool(
        name=raw["name"],
        description=raw["description"],
        parameters=raw["parameters"],
        effect=raw["effect"],
        result_kind=kind,
        result=raw.get("result"),
        results=tuple(raw.get("results", ())),
        cases=tuple(ResultCase(when=c["when"], result=c["result"]) for c in raw.get("cases", ())),
        error=raw.get("error", ""),
    )


def _fault(raw: dict[str, Any] | None) -> Fault | None:
    if raw is None:
        return None
    return Fault(
        kind=raw["kind"],
        times=raw.get("times", 1),
        retry_after=raw.get("retry_after"),
        delay=raw.get("delay", 0.0),
    )


def _turn(raw: dict[str, Any]) -> ScriptedTurn:
    fault = _fault(raw.get("fault"))
    if "answer" in raw:
        return ScriptedTurn(text=raw["answer"], fault=fault, repeat=raw.get("repeat"))
    calls = tuple(
        ScriptedCall(name=c["name"], arguments=c.get("arguments", {})) for c in raw["calls"]
    )
    return ScriptedTurn(
        text=raw.get("text", ""), calls=calls, fault=fault, repeat=raw.get("repeat")
    )


def _user_turn(raw: dict[str, Any], max_rounds: int) -> UserTurn:
    script = Script(
        turns=tuple(_turn(t) for t in raw["script"]["turns"]),
        closing=raw["script"]["closing"],
        closing_fault=_fault(raw["script"].get("closing_fault")),
    )
    derived = derive_outcome(script, max_rounds)
    exp = raw["expect"]
    closing = exp.get("closing")
    return UserTurn(
        text=raw["text"],
        script=script,
        expect=Expectation(
            ending=exp["ending"],
            rounds=exp.get("rounds", derived.rounds),
            tools=tuple(exp.get("tools", derived.executed)),
            not_run=tuple(exp.get("not_run", ())),
            closing=None
            if closing is None
            else ClosingExpectation(
                asks_to_continue=closing.get("asks_to_continue"),
                explains_limit=closing.get("explains_limit"),
                must_not_contain=tuple(closing.get("must_not_contain", ())),
            ),
        ),
    )


def _options(raw: dict[str, Any]) -> ScriptOptions:
    return ScriptOptions(
        anthropic_thinking=raw.get("anthropic", {}).get("thinking", False),
        openai_reasoning=raw.get("openai", {}).get("reasoning", False),
        gemini_call_ids=raw.get("gemini", {}).get("call_ids", True),
        gemini_thought_signatures=raw.get("gemini", {}).get("thought_signatures", True),
    )


def _check_semantics(s: Scenario, data: dict[str, Any], at: Located) -> None:
    check_semantics(s, data, at.error)
