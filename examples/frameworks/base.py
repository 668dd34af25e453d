"""What an adapter module declares: its framework, the configurations it runs, the traps it
handles (placeholder of the shared shape; fwcore's version replaces it)."""

from __future__ import annotations

from dataclasses import dataclass

from harness.scenario.model import Provider


@dataclass(frozen=True, kw_only=True)
class Config:
    name: str  # "defaults" | "conforming" | "wrapped"
    loop: str  # "examples.frameworks.pydantic_ai_agent:defaults" (module:function, loop contract)
    summary: str  # one line: what this configuration sets, for the report
    providers: tuple[Provider, ...]  # the providers this configuration runs on


@dataclass(frozen=True, kw_only=True)
class Framework:
    name: str  # "pydantic-ai", "openai-agents", "langgraph", "litellm"
    packages: tuple[str, ...]  # distributions whose installed versions the report prints
    configs: tuple[Config, ...]
    traps: tuple[str, ...] = ()  # wiring traps the adapter handles, one sentence each
