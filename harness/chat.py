"""The neutral chat: what a chat app saves, independent of any provider's wire format.

Saved histories in scenarios, the loop contract's input and output, and the reference loop all
speak these types. Provider modules convert them to and from their wire shapes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """One tool request of a model turn. `id` is the provider's id (or one the loop made up)."""

    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class UserMessage:
    text: str


@dataclass(frozen=True, kw_only=True)
class AssistantMessage:
    """A model turn: optional text, then zero or more tool requests (several = parallel)."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ToolMessage:
    """The result of one tool request, tied to it by `call_id`."""

    call_id: str
    name: str
    content: str
    is_error: bool = False


Message: TypeAlias = UserMessage | AssistantMessage | ToolMessage
