"""Read any vcrpy cassette (ours or another project's) into decoded exchanges.

Handles the body forms seen in the wild: JSON stored parsed (`parsed_body`), JSON as an
escaped string (`body: '...'` or `body: {string: ...}`), `!!binary` gzip bodies, and SSE text;
and ours: SSE stored as its events (`events:`, rebuilt to the exact text by `sse.py`).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.cassettes.cassette import (
    headers_field,
    json_body,
    mapping_field,
    text_field,
    uri_field,
)
from harness.errors import CassetteError
from harness.limits import MAX_DOCUMENT_DEPTH, LimitError, decompress
from harness.safe_yaml import load_yaml, yaml_problem


@dataclass(frozen=True, kw_only=True)
class RecordedExchange:
    index: int
    method: str
    uri: str
    request_headers: Mapping[str, tuple[str, ...]]
    request_json: Any  # the decoded JSON body, or None when the body is empty or not JSON
    request_text: str
    status: int
    response_headers: Mapping[str, tuple[str, ...]]
    response_text: str
    response_json: Any  # decoded JSON, or None for SSE / non-JSON bodies

    def header(self, name: str, response: bool = True) -> str | None:
        headers = self.response_headers if response else self.request_headers
        for key, values in headers.items():
            if key.lower() == name.lower() and values:
                return values[0]
        return None


def read_cassette(path: str | Path) -> list[RecordedExchange]:
    """Every interaction of the file, decoded; one CassetteError (file, interaction, field)
    for anything else: a file past the limits (`harness.limits`), not UTF-8, not YAML, or
    YAML of the wrong shape."""
    from harness.cassettes.files import read_cassette_text

    file = str(path)
    text = read_cassette_text(file)
    try:
        data = load_yaml(text, MAX_DOCUMENT_DEPTH)
    except yaml.YAMLError as exc:
        raise CassetteError(f"{file}: not valid YAML: {yaml_problem(exc, text)}") from None
    except LimitError as exc:
        raise CassetteError(f"{file}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise CassetteError(f"{file}: not a vcrpy cassette (no top-level `interactions:` list)")
    return [_exchange(file, i, raw) for i, raw in enumerate(data["interactions"])]


def _exchange(file: str, index: int, raw: Any) -> RecordedExchange:
    where = f"{file}: interaction {index + 1}"
    try:
        return _decoded(index, raw)
    except (OSError, EOFError, zlib.error) as exc:
        raise CassetteError(f"{where}: unreadable body ({type(exc).__name__}: {exc})") from None
    except LimitError as exc:
        raise CassetteError(f"{where}: {exc}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise CassetteError(f"{where}: malformed interaction: {_problem(exc)}") from None


def _decoded(index: int, raw: Any) -> RecordedExchange:
    if not isinstance(raw, Mapping):
        raise TypeError(f"an interaction must be a mapping, not {type(raw).__name__}")
    req, resp = mapping_field(raw, "request", ""), mapping_field(raw, "response", "")
    status = mapping_field(resp, "status", "response.")
    req_headers = headers_field(req.get("headers"), "request")
    resp_headers = headers_field(resp.get("headers"), "response")
    req_text = _body_text(req, req_headers, "request")
    resp_text = _body_text(resp, resp_headers, "response")
    code = status.get("code")
    if not isinstance(code, int) or isinstance(code, bool):
        raise TypeError(f"`response.status.code` must be a number, not {code!r}")
    return RecordedExchange(
        index=index,
        method=text_field(req, "method", "request."),
        uri=uri_field(req, "request."),
        request_headers=req_headers,
        request_json=_json_or_none(req_text, "request"),
        request_text=req_text,
        status=code,
        response_headers=resp_headers,
        response_text=resp_text,
        response_json=None if _is_sse(resp_headers) else _json_or_none(resp_text, "response"),
    )


def _problem(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing `{exc.args[0]}`"
    return str(exc)


def _body_text(part: Mapping[str, Any], headers: Mapping[str, tuple[str, ...]], where: str) -> str:
    if "events" in part:
        from harness.cassettes.sse import body_from_yaml

        try:
            return body_from_yaml(part.get("sse"), part["events"]).text()
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{where}.events: {_problem(exc)}") from None
    if "parsed_body" in part:
        try:
            return json.dumps(part["parsed_body"], ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}.parsed_body is not JSON: {exc}") from None
    body = part.get("body")
    if isinstance(body, Mapping):
        body = body.get("string")
    if body is None:
        return ""
    if isinstance(body, str):
        return body
    if isinstance(body, bytes):
        return _decode_bytes(body, headers)
    raise TypeError(f"`{where}.body` must be text, not {type(body).__name__}")


def _decode_bytes(data: bytes, headers: Mapping[str, tuple[str, ...]]) -> str:
    """A `!!binary` body: gzip or deflate inflated (at most `MAX_BODY_BYTES`), as UTF-8."""
    if data[:2] == b"\x1f\x8b" or any(
        v == "deflate" for k, vs in headers.items() if k.lower() == "content-encoding" for v in vs
    ):
        data = decompress(data)
    return data.decode("utf-8")


def _is_sse(headers: Mapping[str, tuple[str, ...]]) -> bool:
    return any(
        "text/event-stream" in v
        for k, vs in headers.items()
        if k.lower() == "content-type"
        for v in vs
    )


def _json_or_none(text: str, where: str) -> Any:
    """The body's JSON, None when it is empty or not JSON; ValueError past the limits."""
    if not text.strip():
        return None
    try:
        return json_body(text, f"{where}.body")
    except json.JSONDecodeError:
        return None
