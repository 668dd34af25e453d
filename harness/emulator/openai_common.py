"""What the two emulated OpenAI APIs (Responses, Chat Completions) share: the error envelope,
the answer to a body that is not JSON, injected faults, the missing-parameter wording, and the
small pieces that make replies look real (delta pieces, `obfuscation`, token estimates).

Each message below is the real API's text, with the public report it was taken from.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

from harness.emulator.tokens import Minter
from harness.emulator.wire import ApiError, Context, Reply, json_reply
from harness.scenario.model import FaultKind

INVALID_REQUEST = "invalid_request_error"
SERVER_ERROR = "server_error"

# https://github.com/ChatGPTNextWeb/NextChat/issues/4064 (full envelope: type
# invalid_request_error, param null, code null), also openai/openai-python#257.
MALFORMED_JSON = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't "
    "using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was "
    "sent was not valid JSON. If you have trouble figuring out how to fix this, please contact "
    "us through our help center at help.openai.com.)"
)

# `Missing required parameter: 'messages'.` with code missing_required_parameter and the
# parameter as `param`: https://github.com/SilasMarvin/lsp-ai/issues/108 (real OpenAI);
# the same form for nested fields (`'input[42].id'`): https://github.com/openai/codex/issues/6926
MISSING_PARAMETER = "Missing required parameter: '{param}'."
MISSING_PARAMETER_CODE = "missing_required_parameter"

# 429, type `tokens`, code rate_limit_exceeded: https://github.com/BuilderIO/micro-agent/issues/86
# (wording), https://github.com/jorge-menjivar/unsaged/issues/53 (envelope). `fault()` is not
# given the request's model or organization, so both are stand-ins (see FAULT_MODEL).
RATE_LIMIT = (
    "Rate limit reached for {model} in organization {org} on tokens per min (TPM): "
    "Limit 30000, Used 29937, Requested 385. Please try again in {wait}. "
    "Visit https://platform.openai.com/account/rate-limits to learn more."
)
RATE_LIMIT_TYPE = "tokens"
RATE_LIMIT_CODE = "rate_limit_exceeded"
FAULT_MODEL = "gpt-4o"
FAULT_ORG = "org-harnessEmulator00000000"
DEFAULT_RETRY_AFTER = 1.0

# 500 server_error: https://github.com/openai/openai-cua-sample-app/issues/54
SERVER_FAULT = (
    "The server had an error processing your request. Sorry about that! You can retry your "
    "request, or contact us through our help center at help.openai.com if you keep seeing "
    "this error. (Please include the request ID {request_id} in your email.)"
)

# 503 server_error ("overloaded"): https://github.com/ikechan8370/chatgpt-plugin/issues/125 ,
# https://github.com/waylaidwanderer/node-chatgpt-api/issues/34
OVERLOADED = (
    "That model is currently overloaded with other requests. You can retry your request, or "
    "contact us through our help center at help.openai.com if the error persists. "
    "(Please include the request ID {request_id} in your message.)"
)

# The request-size limit and its 413 are not documented for these endpoints, nor seen in a
# public report: Cloudflare fronts the API and its 413s seen so far are HTML pages
# (openai/codex#2908). The limit is taken as Anthropic's 32 MB and the answer is a clear
# message in OpenAI's JSON envelope (unconfirmed).
MAX_BODY_BYTES = 32 * 1024 * 1024
TOO_LARGE = "Request body too large: {size} bytes; the maximum is {limit} bytes."
TOO_LARGE_CODE = "request_too_large"

# invalid_type, param the field's path: the form the API gives a field of the wrong JSON type
# (`Invalid type for 'messages[0].content[0]': expected an object, but got a string instead.`,
# quoted in many client reports); for the fields checked here it is unconfirmed.
INVALID_TYPE = "Invalid type for '{param}': expected {expected}, but got {got} instead."
INVALID_TYPE_CODE = "invalid_type"

_PIECE = re.compile(r"\s*\w+|\s*[^\w\s]+|\s+")


class OpenAiErrors:
    """The `error`, `malformed`, `fault`, `too_large` and `rejected` members of `WireApi`, as
    both OpenAI APIs answer."""

    max_body_bytes = MAX_BODY_BYTES

    def error(self, err: ApiError, ctx: Context | None = None) -> Reply:
        payload = {
            "error": {
                "message": err.message,
                "type": err.kind or INVALID_REQUEST,
                "param": err.param,
                "code": err.code,
            }
        }
        headers = {"x-request-id": request_id(err.message), **err.headers}
        return json_reply(err.status, payload, headers)

    def malformed(self, detail: str, raw: bytes | None = None) -> ApiError:
        return ApiError(
            status=400, message=MALFORMED_JSON, kind=INVALID_REQUEST, rule="malformed_json"
        )

    def fault(
        self, kind: FaultKind, retry_after: float | None, ctx: Context | None = None
    ) -> ApiError:
        """429 for `rate_limit`, 503 for `overloaded`, else 500 (the server plays `slow` and
        `stream_cut` itself and never asks for them)."""
        rid = request_id(kind)
        if kind == "rate_limit":
            wait = DEFAULT_RETRY_AFTER if retry_after is None else retry_after
            model = ctx.model if ctx is not None and ctx.model else FAULT_MODEL
            text = RATE_LIMIT.format(model=model, org=FAULT_ORG, wait=_wait_text(wait))
            return ApiError(
                status=429,
                message=text,
                kind=RATE_LIMIT_TYPE,
                code=RATE_LIMIT_CODE,
                rule="rate_limit",
                headers={"retry-after": _seconds_header(wait)},
            )
        if kind == "overloaded":
            return ApiError(
                status=503,
                message=OVERLOADED.format(request_id=rid),
                kind=SERVER_ERROR,
                rule="overloaded",
            )
        return ApiError(
            status=500,
            message=SERVER_FAULT.format(request_id=rid),
            kind=SERVER_ERROR,
            rule="server_error",
        )

    def too_large(self, limit: int, size: int) -> ApiError:
        message = TOO_LARGE.format(size=size, limit=limit)
        return invalid(message, rule="request_too_large", code=TOO_LARGE_CODE, status=413)

    def rejected(self, message: str, status: int = 400) -> ApiError:
        kind = SERVER_ERROR if status >= 500 else INVALID_REQUEST
        return ApiError(status=status, message=message, kind=kind, rule="emulator")


def invalid(
    message: str, *, rule: str, param: str | None = None, code: str | None = None, status: int = 400
) -> ApiError:
    """An `invalid_request_error` as both OpenAI APIs send it."""
    return ApiError(
        status=status, message=message, kind=INVALID_REQUEST, param=param, code=code, rule=rule
    )


def wrong_type(param: str, expected: str, value: Any) -> ApiError:
    message = INVALID_TYPE.format(param=param, expected=expected, got=json_type(value))
    return invalid(message, rule="invalid_type", param=param, code=INVALID_TYPE_CODE)


def json_type(value: Any) -> str:
    """How the API names a JSON value's type in `invalid_type` messages."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a decimal"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "null" if value is None else "an object"


def missing(param: str) -> ApiError:
    return invalid(
        MISSING_PARAMETER.format(param=param),
        rule="missing_field",
        param=param,
        code=MISSING_PARAMETER_CODE,
    )


def request_id(seed: str) -> str:
    """A stable `req_…` id (real ones are 32 hex digits)."""
    return "req_" + hashlib.sha256(seed.encode("utf-8")).hexdigest()[:32]


def _wait_text(seconds: float) -> str:
    """As the real message writes it: `644ms`, `6.596s`, `20s`."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    return f"{seconds:.3f}".rstrip("0").rstrip(".") + "s"


def _seconds_header(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"


def pieces(text: str) -> list[str]:
    """Split text the way streamed deltas arrive: a word or a run of punctuation at a time,
    leading spaces attached (`"{\\""`, `"a"`, `"\\":"`, `" London"`)."""
    return _PIECE.findall(text) or [text]


def obfuscation(minter: Minter, *seed: object, delta: str = "") -> str:
    """The `obfuscation` filler streamed events carry; real ones pad delta + filler to ~16."""
    return minter.alnum("obfuscation", *seed, length=max(2, 16 - len(delta)))


def estimate_tokens(value: Any) -> int:
    """A plausible token count: about four characters per token."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return max(1, math.ceil(len(text) / 4))


def created_at(user_index: int, turn_index: int) -> int:
    """A stable Unix time per step, so recordings do not change from run to run."""
    return 1_780_000_000 + user_index * 1_000 + (turn_index + 1) * 10


def compact_json(value: Any) -> str:
    """Tool-call arguments as the APIs send them: compact JSON text."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
