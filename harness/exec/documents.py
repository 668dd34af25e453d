"""The query and answer documents of the loop contract: built from a `LoopCall`, read back into
a `LoopResult`, and validated against the JSON Schemas shipped beside this module (Draft
2020-12), both directions."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator

from harness.chat import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from harness.loop.contract import LoopCall, LoopResult

CONTRACT = "harness.loop/1"


@cache
def validator(name: str) -> Draft202012Validator:
    """The validator of `query` or `answer` (schemas/NAME.json)."""
    text = resources.files("harness.exec").joinpath(f"schemas/{name}.json").read_text("utf-8")
    schema = json.loads(text)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def problems(name: str, document: object) -> list[str]:
    """Where `document` breaks schema NAME, one line each (`$.chat[2]: ...`), first by path."""
    errors = sorted(validator(name).iter_errors(document), key=lambda e: list(map(str, e.path)))
    return [f"{e.json_path}: {_best(e).message}" for e in errors]


def _best(error: Any) -> Any:
    """For a `oneOf` over message kinds, the reason from the branch its `role` picked."""
    from jsonschema.exceptions import best_match

    return best_match(error.context) if error.context else error


def query_document(call: LoopCall, *, tools_url: str, mcp_url: str) -> dict[str, Any]:
    return {
        "contract": CONTRACT,
        "provider": call.provider,
        "model": call.model,
        "base_url": call.base_url,
        "api_key": call.api_key,
        "system": call.system,
        "history": [message_to_json(m) for m in call.history],
        "message": call.message,
        "tools": [
            {
                "name": t.name,
                "description": t.description,
                "parameters": _plain(t.parameters),
                "effect": t.effect,
            }
            for t in call.tools
        ],
        "max_rounds": call.max_rounds,
        "stream": call.stream,
        "request_size_limit": call.request_size_limit,
        "tools_url": tools_url,
        "mcp_url": mcp_url,
    }


def result_from_answer(document: Mapping[str, Any]) -> LoopResult:
    """A validated answer document as the loop contract's result."""
    return LoopResult(
        answer=document["answer"],
        chat=tuple(message_from_json(m) for m in document["chat"]),
        error=document["error"],
    )


def answer_document(result: LoopResult) -> dict[str, Any]:
    """The other direction, for programs written in Python (and the tests' exec wrapper)."""
    return {
        "answer": result.answer,
        "chat": [message_to_json(m) for m in result.chat],
        "error": result.error,
    }


def message_to_json(message: Message) -> dict[str, Any]:
    match message:
        case UserMessage():
            return {"role": "user", "text": message.text}
        case AssistantMessage():
            return {
                "role": "assistant",
                "text": message.text,
                "tool_calls": [
                    {"id": c.id, "name": c.name, "arguments": _plain(c.arguments)}
                    for c in message.tool_calls
                ],
            }
        case ToolMessage():
            return {
                "role": "tool",
                "call_id": message.call_id,
                "name": message.name,
                "content": message.content,
                "is_error": message.is_error,
            }
    raise TypeError(f"not a chat message: {type(message).__name__}")


def message_from_json(item: Mapping[str, Any]) -> Message:
    """A message already validated against the schema's `message`."""
    role = item["role"]
    if role == "user":
        return UserMessage(text=item["text"])
    if role == "assistant":
        calls = tuple(
            ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"])
            for c in item["tool_calls"]
        )
        return AssistantMessage(text=item["text"], tool_calls=calls)
    if role == "tool":
        return ToolMessage(
            call_id=item["call_id"],
            name=item["name"],
            content=item["content"],
            is_error=item["is_error"],
        )
    raise ValueError(f"unknown message role {role!r}")


def messages_from_json(items: Sequence[Mapping[str, Any]]) -> tuple[Message, ...]:
    return tuple(message_from_json(m) for m in items)


def _plain(value: Any) -> Any:
    """Mappings and sequences as JSON's dicts and lists (scenario values may be read-only)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
