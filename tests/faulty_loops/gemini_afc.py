"""Gemini: the SDK's automatic function calling left on (gemini.no_afc).

The tools are handed to google-genai as Python callables, the usual quick start: the SDK then
runs them itself and sends its own follow-up requests, so the loop no longer sees the rounds
or keeps the budget. The callables are built from the contract's tool specs (signature and
docstring, which the SDK reads to declare them)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from google.genai import types

from harness.loop.adapters import Request
from harness.loop.adapters import gemini as gemini_adapter
from harness.loop.contract import ToolSpec
from tests.faulty_loops.variants import reference_with

JSON_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}

_config_for = gemini_adapter.config_for


def as_callable(spec: ToolSpec) -> Callable[..., str]:
    def tool(**arguments: Any) -> str:
        return spec(arguments)

    properties = dict(spec.parameters.get("properties", {}))
    tool.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=JSON_TYPES.get(schema.get("type"), str),
            )
            for name, schema in properties.items()
        ],
        return_annotation=str,
    )
    tool.__name__ = tool.__qualname__ = spec.name
    tool.__doc__ = spec.description
    return tool


def _with_callables(request: Request[types.Content]) -> types.GenerateContentConfig:
    config = _config_for(request)
    if not request.tools:
        return config
    return config.model_copy(
        update={
            "tools": [as_callable(spec) for spec in request.tools],
            "automatic_function_calling": None,
        }
    )


gemini_sdk_runs_tools = reference_with((gemini_adapter, "config_for", _with_callables))


# ---- several candidates asked for (gemini.one_candidate) -------------------------------------


def _two_candidates(request: Request[types.Content]) -> types.GenerateContentConfig:
    return _config_for(request).model_copy(update={"candidate_count": 2})


gemini_two_candidates = reference_with((gemini_adapter, "config_for", _two_candidates))
