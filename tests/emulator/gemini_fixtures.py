"""Request builders shared by the Gemini emulator tests: contexts, contents, calls signed as
the emulator signs them, and whole requests."""

from __future__ import annotations

import copy
from typing import Any

from harness.emulator.gemini_render import signature_for
from harness.emulator.tokens import Minter
from harness.emulator.wire import Context
from harness.scenario.model import ScriptOptions

Body = dict[str, Any]
FLASH = "gemini-2.5-flash"
GEMINI3 = "gemini-3-flash-preview"
ASK = "Weather in Paris and Oslo?"


def ctx_for(
    model: str = FLASH,
    *,
    stream: bool = False,
    alt: str | None = None,
    ids: bool = True,
    signatures: bool = True,
) -> Context:
    return Context(
        model=model,
        stream=stream,
        options=ScriptOptions(gemini_call_ids=ids, gemini_thought_signatures=signatures),
        minter=Minter("gemini_unit/gemini"),
        query={"alt": alt} if alt else {},
    )


def user(text: str = ASK) -> Body:
    return {"role": "user", "parts": [{"text": text}]}


def call(city: str, call_id: str | None = None) -> Body:
    fc: Body = {"name": "get_weather", "args": {"city": city}}
    if call_id:
        fc["id"] = call_id
    return {"functionCall": fc}


def model_calls(*parts: Body, model: str = FLASH, sign: bool = True) -> Body:
    """A model turn; the first call part signed as the emulator signs it for `model`."""
    parts_ = [copy.deepcopy(p) for p in parts]
    if sign:
        first = next(p for p in parts_ if "functionCall" in p)
        first["thoughtSignature"] = signature_for(ctx_for(model), first)
    return {"role": "model", "parts": parts_}


def answers(*ids: str | None, name: str = "get_weather") -> Body:
    parts = []
    for call_id in ids:
        fr: Body = {"name": name, "response": {"output": "sunny"}}
        if call_id:
            fr["id"] = call_id
        parts.append({"functionResponse": fr})
    return {"role": "user", "parts": parts}


TOOLS = [
    {
        "functionDeclarations": [
            {
                "name": "get_weather",
                "description": "Weather for a city.",
                "parameters_json_schema": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                },
            }
        ]
    }
]


def request(*contents: Body, tools: Any = TOOLS, mode: str | None = None) -> Body:
    body: Body = {"contents": list(contents), "generationConfig": {}}
    if tools is not None:
        body["tools"] = tools
    if mode is not None:
        body["toolConfig"] = {"functionCallingConfig": {"mode": mode}}
    return body


def round_two(model: str = FLASH, *, ids: tuple[str, str] = ("a1", "b2")) -> Body:
    """Round 2 of a parallel call, as a correct loop sends it."""
    return request(
        user(),
        model_calls(call("Paris", ids[0]), call("Oslo", ids[1]), model=model),
        answers(*ids),
    )
