"""The emulated Gemini API without HTTP, transcoder and field checks: each error class the real
API raises for a malformed request (exact text, status, envelope, details) against the
corrected request."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from harness.emulator import gemini_validate as gv
from harness.emulator.gemini_api import API
from harness.emulator.wire import Position
from tests.emulator.gemini_fixtures import (
    ASK,
    FLASH,
    Body,
    answers,
    call,
    ctx_for,
    model_calls,
    request,
    user,
)

BASE64_BAD = "default_signature"

CASES: list[tuple[str, str, Callable[[], Body], Callable[[], Body], str, str]] = [
    # (id, model, broken, corrected, rule, message)
    (
        "missing_contents",
        FLASH,
        lambda: {"generationConfig": {}},
        lambda: request(user()),
        "missing_field",
        "* GenerateContentRequest.contents: contents is not specified\n",
    ),
    (
        "empty_contents",
        FLASH,
        lambda: request(),
        lambda: request(user()),
        "missing_field",
        "* GenerateContentRequest.contents: contents is not specified\n",
    ),
    (
        "unknown_top_level",
        FLASH,
        lambda: {**request(user()), "temperature": 0.2},
        lambda: {**request(user()), "generationConfig": {"temperature": 0.2}},
        "unknown_field",
        'Invalid JSON payload received. Unknown name "temperature": Cannot find field.',
    ),
    (
        "unknown_in_function_call",
        FLASH,
        lambda: request(
            user(),
            {
                "role": "model",
                "parts": [
                    {"functionCall": {**call("Paris")["functionCall"], "thoughtSignature": "c2ln"}}
                ],
            },
            answers(None),
        ),
        lambda: request(
            user(),
            {"role": "model", "parts": [{**call("Paris"), "thoughtSignature": "c2ln"}]},
            answers(None),
        ),
        "unknown_field",
        'Invalid JSON payload received. Unknown name "thoughtSignature" at '
        "'contents[1].parts[0].function_call': Cannot find field.",
    ),
    (
        "schema_additional_properties",
        FLASH,
        lambda: request(
            user(),
            tools=[
                {
                    "functionDeclarations": [
                        {
                            "name": "get_weather",
                            "parameters": {"type": "OBJECT", "additionalProperties": False},
                        }
                    ]
                }
            ],
        ),
        lambda: request(
            user(),
            tools=[
                {
                    "function_declarations": [
                        {
                            "name": "get_weather",
                            "parameters_json_schema": {
                                "type": "object",
                                "additionalProperties": False,
                            },
                        }
                    ]
                }
            ],
        ),
        "unknown_field",
        'Invalid JSON payload received. Unknown name "additionalProperties" at '
        "'tools[0].function_declarations[0].parameters': Cannot find field.",
    ),
    (
        "schema_type_list",
        FLASH,
        lambda: request(
            user(),
            tools=[
                {
                    "functionDeclarations": [
                        {
                            "name": "f",
                            "parameters": {
                                "type": "object",
                                "properties": {"a": {"type": ["string", "null"]}},
                            },
                        }
                    ]
                }
            ],
        ),
        lambda: request(
            user(),
            tools=[
                {
                    "functionDeclarations": [
                        {
                            "name": "f",
                            "parameters": {
                                "type": "object",
                                "properties": {"a": {"type": "string", "nullable": True}},
                            },
                        }
                    ]
                }
            ],
        ),
        "unknown_field",
        'Invalid JSON payload received. Unknown name "type" at '
        "'tools[0].function_declarations[0].parameters.properties[0].value': "
        "Proto field is not repeating, cannot start list.",
    ),
    (
        "response_not_object",
        FLASH,
        lambda: request(
            user(),
            model_calls(call("Paris"), sign=False),
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "get_weather", "response": "sunny"}}],
            },
        ),
        lambda: request(user(), model_calls(call("Paris"), sign=False), answers(None)),
        "invalid_value",
        "Invalid value at 'contents[2].parts[0].function_response.response' "
        '(type.googleapis.com/google.protobuf.Struct), "sunny"',
    ),
    (
        "signature_not_base64",
        FLASH,
        lambda: request(
            user(),
            {"role": "model", "parts": [{**call("Paris"), "thoughtSignature": BASE64_BAD}]},
            answers(None),
        ),
        lambda: request(
            user(),
            {
                "role": "model",
                "parts": [
                    {**call("Paris"), "thoughtSignature": "skip_thought_signature_validator"}
                ],
            },
            answers(None),
        ),
        "signature_not_base64",
        "Invalid value at 'contents[1].parts[0].thought_signature' (TYPE_BYTES), "
        'Base64 decoding failed for "default_signature"',
    ),
    (
        "two_data_members",
        FLASH,
        lambda: request(
            user(), model_calls({**call("Paris"), "text": "x"}, sign=False), answers(None)
        ),
        lambda: request(
            user(), model_calls({"text": "x"}, call("Paris"), sign=False), answers(None)
        ),
        "invalid_value",
        "Invalid value (oneof), oneof field 'data' is already set. Cannot set 'text'",
    ),
    (
        "empty_parts",
        FLASH,
        lambda: request(user(), {"role": "model", "parts": []}, user("more")),
        lambda: request(user(), {"role": "model", "parts": [{"text": "ok"}]}, user("more")),
        "empty_parts",
        "* GenerateContentRequest.contents[1].parts: contents.parts must not be empty.\n",
    ),
    (
        "part_without_data",
        FLASH,
        lambda: request({"role": "user", "parts": [{"thought": True}]}),
        lambda: request({"role": "user", "parts": [{"text": "", "thought": True}]}),
        "part_without_data",
        "* GenerateContentRequest.contents[0].parts[0].data: required oneof field 'data' "
        "must have one initialized field\n",
    ),
    (
        "response_without_name",
        FLASH,
        lambda: request(user(), model_calls(call("Paris"), sign=False), answers(None, name="")),
        lambda: request(user(), model_calls(call("Paris"), sign=False), answers(None)),
        "function_response_name",
        "* GenerateContentRequest.contents[2].parts[0].function_response.name: "
        "Name cannot be empty.\n",
    ),
    (
        "invalid_function_name",
        FLASH,
        lambda: request(user(), tools=[{"functionDeclarations": [{"name": "get weather"}]}]),
        lambda: request(user(), tools=[{"functionDeclarations": [{"name": "get_weather"}]}]),
        "function_name",
        "* GenerateContentRequest.tools[0].function_declarations[0].name: "
        + gv.INVALID_FUNCTION_NAME
        + "\n",
    ),
    (
        "invalid_role",
        FLASH,
        lambda: request(user(), {"role": "assistant", "parts": [{"text": "hi"}]}, user("more")),
        lambda: request(user(), {"role": "model", "parts": [{"text": "hi"}]}, user("more")),
        "role",
        "Please use a valid role: user, model.",
    ),
    (
        "config_without_declarations",
        FLASH,
        lambda: request(user(), tools=[{"googleSearch": {}}], mode="AUTO"),
        lambda: request(user(), tools=[{"googleSearch": {}}]),
        "function_calling_config_without_declarations",
        "Function calling config is set without function_declarations.",
    ),
    (
        "allowed_name_undeclared",
        FLASH,
        lambda: {
            **request(user()),
            "toolConfig": {
                "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_time"]}
            },
        },
        lambda: {
            **request(user()),
            "toolConfig": {
                "function_calling_config": {
                    "mode": "ANY",
                    "allowed_function_names": ["get_weather"],
                }
            },
        },
        "tool_choice_unknown_tool",
        "* GenerateContentRequest.tool_config: "
        + gv.UNDECLARED_ALLOWED_NAME.format(name="get_time")
        + "\n",
    ),
    (
        "root_not_object",
        FLASH,
        lambda: [request(user())],  # type: ignore[return-value,list-item]
        lambda: request(user()),
        "root_not_message",
        'Invalid JSON payload received. Unknown name "": Root element must be a message.',
    ),
    (
        "nan_in_body",
        FLASH,
        lambda: request(
            user(),
            model_calls(call("Paris"), sign=False),
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "get_weather", "response": {"t": float("nan")}}}
                ],
            },
        ),
        lambda: request(
            user(),
            model_calls(call("Paris"), sign=False),
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "get_weather", "response": {"t": None}}}],
            },
        ),
        "malformed_json",
        # Python's reader takes NaN, the API's does not; quoted from the body as re-encoded
        # (`validate` is not given the raw bytes).
        'Invalid JSON payload received. Unexpected token.\n, "response": {"t": NaN}}}]}], '
        '"generati\n                    ^',
    ),
]


@pytest.mark.parametrize(
    ("model", "broken", "corrected", "rule", "message"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_error_class_and_its_correction(
    model: str,
    broken: Callable[[], Body],
    corrected: Callable[[], Body],
    rule: str,
    message: str,
) -> None:
    ctx = ctx_for(model)
    err = API.validate(broken(), ctx)
    assert err is not None
    assert (err.status, err.kind, err.rule) == (400, "INVALID_ARGUMENT", rule)
    assert err.message == message
    assert API.validate(corrected(), ctx) is None


def test_error_envelope_is_googles() -> None:
    err = API.validate(request(user(), model_calls(call("Paris")), user("x")), ctx_for())
    assert err is not None
    reply = API.error(err)
    body = json.loads(b"".join(reply.chunks))
    assert reply.status == 400
    assert reply.headers["content-type"] == "application/json; charset=UTF-8"
    assert body == {"error": {"code": 400, "message": gv.G1, "status": "INVALID_ARGUMENT"}}
    assert b"".join(reply.chunks).startswith(b'{\n  "error": {\n    "code": 400,')


def test_transcoder_errors_carry_field_violations_all_at_once() -> None:
    body = request(user())
    body["tools"] = [
        {
            "functionDeclarations": [
                {"name": "f", "parameters": {"type": "object", "$schema": "x", "const": 1}}
            ]
        }
    ]
    body["extra"] = {"a": 1}
    err = API.validate(body, ctx_for())
    assert err is not None
    lines = err.message.split("\n")
    assert lines == [
        'Invalid JSON payload received. Unknown name "$schema" at '
        "'tools[0].function_declarations[0].parameters': Cannot find field.",
        'Invalid JSON payload received. Unknown name "const" at '
        "'tools[0].function_declarations[0].parameters': Cannot find field.",
        # an object-valued unknown field is reported at its own path (public report:
        # `Unknown name "extra_body" at 'extra_body': Cannot find field.`)
        "Invalid JSON payload received. Unknown name \"extra\" at 'extra': Cannot find field.",
    ]
    details = json.loads(b"".join(API.error(err).chunks))["error"]["details"]
    assert details[0]["@type"] == "type.googleapis.com/google.rpc.BadRequest"
    fields = [v.get("field") for v in details[0]["fieldViolations"]]
    assert fields == ["tools[0].function_declarations[0].parameters"] * 2 + ["extra"]


def test_top_level_unknown_violation_has_no_field() -> None:
    err = API.validate({**request(user()), "top_k": 3}, ctx_for())
    assert err is not None
    details = json.loads(b"".join(API.error(err).chunks))["error"]["details"]
    assert details[0]["fieldViolations"] == [{"description": err.message}]


def test_both_spellings_and_single_values_are_read() -> None:
    body = {
        "contents": {"role": "user", "parts": {"text": ASK}},  # repeated fields given once
        "system_instruction": {"parts": [{"text": "Be brief."}]},
        "tool_config": {"function_calling_config": {"mode": "none"}},
        "tools": [
            {"function_declarations": [{"name": "get_weather", "parameters": {"type": "object"}}]}
        ],
        "generation_config": {"thinking_config": {"thinking_budget": 0}},
    }
    assert API.validate(body, ctx_for()) is None
    assert API.position(body) == Position(user_text=ASK, model_turns=0, tools_forbidden=True)


def test_null_fields_are_unset() -> None:
    body = request(user())
    body["tools"] = [
        {"functionDeclarations": [{"name": "f", "description": None, "parameters": None}]}
    ]
    body["cachedContent"] = None
    assert API.validate(body, ctx_for()) is None
