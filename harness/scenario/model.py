"""Typed values of a loaded scenario. Loading and validation live in `loader.py`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from harness.chat import Message

Provider: TypeAlias = Literal["anthropic", "openai", "gemini"]
Ending: TypeAlias = Literal["answer", "step_limit", "error"]
FaultKind: TypeAlias = Literal["rate_limit", "server_error", "overloaded", "stream_cut", "slow"]
# `until_limit`: the turn is played again on every later call that allows tools, until the
# loop's own budget is spent and it makes its closing call (budget-relative scripts).
Repeat: TypeAlias = Literal["until_limit"]

DEFAULT_MAX_ROUNDS = 10  # loop-rules.md L3: 10 by default, a product decision
DEFAULT_CONTEXT_WINDOW = 20  # loop-rules.md L7: at most the last 20 chat messages


@dataclass(frozen=True, kw_only=True)
class ResultCase:
    when: Mapping[str, Any]
    result: Any

    def matches(self, arguments: Mapping[str, Any]) -> bool:
        """Every `when` field equals the argument of that name (others are free); the same
        test `harness.tools.scripted_result` applies at run time."""
        return all(arguments.get(k) == v for k, v in self.when.items())


@dataclass(frozen=True, kw_only=True)
class Tool:
    """A declared tool and what it returns when the loop runs it.

    Exactly one of `result` (every call), `results` (in call order), `cases` (chosen by
    arguments) or `error` (the tool fails) is set; `result_kind` says which.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    effect: Literal["read", "write"]
    result_kind: Literal["result", "results", "cases", "error"]
    result: Any = None
    results: tuple[Any, ...] = ()
    cases: tuple[ResultCase, ...] = ()
    error: str = ""


@dataclass(frozen=True, kw_only=True)
class Fault:
    """A failure the emulator serves for one script step, `times` times before it succeeds."""

    kind: FaultKind
    times: int = 1
    retry_after: float | None = None
    delay: float = 0.0


@dataclass(frozen=True, kw_only=True)
class ScriptedCall:
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ScriptedTurn:
    """One model turn: interim `text` plus tool `calls`, or a final `text` with no calls."""

    text: str = ""
    calls: tuple[ScriptedCall, ...] = ()
    fault: Fault | None = None
    repeat: Repeat | None = None

    @property
    def is_answer(self) -> bool:
        return not self.calls


def played_turns(turns: tuple[ScriptedTurn, ...], calls: int) -> tuple[ScriptedTurn, ...]:
    """The turns the first `calls` model calls of a query are answered with: the script's, a
    turn marked `repeat: until_limit` standing for itself on every call from its place on."""
    for index, turn in enumerate(turns):
        if turn.repeat == "until_limit":
            return (*turns[:index], *([turn] * max(0, calls - index)))
    return turns


@dataclass(frozen=True, kw_only=True)
class Script:
    turns: tuple[ScriptedTurn, ...]
    closing: str
    closing_fault: Fault | None = None


@dataclass(frozen=True, kw_only=True)
class ClosingExpectation:
    asks_to_continue: bool | None = None
    explains_limit: bool | None = None
    must_not_contain: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Expectation:
    ending: Ending
    rounds: int
    tools: tuple[str, ...]
    not_run: tuple[str, ...] = ()
    closing: ClosingExpectation | None = None


@dataclass(frozen=True, kw_only=True)
class UserTurn:
    """One new user message: its own round budget (L3), script and expectations."""

    text: str
    script: Script
    expect: Expectation


@dataclass(frozen=True, kw_only=True)
class ScriptOptions:
    anthropic_thinking: bool = False
    openai_reasoning: bool = False
    gemini_call_ids: bool = True
    gemini_thought_signatures: bool = True


@dataclass(frozen=True, kw_only=True)
class ClosingPhrases:
    """Extra phrases (any language) that count as asking to continue / explaining the limit."""

    asks_to_continue: tuple[str, ...] = ()
    explains_limit: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Scenario:
    id: str
    path: str
    title: str
    description: str
    rules: tuple[str, ...]
    system: str
    max_rounds: int
    streaming: tuple[bool, ...]
    providers: tuple[Provider, ...]
    models: Mapping[str, str]
    history: tuple[Message, ...]
    tools: tuple[Tool, ...]
    messages: tuple[UserTurn, ...]
    script_options: ScriptOptions = ScriptOptions()
    closing_phrases: ClosingPhrases = ClosingPhrases()
    gemini_max_request_bytes: int | None = None
    # The product's context window: at most this many saved messages per query (L7).
    context_window: int = DEFAULT_CONTEXT_WINDOW

    def tool(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name == name), None)
