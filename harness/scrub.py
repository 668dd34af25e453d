"""One scrubbing policy for everything the harness writes or prints.

- **Headers by allowlist.** Only headers named here survive capture, logs, cassettes, results and
  reports; a credential in a header nobody thought of (a gateway's `helicone-auth`, Azure's
  `ocp-apim-subscription-key`, a proxy's `x-custom-auth`) never reaches a file.
- **Query parameters by allowlist.** Only `alt`, `beta` and `api-version` are kept; every other
  parameter (`key`, `token`, `sig`, `apikey`, …) is dropped from every URL that is kept.
- **No userinfo in any URL** (`http://user:pw@host` → `http://host`).
- **A last scan on every text before it is visible.** Cassettes holding anything key-shaped (or
  the value of a secret-looking environment variable) are refused; results, reports, JUnit and
  console lines have such strings replaced by `[REDACTED]`.

Encrypted reasoning and thought signatures are not secrets and are kept byte-exact (standard
base64 has no `-`, so they cannot hold an `sk-` key shape).
"""

from __future__ import annotations

import io
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TextIO
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# Request headers that carry no credential and that a reader, a replaying SDK or a check needs
# (providers.md §7: the SDKs' protocol headers). The `x-stainless-` ones are the OpenAI and
# Anthropic SDKs' own (retry count, timeout, platform); `x-goog-api-client` is how a check tells
# google-genai's automatic function calling (its AFC mark).
REQUEST_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "content-type",
        "content-length",
        "anthropic-version",
        "anthropic-beta",
        "openai-beta",
        "user-agent",
        "x-goog-api-client",
    }
)
REQUEST_HEADER_PREFIXES = ("x-stainless-",)
# retry-after / x-should-retry steer the SDKs' retries; the ids help a reader find the call in
# the provider's console; rate-limit headers explain a 429.
RESPONSE_HEADERS = frozenset(
    {
        "content-type",
        "content-length",
        "content-encoding",
        "transfer-encoding",
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
# Gemini's `alt=sse` chooses the stream framing; `beta=true` marks the Anthropic SDK's beta
# calls; `api-version` is Azure OpenAI's. Everything else in a query may be a credential.
QUERY_PARAMS = frozenset({"alt", "$alt", "beta", "api-version"})

REDACTED = "[REDACTED]"

# Shapes of real provider keys; a cassette holding one of these is never written.
# The generic ones start at a word boundary, so words like "task-oriented-…" or
# "risk-adjusted-…" are not mistaken for an `sk-` key, and a base64 thought signature is not
# mistaken for an `AIza` key; an `sk-` key needs a digit, as real (random) ones have. The
# prefixed OpenAI and Anthropic shapes are distinctive enough to be found anywhere, even glued
# to a word (`key%3Dsk-ant-…` in an encoded query).
_START = r"(?<![A-Za-z0-9_\-])"
KEY_PATTERNS = (
    re.compile(r"sk-(?:ant|proj|svcacct|admin)-(?=[A-Za-z_\-]*[0-9])[A-Za-z0-9_\-]{16,}"),
    re.compile(_START + r"sk-(?=[A-Za-z_\-]*[0-9])[A-Za-z0-9_\-]{20,}"),
    re.compile(_START + r"AIza[0-9A-Za-z_\-]{30,}"),
    re.compile(_START + r"ya29\.[0-9A-Za-z_\-]{20,}"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9_\-\.=]{16,}"),
)
# Environment variables whose values are treated as secrets wherever they appear.
SECRET_VARIABLE = re.compile(r"(?i)(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)")
MIN_SECRET_LENGTH = 8  # shorter values ("1", "true") would redact ordinary words
USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/?#\s@]+@")


def kept_request_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Lower-cased request headers on the allowlist (repeated ones joined with ', ')."""
    return _joined(headers, REQUEST_HEADERS, REQUEST_HEADER_PREFIXES)


def kept_response_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    return _joined(headers, RESPONSE_HEADERS, RESPONSE_HEADER_PREFIXES)


def _joined(
    headers: Iterable[tuple[str, str]], allowed: frozenset[str], prefixes: tuple[str, ...]
) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in headers:
        key = name.lower()
        if key in allowed or key.startswith(prefixes):
            out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def kept_query(query: Iterable[tuple[str, str]]) -> dict[str, str]:
    return {k: v for k, v in query if k.lower() in QUERY_PARAMS}


def scrub_url(url: str) -> str:
    """`url` without userinfo and with only allowlisted query parameters; never raises (a URL
    that does not parse, like `http://[::1`, loses everything after its host part)."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc.rpartition("@")[2]
        if not parts.query and netloc == parts.netloc:
            return url
        kept = kept_query(parse_qsl(parts.query, keep_blank_values=True))
        return urlunsplit(parts._replace(netloc=netloc, query=urlencode(kept), fragment=""))
    except ValueError:
        without_user = re.sub(r"//[^/?#]*@", "//", url)
        return re.split(r"[?#]", without_user, maxsplit=1)[0]


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
    return [env[n] for n in names if len(env.get(n, "")) >= MIN_SECRET_LENGTH]


def environment_secrets(env: Mapping[str, str] | None = None) -> list[str]:
    """Values of every secret-looking variable (`*KEY*`, `*TOKEN*`, `*SECRET*`, …), longest
    first so a value that contains another is replaced whole."""
    env = os.environ if env is None else env
    names = [n for n in env if SECRET_VARIABLE.search(n)]
    return sorted(set(secret_values(env, names)), key=len, reverse=True)


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """`text` with every key-shaped string and every known secret value replaced by
    `[REDACTED]`. `secrets` defaults to the environment's (`environment_secrets`)."""
    known = environment_secrets() if secrets is None else secrets
    for value in known:
        if value and value in text:
            text = text.replace(value, REDACTED)
    for pattern in KEY_PATTERNS:
        text = pattern.sub(REDACTED, text)
    return USERINFO.sub(r"\1", text)


class RedactingWriter(io.TextIOBase):
    """A text stream that redacts each line before passing it on. Whole lines are redacted
    (a key split over two writes is still caught); `\\r` progress updates count as line ends."""

    def __init__(self, inner: TextIO, secrets: list[str]) -> None:
        self.inner, self.secrets = inner, secrets
        self.pending = ""

    def write(self, text: str) -> int:
        self.pending += text
        cut = max(self.pending.rfind("\n"), self.pending.rfind("\r"))
        if cut >= 0:
            ready, self.pending = self.pending[: cut + 1], self.pending[cut + 1 :]
            self.inner.write(redact(ready, self.secrets))
        return len(text)

    def flush(self) -> None:
        if self.pending:
            self.inner.write(redact(self.pending, self.secrets))
            self.pending = ""
        self.inner.flush()

    def isatty(self) -> bool:
        return self.inner.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.inner, "encoding", "utf-8")


@contextmanager
def redacted_output() -> Iterator[None]:
    """stdout and stderr redacted for the duration (the CLI runs every command inside)."""
    secrets = environment_secrets()
    saved = sys.stdout, sys.stderr
    out, err = RedactingWriter(saved[0], secrets), RedactingWriter(saved[1], secrets)
    sys.stdout, sys.stderr = out, err
    try:
        yield
    finally:
        out.flush()
        err.flush()
        sys.stdout, sys.stderr = saved
