"""Read any vcrpy cassette (ours or another project's) into decoded exchanges.

Handles the body forms seen in the wild: JSON stored parsed (`parsed_body`), JSON as an
escaped string (`body: '...'` or `body: {string: ...}`), `!!binary` gzip bodies, and SSE text;
and ours: SSE stored as its events (`events:`, rebuilt to the exact text by `sse.py`).
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.errors import CassetteError


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
    file = str(path)
    try:
        data = yaml.safe_load(Path(path).read_text("utf-8"))
    except OSError as exc:
        raise CassetteError(f"{file}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise CassetteError(f"{file}: not valid YAML: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise CassetteError(f"{file}: not a vcrpy cassette (no top-level `interactions:` list)")
    return [_exchange(file, i, raw) for i, raw in enumerate(data["interactions"])]


def _exchange(file: str, index: int, raw: Any) -> RecordedExchange:
    where = f"{file}: interaction {index + 1}"
    try:
        req, resp = raw["request"], raw["response"]
        req_headers = _headers(req.get("headers"))
        resp_headers = _headers(resp.get("headers"))
        req_text = _body_text(req, req_headers)
        resp_text = _body_text(resp, resp_headers)
        return RecordedExchange(
            index=index,
            method=str(req["method"]),
            uri=str(req["uri"]),
            request_headers=req_headers,
            request_json=_json_or_none(req_text),
            request_text=req_text,
            status=int(resp["status"]["code"]),
            response_headers=resp_headers,
            response_text=resp_text,
            response_json=None if _is_sse(resp_headers) else _json_or_none(resp_text),
        )
    except (OSError, EOFError, zlib.error) as exc:
        raise CassetteError(f"{where}: unreadable body ({type(exc).__name__}: {exc})") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise CassetteError(
            f"{where}: malformed interaction ({type(exc).__name__}: {exc})"
        ) from None


def _headers(raw: Any) -> dict[str, tuple[str, ...]]:
    if not raw:
        return {}
    return {
        str(k): tuple(str(v) for v in (vs if isinstance(vs, list) else [vs]))
        for k, vs in raw.items()
    }


def _body_text(part: Mapping[str, Any], headers: Mapping[str, tuple[str, ...]]) -> str:
    if "events" in part:
        from harness.cassettes.sse import body_from_yaml

        return body_from_yaml(part.get("sse"), part["events"]).text()
    if "parsed_body" in part:
        return json.dumps(part["parsed_body"], ensure_ascii=False)
    body = part.get("body")
    if isinstance(body, Mapping):
        body = body.get("string")
    if body is None:
        return ""
    if isinstance(body, str):
        return body
    if isinstance(body, bytes):
        return _decode_bytes(body, headers)
    raise ValueError(f"unexpected body type {type(body).__name__}")


def _decode_bytes(data: bytes, headers: Mapping[str, tuple[str, ...]]) -> str:
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    elif any(
        v == "deflate" for k, vs in headers.items() if k.lower() == "content-encoding" for v in vs
    ):
        data = zlib.decompress(data)
    return data.decode("utf-8")


def _is_sse(headers: Mapping[str, tuple[str, ...]]) -> bool:
    return any(
        "text/event-stream" in v
        for k, vs in headers.items()
        if k.lower() == "content-type"
        for v in vs
    )


def _json_or_none(text: str) -> Any:
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None
