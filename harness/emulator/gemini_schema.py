"""The proto messages behind a Gemini `GenerateContentRequest`, and the errors Google's JSON
transcoder gives while reading a body into them (before any semantic check runs).

Proto-JSON accepts a field under its proto name (`function_call`) or its JSON name
(`functionCall`), even mixed in one body (the SDK sends `parameters_json_schema` beside
`functionDeclarations`; providers.md §4). `null` leaves a field unset. A repeated field also
takes a single value. Enum names are matched without regard to case (realwire: lower-case
`"type": "object"` in `parameters` was accepted).

Only the messages a tool loop exercises are checked field by field; the rest (generation config
internals, safety settings, built-in tools, media parts) are taken as they come, since
rejecting a field the real API knows would be worse than missing an unknown one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

# The type URLs in `Invalid value` messages name the `v1main` package even on the v1beta path
# (a 2025 report: `Invalid value at 'contents[0].parts[0].media_resolution'
# (type.googleapis.com/google.ai.generativelanguage.v1main.MediaResolution), "…"`).
TYPE_URL = "type.googleapis.com/google.ai.generativelanguage.v1main."
STRUCT_URL = "type.googleapis.com/google.protobuf.Struct"
INVALID_JSON = "Invalid JSON payload received. "
# A Part holds one member of its `data` oneof. The transcoder's text for a second one, as an
# emulator that mirrors Google's front end quotes it: `Invalid value (oneof), oneof field
# 'target' is already set. Cannot set '…'` (there for another API's oneof; unconfirmed here).
DATA_ONEOF = frozenset(
    [
        "text",
        "inline_data",
        "function_call",
        "function_response",
        "file_data",
        "executable_code",
        "code_execution_result",
    ]
)
ONEOF_SET = "Invalid value (oneof), oneof field 'data' is already set. Cannot set '{key}'"
NOT_REPEATING = "Proto field is not repeating, cannot start list."
_BASE64 = re.compile(r"^[A-Za-z0-9+/_-]*={0,2}$")


@dataclass(frozen=True, kw_only=True)
class Field:
    """`kind`: a message name, or `string`, `bytes`, `enum`, `struct`, `scalar` (number or
    bool, not checked), `any` (taken as it comes)."""

    kind: str
    repeated: bool = False
    map: bool = False  # map<string, kind>
    enum: str = ""  # enum type name and its values, for `kind="enum"`
    values: frozenset[str] = frozenset()


@dataclass(frozen=True, kw_only=True)
class Violation:
    """One transcoder error: `field` is the path (absent for a top-level unknown name)."""

    field: str | None
    description: str


def _f(kind: str, **kw: Any) -> Field:
    return Field(kind=kind, **kw)


_ANY, _STR, _NUM = _f("any"), _f("string"), _f("scalar")
_MODES = frozenset({"MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED"})
_TYPES = frozenset(
    {"TYPE_UNSPECIFIED", "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"}
)

# Field names per message (proto names), from the API reference and the fields google-genai
# 3.6.1 sends to the Developer API (`_*_to_mldev` in models.py). Vertex-only fields the SDK
# refuses for this backend (`FunctionCall.partial_args`/`will_continue`, `Tool.retrieval`,
# Schema `additionalProperties`, …) are absent, so they get `Cannot find field.` as on the wire
# (e.g. `Unknown name "additionalProperties" at 'tools[0].function_declarations[14].parameters':
# Cannot find field.`, openswarm-ai/openswarm#24).
MESSAGES: Mapping[str, Mapping[str, Field]] = {
    "GenerateContentRequest": {
        "model": _STR,
        "contents": _f("Content", repeated=True),
        "tools": _f("Tool", repeated=True),
        "tool_config": _f("ToolConfig"),
        "safety_settings": _f("any", repeated=True),
        "system_instruction": _f("Content"),
        "generation_config": _f("GenerationConfig"),
        "cached_content": _STR,
        "labels": _ANY,
        "service_tier": _ANY,
        "store": _NUM,
        "continuation_token": _ANY,
    },
    "Content": {"parts": _f("Part", repeated=True), "role": _STR},
    "Part": {
        "text": _STR,
        "inline_data": _ANY,
        "function_call": _f("FunctionCall"),
        "function_response": _f("FunctionResponse"),
        "file_data": _ANY,
        "executable_code": _ANY,
        "code_execution_result": _ANY,
        "tool_call": _ANY,
        "tool_response": _ANY,
        "thought": _NUM,
        "thought_signature": _f("bytes"),
        "part_metadata": _f("struct"),
        "video_metadata": _ANY,
        "media_resolution": _ANY,
        "audio_transcription": _ANY,
        "media_processing": _ANY,
        "speech_metadata": _ANY,
        "document_metadata": _ANY,
        "spreadsheet_metadata": _ANY,
        "audio_metadata": _ANY,
    },
    "FunctionCall": {"id": _STR, "name": _STR, "args": _f("struct")},
    "FunctionResponse": {
        "id": _STR,
        "name": _STR,
        "response": _f("struct"),
        "parts": _f("any", repeated=True),
        "will_continue": _NUM,
        "scheduling": _ANY,
    },
    "Tool": {
        "function_declarations": _f("FunctionDeclaration", repeated=True),
        "google_search_retrieval": _ANY,
        "code_execution": _ANY,
        "google_search": _ANY,
        "url_context": _ANY,
        "file_search": _ANY,
        "computer_use": _ANY,
        "google_maps": _ANY,
        "mcp_servers": _f("any", repeated=True),
    },
    "FunctionDeclaration": {
        "name": _STR,
        "description": _STR,
        "parameters": _f("Schema"),
        "parameters_json_schema": _ANY,
        "response": _f("Schema"),
        "response_json_schema": _ANY,
        "behavior": _ANY,
    },
    "Schema": {
        "type": _f("enum", enum="Type", values=_TYPES),
        "format": _STR,
        "title": _STR,
        "description": _STR,
        "nullable": _NUM,
        "enum": _f("string", repeated=True),
        "max_items": _NUM,
        "min_items": _NUM,
        "properties": _f("Schema", map=True),
        "required": _f("string", repeated=True),
        "min_properties": _NUM,
        "max_properties": _NUM,
        "min_length": _NUM,
        "max_length": _NUM,
        "pattern": _STR,
        "example": _ANY,
        "any_of": _f("Schema", repeated=True),
        "property_ordering": _f("string", repeated=True),
        "default": _ANY,
        "items": _f("Schema"),
        "minimum": _NUM,
        "maximum": _NUM,
    },
    "ToolConfig": {
        "function_calling_config": _f("FunctionCallingConfig"),
        "retrieval_config": _ANY,
        "include_server_side_tool_invocations": _NUM,
    },
    "FunctionCallingConfig": {
        "mode": _f("enum", enum="FunctionCallingConfig.Mode", values=_MODES),
        "allowed_function_names": _f("string", repeated=True),
    },
    "GenerationConfig": {
        name: _ANY
        for name in [
            "stop_sequences",
            "response_mime_type",
            "response_schema",
            "response_json_schema",
            "candidate_count",
            "max_output_tokens",
            "temperature",
            "top_p",
            "top_k",
            "seed",
            "presence_penalty",
            "frequency_penalty",
            "response_logprobs",
            "logprobs",
            "enable_enhanced_civic_answers",
            "response_modalities",
            "speech_config",
            "thinking_config",
            "media_resolution",
            "image_config",
            "audio_transcription_config",
            "enable_affective_dialog",
            "response_format",
        ]
    },
}


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def lookup(message: str, key: str) -> tuple[str, Field] | None:
    """The proto name and spec of `key` in `message`, under either spelling."""
    fields = MESSAGES[message]
    name = snake(key)
    field = fields.get(name)
    if field is None or key not in (name, camel(name)):
        return None
    return name, field


def field_value(obj: Mapping[str, Any], name: str) -> Any:
    """`obj[name]` under the proto or JSON spelling; None when unset."""
    value = obj.get(name)
    return obj.get(camel(name)) if value is None else value


def is_base64(text: str) -> bool:
    """What the transcoder's bytes decoding accepts: standard or URL-safe alphabet."""
    bare = text.rstrip("=")
    return bool(_BASE64.match(text)) and len(bare) % 4 != 1


def transcode_errors(body: Mapping[str, Any]) -> list[Violation]:
    """Every error the transcoder reports for `body`, in document order."""
    return list(_message(body, "GenerateContentRequest", ""))


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _message(obj: Mapping[str, Any], message: str, path: str) -> Iterator[Violation]:
    data_set = False
    for key, value in obj.items():
        found = lookup(message, key)
        if found is None:
            yield _unknown(key, _join(path, key) if isinstance(value, dict) else path)
        elif value is None:
            continue
        elif message == "Part" and found[0] in DATA_ONEOF and data_set:
            yield Violation(field=path or None, description=ONEOF_SET.format(key=key))
        else:
            data_set = data_set or (message == "Part" and found[0] in DATA_ONEOF)
            yield from _field(found[0], found[1], value, path, key)


def _unknown(key: str, at: str) -> Violation:
    where = f" at '{at}'" if at else ""
    text = f'{INVALID_JSON}Unknown name "{key}"{where}: Cannot find field.'
    return Violation(field=at or None, description=text)


def _field(name: str, field: Field, value: Any, path: str, key: str) -> Iterator[Violation]:
    here = _join(path, name)
    if field.kind == "any":
        return
    if field.map:
        entries = value.items() if isinstance(value, dict) else ()
        for index, (_, item) in enumerate(entries):
            yield from _single(field, item, f"{here}[{index}].value", here, key)
    elif field.repeated and isinstance(value, list):
        for index, item in enumerate(value):
            yield from _single(field, item, f"{here}[{index}]", here, key)
    elif isinstance(value, list):
        yield Violation(field=path or None, description=_not_repeating(key, path))
    else:
        yield from _single(field, value, here, path, key)


def _not_repeating(key: str, path: str) -> str:
    # zed-industries/zed#53919: `Unknown name "type" at '…parameters.properties[4].value':
    # Proto field is not repeating, cannot start list.` (a JSON-Schema `"type": [..]` list)
    return f"{INVALID_JSON}Unknown name \"{key}\" at '{path}': {NOT_REPEATING}"


def _single(field: Field, value: Any, here: str, parent: str, key: str) -> Iterator[Violation]:
    kind = field.kind
    if value is None or kind == "any":
        return
    if kind in MESSAGES:
        if isinstance(value, dict):
            yield from _message(value, kind, here)
        else:
            yield _invalid(here, TYPE_URL + kind, value)
    elif kind == "struct":
        if not isinstance(value, dict):
            yield _invalid(here, STRUCT_URL, value)
    elif isinstance(value, dict):
        text = f"Invalid value at '{parent}' ({key}), Starting an object on a scalar field"
        yield Violation(field=parent or None, description=text)
    else:
        yield from _scalar(field, value, here)


def _scalar(field: Field, value: Any, here: str) -> Iterator[Violation]:
    if field.kind == "string" and not isinstance(value, str):
        yield _invalid(here, "TYPE_STRING", value)
    elif field.kind == "bytes" and not isinstance(value, str):
        yield _invalid(here, "TYPE_BYTES", value)
    elif field.kind == "bytes" and not is_base64(value):
        text = f"Invalid value at '{here}' (TYPE_BYTES), Base64 decoding failed for \"{value}\""
        yield Violation(field=here, description=text)
    elif field.kind == "enum" and not _enum_ok(field, value):
        yield _invalid(here, TYPE_URL + field.enum, value)


def _enum_ok(field: Field, value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, str) and value.upper() in field.values


def _invalid(here: str, type_name: str, value: Any) -> Violation:
    shown = f'"{value}"' if isinstance(value, str) else _plain(value)
    return Violation(field=here, description=f"Invalid value at '{here}' ({type_name}), {shown}")


def _plain(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
