"""The shape every framework adapter declares, so the report and the tests can discover it.

Each `examples/frameworks/*_agent.py` module defines a module-level ``FRAMEWORK: Framework``
and the loop functions its configurations name (``module:function`` on the loop contract,
README "## The loop contract").
"""

from dataclasses import dataclass

from harness.scenario.model import Provider


@dataclass(frozen=True, kw_only=True)
class Config:
    """One way of building a framework's agent, run as its own column of the report."""

    name: str  # "defaults" | "conforming" | "wrapped"
    # "examples.frameworks.pydantic_ai_agent:defaults" (module:function on the loop contract)
    loop: str
    summary: str  # one line: what this configuration sets, for the report
    providers: tuple[Provider, ...]  # the providers this configuration runs on


@dataclass(frozen=True, kw_only=True)
class Framework:
    """A framework's adapter: its configurations and the wiring traps it handles."""

    name: str  # "pydantic-ai", "openai-agents", "langgraph", "litellm"
    packages: tuple[str, ...]  # distributions whose installed versions the report prints
    configs: tuple[Config, ...]
    traps: tuple[str, ...] = ()  # wiring traps the adapter handles, one sentence each
