"""The emulated Gemini API (`POST /{v1,v1beta}/models/{model}:generateContent` and
`:streamGenerateContent`, with or without `?alt=sse`).

The server gives the model and the stream flag from the path (`ctx.model`, `ctx.stream`) and
the query in `ctx.query`. Validation lives in `gemini_validate` (with the transcoder in
`gemini_schema` and the JSON syntax errors in `gemini_json`); responses in `gemini_render`.

Errors use Google's envelope `{"error": {"code", "message", "status", "details"?}}`,
pretty-printed like every Google JSON reply. `streamGenerateContent` without `alt=sse` answers
errors as a one-element JSON array (gemini-cli reports quote `[{ "error": { … } } ]`), which the
SDK also reads.
"""

from __future__ import annotations

import re
from typing import Any

from harness.emulator import gemini_validate as gv
from harness.emulator.gemini_json import PREFIX, syntax_error
from harness.emulator.gemini_render import JSON_HEADERS, pretty, render
from harness.emulator.wire import ApiError, Context, Position, Reply, Step, WireApi
from harness.scenario.model import FaultKind

# 429 on the Developer API (public logs, 2025–2026): the quota text, then per exhausted metric
# a `* Quota exceeded …` line and `Please retry in Ns.`; the delay also goes in a
# `google.rpc.RetryInfo` detail. The API sends no `retry-after` header: "Gemini answers a 429
# without a Retry-After header and reports how long to wait only in the response body, as a
# google.rpc.RetryInfo entry" (dcdpr/jp#1061); detail shapes as in gemini-cli#8437.
RATE_LIMIT = (
    "You exceeded your current quota, please check your plan and billing details. For more "
    "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. "
    "To monitor your current usage, head to: https://ai.dev/rate-limit. "
)
RATE_LIMIT_DETAIL = (
    "\n* Quota exceeded for metric: generativelanguage.googleapis.com/"
    "generate_content_free_tier_requests, limit: 10, model: {model}\nPlease retry in {delay}s."
)
QUOTA_METRIC = "generativelanguage.googleapis.com/generate_content_free_tier_requests"
RATE_LIMITS_DOC = "https://ai.google.dev/gemini-api/docs/rate-limits"
# 500: google-gemini/gemini-cli#3665 and PublicAffairs/openai-gemini#15.
INTERNAL = (
    "An internal error has occurred. Please retry or report in "
    "https://developers.generativeai.google/guide/troubleshooting"
)
# 503: google-gemini/gemini-cli#5191, google-gemini/cookbook#425.
OVERLOADED = "The model is overloaded. Please try again later."

# Inline payloads up to 100 MB (providers.md §4: the Jan 2026 file-limits post). Google's
# front end words a body over its limit `Maximum request body size 1048576 exceeded, actual
# body size 1056562` with status `Request Entity Too Large` (google-gemini/gemini-cli#13776,
# seen on the Code Assist endpoint; the Gemini API's own 413 text is unconfirmed).
MAX_BODY_BYTES = 100 * 1024 * 1024
TOO_LARGE = "Maximum request body size {limit} exceeded, actual body size {size}"
TOO_LARGE_STATUS = "Request Entity Too Large"
# google.rpc.Code names for the statuses the emulator itself answers with.
CODE_BY_STATUS = {400: gv.STATUS, 404: "NOT_FOUND", 500: "INTERNAL", 503: "UNAVAILABLE"}

_FAULTS: dict[str, tuple[int, str, str]] = {
    "server_error": (500, "INTERNAL", INTERNAL),
    "overloaded": (503, "UNAVAILABLE", OVERLOADED),
}
_PYTHON_REASONS = (
    ("Expecting value", "Expected a value."),
    ("Expecting ',' delimiter", "Expected , or } after key:value pair."),
    ("Expecting ':' delimiter", "Expected : between key:value pair."),
    ("Expecting property name", "Expected an object key or }."),
    ("Unterminated string", "Closing quote expected in string."),
    ("Extra data", "Parsing terminated before end of input."),
)
_VIOLATION_FIELD = re.compile(
    r"^(?:Invalid value at|Invalid JSON payload received\. .*? at) '([^']*)'"
)
_RETRY_IN = re.compile(r"Please retry in ([0-9.]+)s\.")


class GeminiApi:
    name = "gemini"
    max_body_bytes = MAX_BODY_BYTES

    def validate(self, body: Any, ctx: Context) -> ApiError | None:
        return gv.validate(body, ctx)

    def position(self, body: Any) -> Position:
        contents = gv.contents_of(body)
        index = gv.user_text_index(contents)
        text = None
        if index is not None:
            texts = [
                p["text"] for p in gv.parts_of(contents[index]) if isinstance(p.get("text"), str)
            ]
            text = "\n".join(texts)
        after = contents[(index + 1 if index is not None else 0) :]
        return Position(
            user_text=text,
            model_turns=sum(1 for c in after if gv.role_of(c) == "model"),
            # Mode NONE acts as if no declarations were sent (providers.md §4): text only.
            tools_forbidden=gv.calling_mode(body) == "NONE" or not gv.declared_names(body),
        )

    def render(self, step: Step, body: Any, ctx: Context) -> Reply:
        return render(step, body, ctx)

    def error(self, err: ApiError, ctx: Context | None = None) -> Reply:
        """The envelope; wrapped in a one-element array when the request asked for the
        JSON-array stream (`streamGenerateContent` without `alt=sse`), for a body that is not
        JSON too: the server builds `ctx` from the route before it parses the body."""
        error: dict[str, Any] = {"code": err.status, "message": err.message, "status": err.kind}
        details = _details(err)
        if details:
            error["details"] = details
        payload: Any = {"error": error}
        if ctx is not None and ctx.stream and ctx.query.get("alt") != "sse":
            payload = [payload]
        return Reply(
            status=err.status,
            headers={**JSON_HEADERS, **err.headers},
            chunks=(pretty(payload) + b"\n",),
        )

    def malformed(self, detail: str, raw: bytes | None = None) -> ApiError:
        """The body is not JSON. With the raw body the message is the API's exact text
        (reason, quoted context, caret); from the decoder's `detail` alone, only the reason."""
        message = syntax_error(raw) if raw is not None else None
        if message is None:
            reason = next(
                (r for py, r in _PYTHON_REASONS if detail.startswith(py)), "Unexpected token."
            )
            message = PREFIX + reason
        return ApiError(status=400, message=message, kind=gv.STATUS, rule="malformed_json")

    def fault(
        self, kind: FaultKind, retry_after: float | None, ctx: Context | None = None
    ) -> ApiError:
        if kind == "rate_limit":
            message = RATE_LIMIT
            if retry_after is not None:
                model = ctx.model if ctx is not None else "gemini-2.5-flash"
                message += RATE_LIMIT_DETAIL.format(model=model, delay=_seconds(retry_after))
            return ApiError(
                status=429, message=message, kind="RESOURCE_EXHAUSTED", rule="rate_limit"
            )
        status, code, message = _FAULTS.get(kind, _FAULTS["server_error"])
        return ApiError(status=status, message=message, kind=code, rule=kind)

    def too_large(self, limit: int, size: int) -> ApiError:
        message = TOO_LARGE.format(limit=limit, size=size)
        return ApiError(status=413, message=message, kind=TOO_LARGE_STATUS, rule="too_large")

    def rejected(self, message: str, status: int = 400) -> ApiError:
        kind = CODE_BY_STATUS.get(status, "INTERNAL" if status >= 500 else gv.STATUS)
        return ApiError(status=status, message=message, kind=kind, rule="emulator")


def _seconds(delay: float) -> str:
    return f"{delay:.9f}".rstrip("0").rstrip(".") if delay != int(delay) else str(int(delay))


def _details(err: ApiError) -> list[dict[str, Any]]:
    """Google's `details`, rebuilt from the error (an `ApiError` carries a message only)."""
    if err.rule in ("unknown_field", "invalid_value", "signature_not_base64"):
        return [_bad_request(err.message)]
    if err.status == 429:
        return _quota_details(err.message)
    return []


def _bad_request(message: str) -> dict[str, Any]:
    violations = []
    for line in message.split("\n"):
        match = _VIOLATION_FIELD.match(line)
        violation = (
            {"field": match[1], "description": line}
            if match and match[1]
            else {"description": line}
        )
        violations.append(violation)
    return {"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": violations}


def _quota_details(message: str) -> list[dict[str, Any]]:
    details: list[dict[str, Any]] = [
        {
            "@type": "type.googleapis.com/google.rpc.Help",
            "links": [
                {"description": "Learn more about Gemini API quotas", "url": RATE_LIMITS_DOC}
            ],
        }
    ]
    retry = _RETRY_IN.search(message)
    if retry is None:
        return details
    model = message.split("model: ", 1)[1].split("\n", 1)[0] if "model: " in message else ""
    violation = {
        "quotaMetric": QUOTA_METRIC,
        "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
        "quotaDimensions": {"location": "global", "model": model},
        "quotaValue": "10",
    }
    details.append(
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]}
    )
    # RetryInfo gives whole seconds (`"retryDelay": "38s"` beside `Please retry in 38.12926798s.`).
    seconds = int(float(retry[1]))
    details.append(
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{seconds}s"}
    )
    return details


API = GeminiApi()
_CONFORMS: WireApi = API  # mypy checks the module against the protocol the server uses
