"""The emulated Anthropic Messages API (`POST /v1/messages`, also `?beta=true`).

Validation lives in `anthropic_validate`, the Message JSON and stream in `anthropic_render`;
this module reads where a request stands in the script and words errors and faults.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from harness.emulator import anthropic_render, anthropic_validate
from harness.emulator.anthropic_validate import INVALID_REQUEST, blocks_of, invalid
from harness.emulator.tokens import Minter
from harness.emulator.wire import ApiError, Context, Position, Reply, Step, json_reply
from harness.scenario.model import FaultKind

# malformed_json: "The request body is not valid JSON: no low surrogate in string: line 1
# column 37589 (char 37588)" (anthropics/claude-code#8272) and "…: unexpected character: line 8
# column 316 (char 466)" (promptfoo/promptfoo#4489). The API's parser words problems its own
# way (orjson); Python's wording is mapped to the two phrases seen, keeping its position.
# Which phrase a given broken body gets, and its exact position, is unconfirmed.
MALFORMED_JSON = "The request body is not valid JSON: {detail}"
PY_JSON_ERROR = re.compile(r"^(?P<what>.*): (?P<where>line \d+ column \d+ \(char \d+\))$")
UNEXPECTED_END = "unexpected end of data"
UNEXPECTED_CHAR = "unexpected character"
EMPTY_BODY_AT = "line 1 column 1 (char 0)"
# invalid_body (unconfirmed): a JSON body that is not an object.
BODY_NOT_OBJECT = "Input should be a valid dictionary"

# Faults, with the real bodies: 429 "This request would exceed your account's rate limit.
# Please try again later." (anthropics/claude-code#71669); 500 "Internal server error"
# (anthropics/claude-code#45350); 529 "Overloaded" (anthropics/claude-code#35792).
RATE_LIMITED = (
    429,
    "rate_limit_error",
    "This request would exceed your account's rate limit. Please try again later.",
)
SERVER_ERROR = (500, "api_error", "Internal server error")
OVERLOADED = (529, "overloaded_error", "Overloaded")

# The error type each status gets when an ApiError names none (docs: errors page).
KIND_BY_STATUS = {
    400: INVALID_REQUEST,
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
# request_too_large: the Messages API takes 32 MB per request (docs errors page; the maintainers
# in anthropics/anthropic-sdk-python#938). Cloudflare answers above it, before the API, with
# `{"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}`: no
# top-level `type`, no `request_id` (anthropics/claude-code#14567, #10314, #3335).
MAX_BODY_BYTES = 32 * 1024 * 1024
TOO_LARGE_KIND = "request_too_large"
TOO_LARGE = "Request exceeds the maximum size"

# 4xx replies carry `x-should-retry: false` (response headers in lobehub/lobehub#1496).
NO_RETRY = {"x-should-retry": "false"}


class AnthropicMessages:
    name = "anthropic"
    max_body_bytes = MAX_BODY_BYTES

    def validate(self, body: Any, ctx: Context) -> ApiError | None:
        if body is None:
            return malformed_json(f"{UNEXPECTED_END}: {EMPTY_BODY_AT}")
        if not isinstance(body, dict):
            return invalid(BODY_NOT_OBJECT, "invalid_body")
        problem = anthropic_validate.validate_request(body)
        if problem is None and ctx.options.anthropic_thinking:
            messages = body["messages"]
            problem = anthropic_validate.own_signatures(messages, last_user_index(messages))
        return problem

    def position(self, body: Mapping[str, Any]) -> Position:
        messages = list(body.get("messages") or [])
        last = last_user_index(messages)
        after = messages[last + 1 :] if last is not None else messages
        choice = body.get("tool_choice")
        return Position(
            user_text=None if last is None else user_text(messages[last]),
            model_turns=sum(
                1 for m in after if isinstance(m, dict) and m.get("role") == "assistant"
            ),
            # A model given no tool cannot ask for one: it answers with text.
            tools_forbidden=not body.get("tools")
            or (isinstance(choice, dict) and choice.get("type") == "none"),
        )

    def render(self, step: Step, body: Mapping[str, Any], ctx: Context) -> Reply:
        return anthropic_render.render(step, body, ctx)

    def error(self, err: ApiError, ctx: Context | None = None) -> Reply:
        if err.kind == TOO_LARGE_KIND:
            return json_reply(err.status, {"error": {"type": err.kind, "message": err.message}})
        rid = anthropic_render.request_id(Minter("anthropic-errors"), err.status, err.message)
        kind = err.kind or KIND_BY_STATUS.get(err.status, "api_error")
        payload = {
            "type": "error",
            "error": {"type": kind, "message": err.message},
            "request_id": rid,
        }
        retry = NO_RETRY if 400 <= err.status < 500 and err.status != 429 else {}
        return json_reply(err.status, payload, {"request-id": rid, **retry, **err.headers})

    def malformed(self, detail: str, raw: bytes | None = None) -> ApiError:
        return malformed_json(orjson_wording(detail))

    def fault(
        self, kind: FaultKind, retry_after: float | None, ctx: Context | None = None
    ) -> ApiError:
        if kind == "rate_limit":
            headers = {} if retry_after is None else {"retry-after": f"{retry_after:g}"}
            return fault_error(RATE_LIMITED, kind, headers)
        if kind == "server_error":
            return fault_error(SERVER_ERROR, kind, {})
        if kind == "overloaded":
            return fault_error(OVERLOADED, kind, {})
        raise ValueError(f"anthropic emulator: {kind!r} is not an error fault")

    def too_large(self, limit: int, size: int) -> ApiError:
        return ApiError(status=413, message=TOO_LARGE, kind=TOO_LARGE_KIND, rule=TOO_LARGE_KIND)

    def rejected(self, message: str, status: int = 400) -> ApiError:
        kind = KIND_BY_STATUS.get(status, "api_error" if status >= 500 else INVALID_REQUEST)
        return ApiError(status=status, message=message, kind=kind, rule="emulator")


def fault_error(spec: tuple[int, str, str], rule: str, headers: Mapping[str, str]) -> ApiError:
    status, kind, message = spec
    return ApiError(status=status, message=message, kind=kind, rule=rule, headers=headers)


def malformed_json(detail: str) -> ApiError:
    message = MALFORMED_JSON.format(detail=detail)
    return ApiError(status=400, message=message, kind=INVALID_REQUEST, rule="malformed_json")


def orjson_wording(detail: str) -> str:
    """Python's `json` wording turned into the parser's; other details pass unchanged."""
    match = PY_JSON_ERROR.match(detail)
    if match is None:
        return detail
    what = UNEXPECTED_END if match["what"].startswith("Unterminated") else UNEXPECTED_CHAR
    return f"{what}: {match['where']}"


def last_user_index(messages: list[Any]) -> int | None:
    """The last genuine user message: text, not a message carrying tool results."""
    for n in range(len(messages) - 1, -1, -1):
        msg = messages[n]
        if isinstance(msg, dict) and msg.get("role") == "user" and is_genuine(msg):
            return n
    return None


def is_genuine(msg: Mapping[str, Any]) -> bool:
    return isinstance(msg.get("content"), str) or not any(
        b.get("type") == "tool_result" for b in blocks_of(msg)
    )


def user_text(msg: Mapping[str, Any]) -> str:
    return "\n".join(str(b.get("text", "")) for b in blocks_of(msg) if b.get("type") == "text")


API = AnthropicMessages()
