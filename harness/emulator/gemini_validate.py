"""What the Gemini API rejects in a `generateContent` request, in the order it finds it: the
transcoder's errors (unknown names, invalid values), then `* GenerateContentRequest…` field
checks, then roles and tool config, then the turn structure of function calls (G1, G2, G4),
then thought signatures (G3 and altered tokens).

Every message is the API's own text (providers.md §5 and the sources cited beside each
constant); the ones no public source quotes whole are marked unconfirmed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from harness.emulator import gemini_schema as schema
from harness.emulator.gemini_json import syntax_error
from harness.emulator.tokens import Verdict, decode_b64, verify
from harness.emulator.wire import ApiError, Context

STATUS = "INVALID_ARGUMENT"

# Transcoder: a body whose top level is not an object (a public emulator of Google's front
# end and several real reports: `Invalid JSON payload received. Unknown name "": Root element
# must be a message.`).
ROOT_NOT_MESSAGE = 'Invalid JSON payload received. Unknown name "": Root element must be a message.'

# Field checks come as `* GenerateContentRequest.<path>: <text>\n`, one line per problem.
# missing contents: BerriAI/litellm#8467 (`* GenerateContentRequest.contents: contents is not
# specified`); empty parts and the data oneof: public reports quoting
# `* GenerateContentRequest.contents[X].parts: contents.parts must not be empty.` and
# `…parts[0].data: required oneof field 'data' must have one initialized field` (the latter
# boldsoftware/sketch#68, with the trailing `\n`); response name: `…function_response.name:
# Name cannot be empty.`; function names: google-gemini/gemini-cli#9535 (API key, 2025-09).
FIELD_CHECK = "* GenerateContentRequest.{path}: {text}\n"
MISSING_CONTENTS = "contents is not specified"
EMPTY_PARTS = "contents.parts must not be empty."
PART_WITHOUT_DATA = "required oneof field 'data' must have one initialized field"
RESPONSE_NAME_EMPTY = "Name cannot be empty."
INVALID_FUNCTION_NAME = (
    "Invalid function name. Must start with a letter or an underscore. Must be alphameric "
    "(a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum "
    "length of 64."
)
_FUNCTION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$")

# Roles other than user/model (a missing role defaults to user on this API): many public
# reports, e.g. `{"code":400,"message":"Please use a valid role: user, model.",…}`.
INVALID_ROLE = "Please use a valid role: user, model."

# Tool config without any declaration (kelivo#317, claude-code-router#1207; seen with mode
# AUTO; the text says "is set", so every mode is treated alike — unconfirmed for NONE).
CONFIG_WITHOUT_DECLARATIONS = "Function calling config is set without function_declarations."

# allowedFunctionNames naming an undeclared function: no public source quotes the API's text;
# this follows its field-check form. UNCONFIRMED.
UNDECLARED_ALLOWED_NAME = (
    "function_calling_config.allowed_function_names contains a function name that is not "
    "declared in tools: {name}"
)

# G1 and G2 (providers.md §5; gemini-cli#4217, #16415, #11814 — the latter for a history that
# starts with a function call; langchain#27799).
G1 = (
    "Please ensure that the number of function response parts is equal to the number of "
    "function call parts of the function call turn."
)
G2_CALL = (
    "Please ensure that function call turn comes immediately after a user turn or after a "
    "function response turn."
)
G2_RESPONSE = (
    "Please ensure that function response turn comes immediately after a function call turn."
)

# G4: only the fragment `functionResponse.id does not match functionCall.id` is public, and only
# in a proxy's own validator (router-for-me/CLIProxyAPI#5199); the sentence around it is ours.
# UNCONFIRMED, wording and whether the API checks it at all.
G4 = (
    "functionResponse.id does not match functionCall.id: the function response part at "
    'contents[{n}].parts[{k}] has id "{got}", but the function call turn at contents[{m}] has '
    "{ids}."
)

# G3 (providers.md §5; manthanabc/paws#103, csells/dartantic#86). `position` is read here as
# the 1-based index of the model content in `contents` (every public example, 2/10/32/136, is
# even, as model turns are under user/model alternation). UNCONFIRMED reading.
G3 = (
    "Function call is missing a thought_signature in functionCall parts. This is required for "
    "tools to work correctly, and missing thought_signature may lead to degraded model "
    "performance. Additional data, function call `default_api:{name}` , position {position}. "
    "Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)

# A signature that does not verify: "Corrupted thought signature." with INVALID_ARGUMENT
# (google-gemini/gemini-cli#13467; AI Studio answering a Vertex-minted signature so).
CORRUPTED_SIGNATURE = "Corrupted thought signature."
SIGNATURE_KIND = "gemini-thought-signature"


def validate(body: Any, ctx: Context) -> ApiError | None:
    if body is None:
        body = {}  # an empty body reads as an empty message
    if not isinstance(body, dict):
        return _error(ROOT_NOT_MESSAGE, "root_not_message")
    for check in (_non_finite, _transcode, _field_checks, _roles, _tool_config, _turns):
        problem = check(body, ctx)
        if problem is not None:
            return problem
    return _signatures(body, ctx)


def _error(message: str, rule: str) -> ApiError:
    return ApiError(status=400, message=message, kind=STATUS, rule=rule)


# --- reading the body -------------------------------------------------------------------------


def as_list(value: Any) -> list[Any]:
    """A repeated field: a list, or a single value (proto-JSON takes both)."""
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def contents_of(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [c for c in as_list(schema.field_value(body, "contents")) if isinstance(c, dict)]


def parts_of(content: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [p for p in as_list(content.get("parts")) if isinstance(p, dict)]


def role_of(content: Mapping[str, Any]) -> str:
    return str(content.get("role") or "user")


def call_of(part: Mapping[str, Any]) -> dict[str, Any] | None:
    value = schema.field_value(part, "function_call")
    return value if isinstance(value, dict) else None


def response_of(part: Mapping[str, Any]) -> dict[str, Any] | None:
    value = schema.field_value(part, "function_response")
    return value if isinstance(value, dict) else None


def signature_of(part: Mapping[str, Any]) -> str:
    value = schema.field_value(part, "thought_signature")
    return value if isinstance(value, str) else ""


def calls_in(content: Mapping[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    return [(k, c) for k, p in enumerate(parts_of(content)) if (c := call_of(p)) is not None]


def responses_in(content: Mapping[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    found = ((k, response_of(p)) for k, p in enumerate(parts_of(content)))
    return [(k, r) for k, r in found if r is not None]


def is_call_turn(content: Mapping[str, Any]) -> bool:
    return role_of(content) == "model" and bool(calls_in(content))


def is_response_turn(content: Mapping[str, Any]) -> bool:
    return role_of(content) == "user" and bool(responses_in(content))


def user_text_index(contents: Sequence[Mapping[str, Any]]) -> int | None:
    """The last genuine user message: text parts and no function responses."""
    for index in range(len(contents) - 1, -1, -1):
        content = contents[index]
        parts = parts_of(content)
        has_text = any(isinstance(p.get("text"), str) for p in parts)
        if role_of(content) == "user" and has_text and not responses_in(content):
            return index
    return None


def declared_names(body: Mapping[str, Any]) -> list[str]:
    names = []
    for tool in as_list(schema.field_value(body, "tools")):
        if isinstance(tool, dict):
            for decl in as_list(schema.field_value(tool, "function_declarations")):
                if isinstance(decl, dict):
                    names.append(str(decl.get("name") or ""))
    return names


def calling_config(body: Mapping[str, Any]) -> dict[str, Any] | None:
    config = schema.field_value(body, "tool_config")
    if not isinstance(config, dict):
        return None
    value = schema.field_value(config, "function_calling_config")
    return value if isinstance(value, dict) else None


def calling_mode(body: Mapping[str, Any]) -> str:
    config = calling_config(body) or {}
    mode = config.get("mode")
    return mode.upper() if isinstance(mode, str) else ""


# --- the checks, in the API's order --------------------------------------------------------


def _non_finite(body: Mapping[str, Any], ctx: Context) -> ApiError | None:
    """Python's JSON reader takes NaN and Infinity; the API's does not (`Unexpected token.`)."""
    if not _has_non_finite(body):
        return None
    message = syntax_error(json.dumps(body, ensure_ascii=False).encode())
    return _error(message or "Invalid JSON payload received. Unexpected token.", "malformed_json")


def _has_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_non_finite(v) for v in value)
    return False


def _transcode(body: Mapping[str, Any], ctx: Context) -> ApiError | None:
    found = schema.transcode_errors(body)
    if not found:
        return None
    rule = "unknown_field" if "Unknown name" in found[0].description else "invalid_value"
    if "thought_signature' (TYPE_BYTES)" in found[0].description:
        rule = "signature_not_base64"
    return _error("\n".join(v.description for v in found), rule)


def _field_checks(body: Mapping[str, Any], ctx: Context) -> ApiError | None:
    found = list(_field_problems(body))
    if not found:
        return None
    message = "".join(FIELD_CHECK.format(path=path, text=text) for path, text, _ in found)
    return _error(message, found[0][2])


def _field_problems(body: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
    contents = contents_of(body)
    if not contents:
        yield "contents", MISSING_CONTENTS, "missing_field"
    for i, content in enumerate(contents):
        parts = parts_of(content)
        if not parts:
            yield f"contents[{i}].parts", EMPTY_PARTS, "empty_parts"
        for k, part in enumerate(parts):
            if not any(schema.field_value(part, name) is not None for name in schema.DATA_ONEOF):
                yield f"contents[{i}].parts[{k}].data", PART_WITHOUT_DATA, "part_without_data"
            response = response_of(part)
            if response is not None and not response.get("name"):
                path = f"contents[{i}].parts[{k}].function_response.name"
                yield path, RESPONSE_NAME_EMPTY, "function_response_name"
    yield from _declaration_problems(body)


def _declaration_problems(body: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
    for t, tool in enumerate(as_list(schema.field_value(body, "tools"))):
        if not isinstance(tool, dict):
            continue
        for d, decl in enumerate(as_list(schema.field_value(tool, "function_declarations"))):
            name = decl.get("name") if isinstance(decl, dict) else None
            if not isinstance(name, str) or not _FUNCTION_NAME.match(name):
                path = f"tools[{t}].function_declarations[{d}].name"
                yield path, INVALID_FUNCTION_NAME, "function_name"


def _roles(body: Mapping[str, Any], ctx: Context) -> ApiError | None:
    for content in contents_of(body):
        if role_of(content) not in ("user", "model"):
            return _error(INVALID_ROLE, "role")
    return None


def _tool_config(body: Mapping[str, Any], ctx: Context) -> ApiError | None:
    config = calling_config(body)
    if config is None:
        return None
    declared = declared_names(body)
    if not declared:
        return _error(CONFIG_WITHOUT_DECLARATIONS, "function_calling_config_without_declarations")
    for name in as_list(schema.field_value(config, "allowed_function_names")):
        if name not in declared:
            text = UNDECLARED_ALLOWED_NAME.format(name=name)
            return _error(
                FIELD_CHECK.format(path="tool_config", text=text), "tool_choice_unknown_tool"
            )
    return None


def _turns(body: Mapping[str, Any], ctx: Context) -> ApiError | None:
    """G1, G2 and G4, in content order."""
    contents = contents_of(body)
    for i, content in enumerate(contents):
        if is_response_turn(content) and (i == 0 or not is_call_turn(contents[i - 1])):
            return _error(G2_RESPONSE, "G2")
        if not is_call_turn(content):
            continue
        if i == 0 or role_of(contents[i - 1]) != "user":
            return _error(G2_CALL, "G2")
        if i + 1 < len(contents):
            problem = _answers(contents, i)
            if problem is not None:
                return problem
    return None


def _answers(contents: Sequence[Mapping[str, Any]], i: int) -> ApiError | None:
    """The content after the call turn at `i` answers each call once (G1), by id (G4)."""
    calls = calls_in(contents[i])
    answer = contents[i + 1]
    responses = responses_in(answer) if is_response_turn(answer) else []
    if len(responses) != len(calls):
        return _error(G1, "G1")
    ids = [str(call["id"]) for _, call in calls if call.get("id")]
    if not ids:
        return None  # no ids from the model: pairing is by position and name
    for k, response in responses:
        got = response.get("id")
        if got and got not in ids:
            shown = ", ".join(f'"{x}"' for x in ids)
            text = G4.format(n=i + 1, k=k, got=got, m=i, ids=shown)
            return _error(text, "G4")
    return None


def _signatures(body: Mapping[str, Any], ctx: Context) -> ApiError | None:
    contents = contents_of(body)
    return _missing_signature(contents, ctx) or _altered_signature(contents, ctx.model)


def _missing_signature(contents: Sequence[Mapping[str, Any]], ctx: Context) -> ApiError | None:
    """G3: on Gemini 3, each model step of the current turn (after the last user text) signs
    its first function call. Not when the script plays a model that does not sign."""
    if not (ctx.options.gemini_thought_signatures and ctx.model.startswith("gemini-3")):
        return None
    start = user_text_index(contents)
    for index in range(0 if start is None else start + 1, len(contents)):
        missing = _unsigned_call(contents[index])
        if missing is not None:
            return _error(G3.format(name=missing, position=index + 1), "G3")
    return None


def _altered_signature(contents: Sequence[Mapping[str, Any]], model: str) -> ApiError | None:
    """A signature we minted that no longer matches its part (changed, moved, other model).
    Signatures we did not mint (a real API's, the documented dummies) pass."""
    for content in contents:
        for part in parts_of(content):
            raw = signature_bytes(signature_of(part))
            if raw is None:
                continue
            if verify(SIGNATURE_KIND, bound_content(model, part), raw) is Verdict.TAMPERED:
                return _error(CORRUPTED_SIGNATURE, "signature_tampered")
    return None


def signature_bytes(text: str) -> bytes | None:
    """The bytes of a signature sent in either alphabet (the SDK sends URL-safe base64 back,
    the API sends standard). Mapped to the standard alphabet first: a lenient standard decoder
    drops `-` and `_` silently and, when their count is a multiple of four, returns wrong bytes
    instead of failing over to the URL-safe one."""
    if not text:
        return None
    return decode_b64(text.replace("-", "+").replace("_", "/"))


def _unsigned_call(content: Mapping[str, Any]) -> str | None:
    """The name of the first function call of a model step, if that part has no signature."""
    if role_of(content) != "model":
        return None
    for part in parts_of(content):
        call = call_of(part)
        if call is not None:
            return None if signature_of(part) else str(call.get("name") or "")
    return None


def bound_content(model: str, part: Mapping[str, Any]) -> str:
    """What a signature we mint is bound to: the model, and the call (name and arguments) or
    the text of the part that carries it."""
    call = call_of(part)
    if call is None:
        return f"{model}\x1ftext\x1f{part.get('text') or ''}"
    args = json.dumps(
        call.get("args") or {}, sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    return f"{model}\x1fcall\x1f{call.get('name') or ''}\x1f{args}"
