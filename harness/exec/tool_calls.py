"""Running one of the cell's tools for a program outside the process."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.loop.contract import ToolError, ToolSpec


def run_tool(spec: ToolSpec, arguments: Mapping[str, Any]) -> tuple[str, bool]:
    """The scenario's result as text, and whether it is the tool's failure (`ToolError`): the
    program sends that text back as an error result. The call is in the cell's tool log."""
    try:
        return spec(arguments), False
    except ToolError as exc:
        return str(exc), True
