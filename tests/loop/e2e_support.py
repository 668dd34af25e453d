"""Helpers for the end-to-end tests of the reference loop: the provider × stream cells, SDK
clients pointed at the emulator, scenario tools that record their runs, and readers of the
logged request bodies in each provider's spelling."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from harness.chat import Message
from harness.emulator.server import Emulator, LogEntry
from harness.loop.contract import LoopCall, LoopResult, ProviderName, ToolError, ToolSpec
from harness.loop.reference import reference_loop
from harness.scenario import Scenario, load_scenario

PROVIDERS: tuple[ProviderName, ...] = ("anthropic", "openai", "gemini")
CELLS = [
    pytest.param(p, s, id=f"{p}-{'stream' if s else 'whole'}")
    for p in PROVIDERS
    for s in (False, True)
]
MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-5-mini", "gemini": "gemini-2.5-flash"}
# Gemini 3 is the model family whose function calls must carry a thought signature (G3).
OPAQUE_MODELS = {**MODELS, "gemini": "gemini-3-flash-preview"}
TOOLS = """\
tools:
  - name: get_workout_history
    description: The user's logged workouts for one exercise, newest first.
    effect: read
    parameters:
      type: object
      properties:
        exercise: {type: string}
      required: [exercise]
    result: "2026-11-28 bench press 3x5 @ 80 kg"
  - name: save_goal
    description: Save a training goal.
    effect: write
    parameters:
      type: object
      properties:
        goal: {type: string}
      required: [goal]
    result: saved
  - name: get_body_weight
    description: The user's latest body weight.
    effect: read
    parameters: {type: object, properties: {}}
    error: the scale service is offline
"""


@dataclass
class Runs:
    """Tools built from the scenario that record each run."""

    scenario: Scenario
    names: list[str] = field(default_factory=list)

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(self._spec(t.name, t.result, t.error) for t in self.scenario.tools)

    def _spec(self, name: str, result: Any, error: str) -> ToolSpec:
        tool = self.scenario.tool(name)
        assert tool is not None

        def run(arguments: Mapping[str, Any]) -> str:
            self.names.append(name)
            if error:
                raise ToolError(error)
            return result if isinstance(result, str) else json.dumps(result)

        return ToolSpec(
            name=name,
            description=tool.description,
            parameters=tool.parameters,
            effect=tool.effect,
            run=run,
        )


def client_for(provider: ProviderName, base_url: str) -> Any:
    if provider == "anthropic":
        import anthropic

        return anthropic.Anthropic(api_key="dummy", base_url=base_url, max_retries=0)
    if provider == "openai":
        import openai

        return openai.OpenAI(api_key="dummy", base_url=base_url, max_retries=0)
    from google import genai
    from google.genai import types

    return genai.Client(api_key="dummy", http_options=types.HttpOptions(base_url=base_url))


@dataclass
class Cell:
    emulator: Emulator
    provider: ProviderName
    stream: bool
    run_id: str
    tmp_path: Path

    def scenario(self, name: str, body: str) -> Scenario:
        path = self.tmp_path / f"loop_e2e_{name}.yaml"
        path.write_text(textwrap.dedent(body) + TOOLS, encoding="utf-8")
        scenario = load_scenario(path)
        self.emulator.add(scenario)
        return scenario

    def run(
        self,
        scenario: Scenario,
        runs: Runs,
        index: int = 0,
        history: tuple[Message, ...] = (),
        model: str | None = None,
    ) -> LoopResult:
        urls = self.emulator.base_urls(scenario.id, self.run_id)
        call = LoopCall(
            provider=self.provider,
            client=client_for(self.provider, urls[self.provider]),
            model=model or MODELS[self.provider],
            system=scenario.system,
            history=history,
            message=scenario.messages[index].text,
            tools=runs.specs(),
            max_rounds=scenario.max_rounds,
            stream=self.stream,
        )
        return reference_loop(call)

    def log(self) -> list[LogEntry]:
        return self.emulator.log(self.run_id)


def rejections(log: list[LogEntry]) -> list[str]:
    return [f"#{e.seq} {e.status} {e.error}" for e in log if e.status != 200]


def tool_choice_is_none(provider: ProviderName, body: Mapping[str, Any]) -> bool:
    if provider == "anthropic":
        return bool(body.get("tool_choice") == {"type": "none"})
    if provider == "openai":
        return bool(body.get("tool_choice") == "none")
    config = body.get("toolConfig") or body.get("tool_config") or {}
    calling = config.get("functionCallingConfig") or config.get("function_calling_config") or {}
    return bool(calling.get("mode") == "NONE")


def system_text(provider: ProviderName, body: Mapping[str, Any]) -> str:
    if provider == "anthropic":
        return str(body.get("system", ""))
    if provider == "openai":
        return str(body.get("instructions", ""))
    parts = (body.get("systemInstruction") or {}).get("parts") or []
    return "".join(p.get("text", "") for p in parts)


def declared_tools(provider: ProviderName, body: Mapping[str, Any]) -> list[str]:
    tools = body.get("tools") or []
    if provider != "gemini":
        return [t["name"] for t in tools]
    return [
        d["name"]
        for t in tools
        for d in t.get("functionDeclarations") or t.get("function_declarations") or []
    ]


def wire_text(body: Any) -> str:
    return json.dumps(body, ensure_ascii=False)


EVERY_CELL = pytest.mark.parametrize(("provider", "stream"), CELLS)
STREAMED = pytest.mark.parametrize(("provider", "stream"), [c for c in CELLS if c.values[1]])


def cells_of(provider: ProviderName) -> pytest.MarkDecorator:
    return pytest.mark.parametrize(
        ("provider", "stream"), [c for c in CELLS if c.values[0] == provider]
    )
