"""From what the endpoint recorded to a cassette: real API URLs, allowlisted headers, bodies.

Headers are kept by allowlist, not removed by blocklist, so a credential in a header nobody
thought of (a proxy's, a gateway's) never reaches a file. The lists below are what a reader of
the cassette or a replaying SDK needs; everything else (authorization, x-api-key,
x-goog-api-key, api-key, cookie, set-cookie, host, dates, the SDK's platform headers) is gone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from urllib.parse import urlsplit, urlunsplit

from harness.cassettes.cassette import (
    CassetteMeta,
    Interaction,
    RecordedRequest,
    RecordedResponse,
)
from harness.cassettes.sse import body_from_text
from harness.endpoint.capture import Recorded
from harness.scrub import scrub_url

REQUEST_HEADERS = frozenset(
    {
        "accept",
        "content-type",
        "anthropic-version",
        "anthropic-beta",
        "openai-beta",
        "user-agent",
        "x-goog-api-client",
        "x-stainless-lang",
        "x-stainless-package-version",
        "x-stainless-helper-method",
        "x-stainless-stream-helper",
    }
)
# retry-after / x-should-retry steer the SDKs' retries on replay; the ids help a reviewer
# find the call in the provider's console.
RESPONSE_HEADERS = frozenset(
    {
        "content-type",
        "retry-after",
        "retry-after-ms",
        "x-should-retry",
        "request-id",
        "x-request-id",
        "openai-processing-ms",
        "openai-version",
    }
)
RESPONSE_HEADER_PREFIXES = ("anthropic-ratelimit-", "x-ratelimit-")

# Where each provider's API lives; cassettes name these URLs even when recorded from the
# emulator, so replay points the SDK at its default base URL (never at an emulator).
REAL_ORIGINS: Mapping[str, str] = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com",
    "gemini": "https://generativelanguage.googleapis.com",
}
API_PATH = re.compile(
    r"(/v1(?:beta\d*|alpha)?/(?:messages|responses|chat/completions|models/[^/]+:[A-Za-z]+))$"
)


def real_uri(provider: str, url: str) -> str:
    """`url` moved to the provider's real origin: its API path (`/v1/messages`, …) kept, any
    emulator or proxy prefix before it dropped, credentials removed from the query."""
    parts = urlsplit(scrub_url(url))
    match = API_PATH.search(parts.path)
    path = match.group(1) if match else parts.path
    origin = urlsplit(REAL_ORIGINS[provider])
    return str(urlunsplit((origin.scheme, origin.netloc, path, parts.query, "")))


def kept_headers(
    headers: Iterable[tuple[str, str]], allowed: frozenset[str], prefixes: tuple[str, ...] = ()
) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for name, value in headers:
        key = name.lower()
        if key in allowed or key.startswith(prefixes):
            out.setdefault(key, []).append(value)
    return {k: tuple(v) for k, v in out.items()}


def interaction_from_record(number: int, provider: str, record: Recorded) -> Interaction:
    body_text = record.request_body.decode("utf-8", "replace")
    request_body, is_json = _json_or_text(body_text)
    return Interaction(
        number=number,
        request=RecordedRequest(
            method=record.method,
            uri=real_uri(provider, record.url),
            headers=kept_headers(record.request_headers, REQUEST_HEADERS),
            body=request_body,
            is_json=is_json,
        ),
        response=_response(record),
    )


def _response(record: Recorded) -> RecordedResponse:
    headers = kept_headers(record.response_headers, RESPONSE_HEADERS, RESPONSE_HEADER_PREFIXES)
    text = record.body.decode("utf-8", "replace")
    response = RecordedResponse(status=record.status or 0, reason=record.reason, headers=headers)
    if "text/event-stream" in ",".join(headers.get("content-type", ())):
        return replace(response, sse=body_from_text(text))
    body, is_json = _json_or_text(text)
    if is_json:
        return replace(response, json=body)
    return replace(response, text=None if body is None else str(body))


def _json_or_text(text: str) -> tuple[object, bool]:
    if not text:
        return None, False
    try:
        return json.loads(text), True
    except json.JSONDecodeError:
        return text, False


def meta_for(
    *, source: str, provider: str, model: str, scenario: str, stream: bool, recorded: str
) -> CassetteMeta:
    return CassetteMeta(
        source=source,
        provider=provider,
        model=model,
        scenario=scenario,
        stream=stream,
        recorded=recorded,
        sdk=sdk_versions(provider),
    )


SDK_DISTRIBUTIONS: Mapping[str, tuple[str, ...]] = {
    "anthropic": ("anthropic", "httpx2"),
    "openai": ("openai", "httpx2"),
    "gemini": ("google-genai", "httpx2"),
}


def sdk_versions(provider: str) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    from harness import __version__

    out = {"harness": __version__}
    for name in SDK_DISTRIBUTIONS[provider]:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out
