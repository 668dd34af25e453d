"""litellm on the harness loop contract: the loop a litellm user writes.

litellm is a client library, not an agent framework: one `litellm.completion` call speaks
every provider in the OpenAI Chat Completions shape, and the loop around it is the user's.
Each provider goes to its native API: `anthropic/<model>` (Messages), `gemini/<model>`
(generateContent) and `openai/responses/<model>` (litellm's bridge to the Responses API; the
`openai/` route alone would call Chat Completions, which is not the API under test).

Configurations:
- `defaults`: the tool loop as litellm's function-calling docs write it, repeated up to a
  max-steps count from the budget (R + 1 model calls): append the reply, run each tool call,
  append a `tool` message, call again. When the steps run out, the last reply's text is the
  answer, so the pending tools run and no closing call is made.
- `conforming`: the same loop written to the rules: tools one at a time, at the budget each
  pending request gets "Not executed" without running, then one closing call with the
  step-limit instruction in the system message and `tool_choice="none"` (tools still
  declared); on OpenAI `store=False` and the encrypted reasoning asked for (L10).

Measured on litellm 1.110.2 (tests/frameworks/test_litellm.py): `conforming` has no finding
on the six CI scenarios on any provider, JSON or stream; `defaults` at the budget runs the
pending tools (the pending write too) and shows the last interim text as the answer (L3, L11,
L12, L14, L15), and on OpenAI sends neither `store` nor `include` (L10). Not done here: Gemini
trimming by request size (L9). On Gemini litellm sends a saved call without a signature with
the placeholder signature `skip_thought_signature_validator` (base64), and a JSON tool result
as a parsed object in `functionResponse.response`.

Run one: `harness run --source scripted --loop examples.frameworks.litellm_agent:conforming`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from examples.frameworks.base import OFFLINE_ENV, Config, Framework
from harness.chat import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from harness.loop import LoopCall, LoopResult, ToolError
from harness.loop.closing import NOT_EXECUTED_RESULT, closing_system
from harness.loop.selection import select_context
from harness.scenario.model import Provider

# Before litellm is imported (in `_complete`), its two offline switches (base.OFFLINE_ENV
# says what each stops); only these two: the other frameworks' switches are theirs to set.
for _name in ("LITELLM_LOCAL_MODEL_COST_MAP", "LITELLM_OFFLINE_MODE"):
    os.environ.setdefault(_name, OFFLINE_ENV[_name])

ALL: tuple[Provider, ...] = ("anthropic", "openai", "gemini")
MODULE = "examples.frameworks.litellm_agent"
ROUTE = {"anthropic": "anthropic/", "openai": "openai/responses/", "gemini": "gemini/"}
# litellm's gemini/ route with a custom api_base posts to `{api_base}/models/{model}:...`
# (litellm/llms/vertex_ai/vertex_llm_base.py, _check_custom_proxy), while google-genai's base
# URL is the API root and adds the version itself: without this the emulator answers 404
# "no API at POST /models/<model>:generateContent".
GEMINI_API_VERSION = "/v1beta"
# litellm hides Gemini's thought signature in the tool call id it returns,
# `<id>__thought__<signature>` (litellm_core_utils/prompt_templates/factory.py,
# THOUGHT_SIGNATURE_SEPARATOR), and splits it off again when the id is sent back. The chat
# saves the provider's id; the signature is resent within the query (the active turn, where
# Gemini needs it) from the messages as litellm returned them.
SIGNATURE_IN_ID = "__thought__"

FRAMEWORK = Framework(
    name="litellm",
    packages=("litellm",),
    configs=(
        Config(
            name="defaults",
            loop=f"{MODULE}:defaults",
            summary="the docs' completion + tool-message loop, max steps = rounds + 1",
            providers=ALL,
        ),
        Config(
            name="conforming",
            loop=f"{MODULE}:conforming",
            summary="the same loop to the rules: 'Not executed' at the budget, one closing "
            "call with tool_choice='none', store=False + encrypted reasoning on OpenAI, "
            "Gemini requests over the size limit trimmed by whole old exchanges",
            providers=ALL,
        ),
    ),
    traps=(
        "Importing litellm fetches the model cost map from the network unless "
        "LITELLM_LOCAL_MODEL_COST_MAP=True (or LITELLM_OFFLINE_MODE=true, which also keeps its "
        "other catalogs and tokenizers local) is set before the import.",
        "The gemini/ route appends /models/<model>:generateContent straight to api_base, so a "
        "google-genai style base URL needs '/v1beta' added.",
        "The openai/ route calls Chat Completions; the Responses API needs the "
        "openai/responses/ model prefix.",
        "On Gemini litellm returns each tool call id as <id>__thought__<signature>: save the "
        "id before '__thought__' in the chat, or the saved chat holds ids the API never gave.",
        "litellm builds its own HTTP clients (httpx for sync calls, aiohttp for async ones): "
        "pass api_base/api_key on every call, a client of the app is not used.",
    ),
)


@dataclass(frozen=True, kw_only=True)
class Setup:
    rules: bool  # the loop rules' limit handling and OpenAI statelessness


def defaults(call: LoopCall) -> LoopResult:
    return _answer(call, Setup(rules=False))


def conforming(call: LoopCall) -> LoopResult:
    return _answer(call, Setup(rules=True))


def _answer(call: LoopCall, setup: Setup) -> LoopResult:
    asked = (*call.history, UserMessage(text=call.message))
    try:
        answer, steps = _loop(call, setup)
    except Exception as exc:  # what the app shows when the call fails
        return LoopResult(answer="", chat=asked, error=f"{type(exc).__name__}: {exc}")
    return LoopResult(answer=answer, chat=(*asked, *steps, AssistantMessage(text=answer)))


def _loop(call: LoopCall, setup: Setup) -> tuple[str, list[Message]]:
    messages = [{"role": "system", "content": call.system}, *_saved(call)]
    messages.append({"role": "user", "content": call.message})
    steps: list[Message] = []
    for number in range(call.max_rounds + 1):
        reply = _complete(call, setup, messages)
        calls = reply.get("tool_calls") or []
        if not calls:
            return reply.get("content") or "", steps
        messages.append(reply)
        spent = setup.rules and number == call.max_rounds  # L11: pending, not run
        steps.append(_turn(reply))
        for tool_call in calls:
            name, content = _result(call, tool_call, spent)
            messages.append({"role": "tool", "tool_call_id": tool_call["id"], "content": content})
            saved_id = provider_id(tool_call["id"])
            steps.append(ToolMessage(call_id=saved_id, name=name, content=content, is_error=spent))
    if not setup.rules:  # the steps ran out: the last reply is all the app has
        return reply.get("content") or "", steps
    messages[0] = {"role": "system", "content": closing_system(call.system)}  # L13
    closing = _complete(call, setup, messages, tool_choice="none")  # L12
    return closing.get("content") or "", steps


def _complete(call: LoopCall, setup: Setup, messages: list[Any], **extra: Any) -> dict[str, Any]:
    """One litellm call to the provider's native API; the reply message as a plain dict."""
    import litellm

    model, api_base = litellm_route(call)
    options: dict[str, Any] = {
        "model": model,
        "messages": _trimmed(call, setup, messages),
        "tools": [_tool(spec) for spec in call.tools],
        "api_base": api_base,
        "api_key": call.api_key,
        **extra,
    }
    if setup.rules and call.provider == "openai":
        options.update(store=False, include=["reasoning.encrypted_content"])  # L10
    if not call.stream:
        reply = litellm.completion(**options)
    else:
        chunks = list(litellm.completion(**options, stream=True))
        reply = litellm.stream_chunk_builder(chunks, messages=messages)
    return dict(reply.choices[0].message.model_dump(exclude_none=True))


# litellm's messages measure well under Gemini's wire request (its tools, config and part
# structure): trim as if they were this many times larger, erring on trimming more (L9 allows it).
WIRE_FACTOR = 2


def _trimmed(call: LoopCall, setup: Setup, messages: list[Any]) -> list[Any]:
    """L9: on Gemini, whole old exchanges dropped, oldest first, while the request would be
    over the size limit; the active turn (from the new user message on) is never cut."""
    limit = call.request_size_limit
    if not setup.rules or call.provider != "gemini" or limit is None:
        return messages
    system, rest = messages[:1], messages[1:]
    users = [i for i, m in enumerate(rest) if m.get("role") == "user"]
    tools = [_tool(spec) for spec in call.tools]
    for start in users:  # the last user message is the active turn's
        kept = [*system, *rest[start:]]
        if WIRE_FACTOR * len(json.dumps([kept, tools], ensure_ascii=False)) <= limit:
            return kept
    return [*system, *rest[users[-1] :]] if users else messages


def litellm_route(call: LoopCall) -> tuple[str, str]:
    """The litellm model name and api_base that reach this provider's native API at the
    harness endpoint (also used by the Agents SDK adapter's LitellmModel)."""
    api_base = call.base_url + (GEMINI_API_VERSION if call.provider == "gemini" else "")
    return ROUTE[call.provider] + call.model, api_base


def provider_id(call_id: str) -> str:
    """The provider's tool call id, without the signature litellm appends on Gemini."""
    return call_id.split(SIGNATURE_IN_ID, 1)[0]


def _tool(spec: Any) -> dict[str, Any]:
    """The ToolSpec in Chat Completions' shape, its JSON schema passed through."""
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": dict(spec.parameters),
        },
    }


def _result(call: LoopCall, tool_call: Mapping[str, Any], spent: bool) -> tuple[str, str]:
    function = tool_call["function"]
    name = function["name"]
    if spent:
        return name, NOT_EXECUTED_RESULT
    tool = next((t for t in call.tools if t.name == name), None)
    if tool is None:
        return name, f"Unknown tool: {name}"
    try:
        return name, tool(json.loads(function.get("arguments") or "{}"))
    except ToolError as exc:
        return name, str(exc)


def _turn(reply: Mapping[str, Any]) -> AssistantMessage:
    calls = tuple(
        ToolCall(
            id=provider_id(c["id"]),
            name=c["function"]["name"],
            arguments=json.loads(c["function"].get("arguments") or "{}"),
        )
        for c in reply.get("tool_calls") or []
    )
    return AssistantMessage(text=reply.get("content") or "", tool_calls=calls)


def _saved(call: LoopCall) -> Iterator[dict[str, Any]]:
    """The selected saved chat (L7) in Chat Completions' shape."""
    for message in select_context(call.history):
        if isinstance(message, UserMessage):
            yield {"role": "user", "content": message.text}
        elif isinstance(message, AssistantMessage):
            out: dict[str, Any] = {"role": "assistant", "content": message.text or None}
            if message.tool_calls:
                out["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                    }
                    for c in message.tool_calls
                ]
            yield out
        else:
            yield {"role": "tool", "tool_call_id": message.call_id, "content": message.content}
