"""Gemini `generateContent` / `streamGenerateContent` requests, and the parts of any model
turn, read into the neutral trace (responses: `gemini_response`). Keys come in camelCase or
snake_case (proto-JSON accepts both and google-genai mixes them, providers.md §4), so every
field is looked up both ways."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from harness.trace.common import (
    HttpRequest,
    Problems,
    RequestSpelling,
    Turn,
    TurnBuilder,
    compact,
    empty_request,
    items,
    obj,
    opt_str,
    size_bytes,
    text_of,
)
from harness.trace.model import (
    Opaque,
    ToolChoice,
    WireMessage,
    WireRequest,
    WireToolCall,
    WireToolResult,
)

ERROR_TYPE_KEYS = ("status", "code")  # {"error":{"code":400,"message","status"}}
EXTRA_KEYS = ("generationConfig", "cachedContent", "safetySettings")

MODEL_PATH = re.compile(r"/models/(?P<model>[^/:]+):(?P<action>\w+)")
# providers.md §4 [smoke]: with automatic function calling the SDK sends
# `x-goog-api-client: google-genai-sdk/<version>+afc …` (google/genai/_extra_utils.py
# `get_usage_header(…, usage='afc')`).
AFC_MARK = "+afc"
# functionCallingConfig.mode → neutral choice. VALIDATED lets the model answer or call
# (schema-checked), so it is `auto`; ANY forces a call.
MODES: dict[str, ToolChoice] = {
    "AUTO": "auto",
    "ANY": "required",
    "NONE": "none",
    "VALIDATED": "auto",
    "MODE_UNSPECIFIED": "unset",
}
# A part holds exactly one of these data fields ...
DATA_FIELDS = frozenset(
    {
        "text",
        "inlineData",
        "fileData",
        "functionCall",
        "functionResponse",
        "executableCode",
        "codeExecutionResult",
    }
)
# ... plus any of these; a part with only a thoughtSignature is a signature-only part.
MODIFIER_FIELDS = frozenset(
    {"thought", "thoughtSignature", "videoMetadata", "partMetadata", "mediaResolution"}
)


@cache
def _snake(camel: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", camel).lower()


@cache
def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.title() for w in rest)


# Equivalent spellings of one request, for the replay's drift check (`RequestSpelling`).
# providers.md §4: keys come in camelCase or snake_case (proto JSON takes both) and
# `"generationConfig":{}` is always sent; function calling mode AUTO is the default (NONE,
# ANY and VALIDATED are the switches); `systemInstruction`'s role is not read.
REQUEST_SPELLING = RequestSpelling(
    defaults={
        "toolConfig.functionCallingConfig.mode": "AUTO",
        "toolConfig.functionCallingConfig": {},
        "toolConfig": {},
        "generationConfig": {},
        "contents.parts.thought": False,
    },
    not_compared=frozenset(
        {"systemInstruction.role", "labels"}
        | {f"generationConfig.{k}" for k in ("temperature", "topP", "topK", "maxOutputTokens")}
        | {"generationConfig.seed"}
    ),
    free_form=frozenset(
        {"contents.parts.functionCall.args", "contents.parts.functionResponse.response"}
        | {f"tools.functionDeclarations.{k}" for k in ("parameters", "parametersJsonSchema")}
        | {f"tools.functionDeclarations.{k}" for k in ("response", "responseJsonSchema")}
        | {"generationConfig.responseSchema", "generationConfig.responseJsonSchema"}
    ),
    key_form=_camel,
)


def field_of(data: Mapping[str, Any] | None, camel: str) -> Any:
    """`data[camel]`, else `data[snake_case(camel)]`."""
    if data is None:
        return None
    value = data.get(camel)
    return data.get(_snake(camel)) if value is None else value


def signature_bytes(token: str | None) -> bytes | None:
    """A thoughtSignature's bytes, whichever base64 alphabet spells it: the API sends the
    standard one and google-genai (and pydantic-ai) send it back URL-safe (realwire README),
    so tokens are equal when their bytes are. None when it is not base64."""
    if token is None:
        return None
    try:
        return base64.b64decode(token.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None


# ---- request ---------------------------------------------------------------------------


def request_from_gemini(request: HttpRequest, problems: Problems) -> WireRequest:
    body = obj(request.body)
    if body is None:
        return empty_request("gemini", request.body, problems)
    route = MODEL_PATH.search(request.url)
    choice, name = _tool_choice(field_of(body, "toolConfig"), problems)
    return WireRequest(
        api="gemini",
        model=route["model"] if route else text_of(body.get("model")),
        stream=route is not None and route["action"] == "streamGenerateContent",
        declared_tools=_tool_names(body.get("tools"), problems),
        tool_choice=choice,
        tool_choice_name=name,
        system=_system(field_of(body, "systemInstruction"), problems),
        messages=tuple(_contents(body.get("contents"), problems)),
        automatic_function_calling=AFC_MARK in request.headers.get("x-goog-api-client", ""),
        size_bytes=size_bytes(body),
        extra={k: field_of(body, k) for k in EXTRA_KEYS if field_of(body, k) is not None},
    )


def _tool_names(tools: Any, problems: Problems) -> tuple[str, ...]:
    """Function declarations by name; built-in tools (googleSearch, codeExecution, …) by
    their key."""
    names: list[str] = []
    for i, tool in enumerate(items(tools)):
        data = obj(tool) or {}
        for key, value in data.items():
            if _camel(key) != "functionDeclarations":
                names.append(_camel(key))
                continue
            for k, declaration in enumerate(items(value)):
                name = opt_str((obj(declaration) or {}).get("name"))
                if name is None:
                    problems.add("function declaration without a name", f"tools[{i}].{key}[{k}]")
                else:
                    names.append(name)
    return tuple(names)


def _tool_choice(config: Any, problems: Problems) -> tuple[ToolChoice, str | None]:
    """`toolConfig.functionCallingConfig.mode` (+ `allowedFunctionNames`); ANY limited to a
    single allowed name forces that function, so it reads as `named`."""
    calling = obj(field_of(obj(config), "functionCallingConfig"))
    if calling is None:
        return "unset", None
    mode = text_of(calling.get("mode")).upper()
    choice = MODES.get(mode)
    if choice is None:
        problems.add(f"unknown functionCallingConfig {compact(calling)}", "toolConfig")
        return "unset", None
    allowed = [n for n in items(field_of(calling, "allowedFunctionNames")) if isinstance(n, str)]
    if choice == "required" and len(allowed) == 1:
        return "named", allowed[0]
    return choice, None


def _system(raw: Any, problems: Problems) -> str:
    if raw is None or isinstance(raw, str):
        return raw or ""
    parts = items(raw) if isinstance(raw, list) else items(field_of(obj(raw), "parts"))
    if not parts and not isinstance(raw, dict):
        problems.add("systemInstruction is not a Content", "systemInstruction")
    return "\n".join(text_of((obj(p) or {}).get("text")) for p in parts)


def _contents(raw: Any, problems: Problems) -> Iterator[WireMessage]:
    if not isinstance(raw, list):
        problems.add("contents is not a list", "contents")
        return
    for i, content in enumerate(raw):
        path = f"contents[{i}]"
        data = obj(content) or {}
        role = data.get("role", "user")  # the API reads a missing role as the user's
        parts = data.get("parts")
        if role == "model":
            turn = turn_from_gemini(parts, f"{path}.parts", problems)
            yield WireMessage(
                role="model",
                text=turn.text,
                calls=turn.calls,
                opaque=turn.opaque,
                path=path,
                raw=content,
            )
        elif role in ("user", "function"):  # `function`: the older role for responses
            yield _user_content(parts, path, problems, content)
        else:
            problems.add(f"content role {role!r} is neither user nor model", path)


def _user_content(parts: Any, path: str, problems: Problems, raw: Any) -> WireMessage:
    texts: list[str] = []
    results: list[WireToolResult] = []
    other_seen, results_first = False, True
    for k, part in enumerate(items(parts)):
        where = f"{path}.parts[{k}]"
        data, kind = _part_kind(part, where, problems)
        if kind == "functionResponse":
            results.append(_result(obj(field_of(data, "functionResponse")) or {}, where))
            results_first = results_first and not other_seen
            continue
        other_seen = True
        if kind == "text":
            texts.append(text_of(data.get("text")))
        elif kind == "functionCall":
            problems.add("functionCall part in a user content", where)
    return WireMessage(
        role="tool" if results else "user",
        text="".join(texts),
        results=tuple(results),
        results_first=results_first,
        path=path,
        raw=raw,
    )


def _result(response: dict[str, Any], path: str) -> WireToolResult:
    """`response` must be an object; clients wrap a plain result as `{"output": …}`,
    `{"result": …}` (the SDK's AFC) or `{"return_value": …}` (pydantic-ai), an error as
    `{"error": …}` — a single such string is the result's text."""
    body = obj(response.get("response"))
    values = list(body.values()) if body else []
    single = values[0] if len(values) == 1 and isinstance(values[0], str) else None
    return WireToolResult(
        call_id=opt_str(response.get("id")),
        name=opt_str(response.get("name")),
        content=single if single is not None else compact(response.get("response")),
        is_error=body is not None and "error" in body,
        path=path,
    )


def _part_kind(part: Any, path: str, problems: Problems) -> tuple[dict[str, Any], str | None]:
    """The part and its data field (camelCase), None for a signature-only part."""
    data = obj(part)
    if data is None:
        problems.add("part is not an object", path)
        return {}, None
    keys = [_camel(k) for k in data]
    unknown = [k for k in keys if k not in DATA_FIELDS and k not in MODIFIER_FIELDS]
    if unknown:
        problems.add(f"unknown part field(s) {', '.join(unknown)}", path)
    kinds = [k for k in keys if k in DATA_FIELDS]
    if len(kinds) > 1:
        problems.add(f"part holds several data fields: {', '.join(kinds)}", path)
    return data, kinds[0] if kinds else None


def turn_from_gemini(parts: Any, path: str, problems: Problems) -> Turn:
    """A model content's parts: text, thoughts, function calls; every thoughtSignature is an
    opaque item (and also rides on its call)."""
    if not isinstance(parts, list):
        problems.add("parts is not a list", path)
    turn = TurnBuilder()
    for k, part in enumerate(items(parts)):
        where = f"{path}[{k}]"
        data, kind = _part_kind(part, where, problems)
        signature = opt_str(field_of(data, "thoughtSignature"))
        thought = data.get("thought") is True
        if kind == "functionCall":
            call = obj(field_of(data, "functionCall")) or {}
            turn.calls.append(
                WireToolCall(
                    id=opt_str(call.get("id")),
                    name=text_of(call.get("name")),
                    arguments=call.get("args", {}),
                    path=where,
                    signature=signature,
                )
            )
        elif kind == "text" and not thought:
            turn.texts.append(text_of(data.get("text")))
        elif kind == "functionResponse":
            problems.add("functionResponse part in a model content", where)
        if thought:
            text = opt_str(data.get("text"))
            turn.opaque.append(
                Opaque(kind="thought", id=None, token=signature, text=text, path=where, raw=part)
            )
        elif signature is not None:
            turn.opaque.append(
                Opaque(
                    kind="thought_signature",
                    id=None,
                    token=signature,
                    text=None,
                    path=where,
                    raw=part,
                )
            )
    return turn.turn()
