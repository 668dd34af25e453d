"""Secrets never leave the process: which headers and query parameters are removed, and a scan
for anything that still looks like a key. Used at capture time and before any file is written.

Encrypted reasoning and thought signatures are not secrets and are kept byte-exact.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# providers.md §7: every header that can carry a credential in any of the three SDKs
# (Anthropic 2.14 sends the key as Bearer; raw REST and Foundry use x-api-key; Azure api-key).
SECRET_REQUEST_HEADERS = frozenset(
    {"authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie", "proxy-authorization"}
)
SECRET_RESPONSE_HEADERS = frozenset(
    {"set-cookie", "anthropic-organization-id", "openai-organization", "openai-project"}
)
SECRET_QUERY_PARAMS = frozenset({"key", "api_key", "access_token"})

# Shapes of real provider keys; a file holding one of these is never written.
# Each starts at a word boundary, so words like "task-oriented-…" or "risk-adjusted-…" are not
# mistaken for an `sk-` key, and an `sk-` key needs a digit, as real (random) ones have.
_START = r"(?<![A-Za-z0-9_\-])"
KEY_PATTERNS = (
    re.compile(_START + r"sk-ant-(?=[A-Za-z_\-]*[0-9])[A-Za-z0-9_\-]{16,}"),
    re.compile(_START + r"sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z_\-]*[0-9])[A-Za-z0-9_\-]{20,}"),
    re.compile(_START + r"AIza[0-9A-Za-z_\-]{30,}"),
    re.compile(_START + r"ya29\.[0-9A-Za-z_\-]{20,}"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9_\-\.=]{16,}"),
)


def scrub_headers(headers: Iterable[tuple[str, str]], secret: frozenset[str]) -> dict[str, str]:
    """Lower-cased headers without the secret ones (repeated headers joined with ', ')."""
    out: dict[str, str] = {}
    for name, value in headers:
        key = name.lower()
        if key in secret:
            continue
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def scrub_url(url: str) -> str:
    """The URL without credential query parameters (`key=` and friends)."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    kept = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k.lower() not in SECRET_QUERY_PARAMS
    ]
    return urlunsplit(parts._replace(query=urlencode(kept)))


def find_key(text: str) -> str | None:
    """A short, masked excerpt of the first key-like string in `text`, or None."""
    for pattern in KEY_PATTERNS:
        match = pattern.search(text)
        if match:
            found = match.group(0)
            return f"{found[:8]}…({len(found)} chars)"
    return None


def secret_values(env: Mapping[str, str], names: Iterable[str]) -> list[str]:
    """The values of the given environment variables that are long enough to be real keys."""
    return [env[n] for n in names if len(env.get(n, "")) >= 8]
