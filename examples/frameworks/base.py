"""The shape every framework adapter declares, so the report and the tests can discover it.

Each `examples/frameworks/*_agent.py` module defines a module-level ``FRAMEWORK: Framework``
and the loop functions its configurations name (``module:function`` on the loop contract,
README "## The loop contract").
"""

import os
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


# The frameworks' own switches that keep a run offline and quiet; set (unless already set)
# before any framework is imported, by the report and by tests/frameworks.
OFFLINE_ENV: dict[str, str] = {
    # litellm fetches its model cost map from GitHub on import unless told to use its copy
    # (litellm/__init__.py, `model_cost = get_model_cost_map(url=...)`); LITELLM_OFFLINE_MODE
    # covers the other catalogs and tokenizers it fetches on its own
    # (litellm_core_utils/offline_mode.py). Neither touches the model calls.
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_OFFLINE_MODE": "true",
    # The OpenAI Agents SDK exports traces to api.openai.com unless tracing is disabled.
    "OPENAI_AGENTS_DISABLE_TRACING": "1",
    # LangChain / LangGraph send runs to LangSmith when tracing is switched on.
    "LANGCHAIN_TRACING_V2": "false",
    "LANGSMITH_TRACING": "false",
    # No OpenTelemetry export from any framework's instrumentation.
    "OTEL_SDK_DISABLED": "true",
}


def offline_environment() -> None:
    """Set `OFFLINE_ENV` in this process, keeping any value already set."""
    for name, value in OFFLINE_ENV.items():
        os.environ.setdefault(name, value)
