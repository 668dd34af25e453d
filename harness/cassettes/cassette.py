"""Our cassette: vcrpy's YAML layout (top-level `interactions:` and `version: 1`; each with
`request {method, uri, headers, body}` and `response {status {code, message}, headers, body}`),
with JSON bodies stored parsed under `parsed_body` (as pydantic-ai does), SSE bodies stored as
their events (`events:`, see `sse.py`) and a top-level `harness:` mapping saying where the
recording came from. Headers are lists of strings, as vcrpy writes them.

Stock vcrpy files (bodies as strings, even `!!binary` gzip) load too, so a cassette recorded by
another tool can be replayed.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness.cassettes.sse import SseBody, body_from_yaml, body_to_yaml, compact_json
from harness.errors import CassetteError
from harness.limits import LimitError, decompress, loads_json

FORMAT_VERSION = 1
META_KEY = "harness"


@dataclass(frozen=True, kw_only=True)
class CassetteMeta:
    source: str  # "scripted" (the emulator) or "live" (the real API)
    provider: str
    model: str
    scenario: str
    stream: bool
    recorded: str  # ISO date (UTC)
    sdk: Mapping[str, str] = field(default_factory=dict)  # distribution -> version

    def to_yaml(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "provider": self.provider,
            "model": self.model,
            "scenario": self.scenario,
            "stream": self.stream,
            "recorded": self.recorded,
            "sdk": dict(self.sdk),
        }


@dataclass(frozen=True, kw_only=True)
class RecordedRequest:
    method: str
    uri: str
    headers: Mapping[str, tuple[str, ...]]
    body: Any  # decoded JSON when `is_json`, else the text (None: no body)
    is_json: bool

    def content(self) -> bytes:
        if self.body is None:
            return b""
        return (compact_json(self.body) if self.is_json else str(self.body)).encode()


@dataclass(frozen=True, kw_only=True)
class RecordedResponse:
    status: int
    reason: str
    headers: Mapping[str, tuple[str, ...]]
    json: Any = None  # the parsed JSON body (when `sse` and `text` are None)
    text: str | None = None  # a body that is not JSON
    sse: SseBody | None = None

    def chunks(self) -> list[bytes]:
        """The body as the API sent it: one chunk per event for a stream."""
        if self.sse is not None:
            return self.sse.chunks()
        if self.text is not None:
            return [self.text.encode()]
        return [] if self.json is None else [compact_json(self.json).encode()]


@dataclass(frozen=True, kw_only=True)
class Interaction:
    number: int  # 1-based, as people count them in the file
    request: RecordedRequest
    response: RecordedResponse


@dataclass(frozen=True, kw_only=True)
class Cassette:
    path: str
    meta: CassetteMeta | None
    interactions: tuple[Interaction, ...]

    def to_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.meta is not None:
            out[META_KEY] = self.meta.to_yaml()
        out["interactions"] = [interaction_to_yaml(i) for i in self.interactions]
        out["version"] = FORMAT_VERSION
        return out


def cassette_path(folder: str | Path, provider: str, scenario_id: str, stream: bool) -> Path:
    """`<folder>/<provider>/<scenario_id>[.stream].yaml`."""
    return Path(folder) / provider / f"{scenario_id}{'.stream' if stream else ''}.yaml"


def interaction_to_yaml(interaction: Interaction) -> dict[str, Any]:
    req, resp = interaction.request, interaction.response
    request: dict[str, Any] = {
        "method": req.method,
        "uri": req.uri,
        "headers": {k: list(v) for k, v in req.headers.items()},
    }
    request.update(_body_to_yaml(req.body, req.is_json))
    response: dict[str, Any] = {
        "status": {"code": resp.status, "message": resp.reason},
        "headers": {k: list(v) for k, v in resp.headers.items()},
    }
    if resp.sse is not None:
        layout, events = body_to_yaml(resp.sse)
        if layout:
            response["sse"] = layout
        response["events"] = events
    elif resp.text is not None:
        response["body"] = {"string": resp.text}
    else:
        response.update(_body_to_yaml(resp.json, True))
    return {"request": request, "response": response}


def _body_to_yaml(body: Any, is_json: bool) -> dict[str, Any]:
    if body is None:
        return {"body": None}
    return {"parsed_body": body} if is_json else {"body": str(body)}


def cassette_from_yaml(path: str, data: Any) -> Cassette:
    """A loaded YAML document as a cassette; CassetteError naming the file, the interaction
    and the field when it is not one."""
    if not isinstance(data, Mapping) or not isinstance(data.get("interactions"), list):
        raise CassetteError(f"{path}: not a vcrpy cassette (no top-level `interactions:` list)")
    if data.get("version", FORMAT_VERSION) != FORMAT_VERSION:
        raise CassetteError(f"{path}: cassette format version {data.get('version')!r}, not 1")
    meta = _meta(path, data.get(META_KEY))
    interactions = []
    for number, raw in enumerate(data["interactions"], 1):
        try:
            interactions.append(_interaction(number, raw))
        except (KeyError, TypeError, ValueError, OSError, EOFError, zlib.error) as exc:
            raise CassetteError(
                f"{path}: interaction {number}: {_problem(exc)}; fix the file or re-record it "
                "with `harness record`"
            ) from None
    return Cassette(path=path, meta=meta, interactions=tuple(interactions))


def _meta(path: str, raw: Any) -> CassetteMeta | None:
    if raw is None:
        return None
    try:
        if not isinstance(raw, Mapping):
            raise TypeError("must be a mapping")
        stream = raw["stream"]
        if not isinstance(stream, bool):
            raise TypeError("`stream` must be true or false")
        sdk = raw.get("sdk") or {}
        return CassetteMeta(
            source=str(raw["source"]),
            provider=str(raw["provider"]),
            model=str(raw["model"]),
            scenario=str(raw["scenario"]),
            stream=stream,
            recorded=str(raw.get("recorded", "")),
            sdk={str(k): str(v) for k, v in sdk.items()},
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise CassetteError(f"{path}: `{META_KEY}:` metadata: {_problem(exc)}") from None


def _interaction(number: int, raw: Any) -> Interaction:
    if not isinstance(raw, Mapping):
        raise TypeError(f"an interaction must be a mapping, not {type(raw).__name__}")
    req, resp = mapping_field(raw, "request", ""), mapping_field(raw, "response", "")
    status = mapping_field(resp, "status", "response.")
    req_headers = headers_field(req.get("headers"), "request")
    resp_headers = headers_field(resp.get("headers"), "response")
    body, is_json = _request_body(req, req_headers)
    return Interaction(
        number=number,
        request=RecordedRequest(
            method=text_field(req, "method", "request."),
            uri=uri_field(req, "request."),
            headers=req_headers,
            body=body,
            is_json=is_json,
        ),
        response=_response(resp, status, resp_headers),
    )


def _response(
    resp: Mapping[str, Any], status: Mapping[str, Any], headers: Mapping[str, tuple[str, ...]]
) -> RecordedResponse:
    code = status.get("code")
    if not isinstance(code, int) or not 100 <= code <= 599:
        raise ValueError(f"response.status.code must be an HTTP status, not {code!r}")
    common: dict[str, Any] = {
        "status": code,
        "reason": str(status.get("message") or ""),
        "headers": headers,
    }
    if "events" in resp:
        try:
            sse = body_from_yaml(resp.get("sse"), resp["events"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"response.events: {_problem(exc)}") from None
        return RecordedResponse(**common, sse=sse)
    if "parsed_body" in resp:
        _check_json(resp["parsed_body"], "response.parsed_body")
        return RecordedResponse(**common, json=resp["parsed_body"])
    text = _body_text(resp.get("body"), headers)
    if text is None:
        return RecordedResponse(**common)
    if _is_sse(headers):
        from harness.cassettes.sse import body_from_text

        return RecordedResponse(**common, sse=body_from_text(text))
    try:
        return RecordedResponse(**common, json=json_body(text, "response.body"))
    except json.JSONDecodeError:
        return RecordedResponse(**common, text=text)


def _request_body(req: Mapping[str, Any], headers: Mapping[str, tuple[str, ...]]) -> Any:
    if "parsed_body" in req:
        _check_json(req["parsed_body"], "request.parsed_body")
        return req["parsed_body"], True
    text = _body_text(req.get("body"), headers)
    if text is None or text == "":
        return None, False
    try:
        return json_body(text, "request.body"), True
    except json.JSONDecodeError:
        return text, False


def _body_text(body: Any, headers: Mapping[str, tuple[str, ...]]) -> str | None:
    """A stock vcrpy body: a string, `{string: ...}`, or `!!binary` bytes (maybe gzip)."""
    if isinstance(body, Mapping):
        body = body.get("string")
    if body is None or isinstance(body, str):
        return body
    if isinstance(body, bytes):
        return (decompress(body) if body[:2] == b"\x1f\x8b" else body).decode("utf-8")
    raise TypeError(f"a body must be text, not {type(body).__name__}")


def json_body(text: str, where: str) -> Any:
    """A JSON body within the limits; JSONDecodeError when it is not JSON (kept as text),
    ValueError naming `where` when it is JSON past a limit (too deep, a lone surrogate)."""
    try:
        return loads_json(text)
    except LimitError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _check_json(value: Any, where: str) -> None:
    """Hand edits can leave values JSON cannot hold (a YAML date, a set): say where."""
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where} is not JSON: {exc}") from None


def headers_field(raw: Any, where: str) -> dict[str, tuple[str, ...]]:
    """vcrpy's headers: a mapping of name to a list of values (or one value)."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise TypeError(
            f"{where}.headers must be a mapping of name to list of values, not {type(raw).__name__}"
        )
    return {
        str(k): tuple(str(v) for v in (vs if isinstance(vs, list) else [vs]))
        for k, vs in raw.items()
    }


def _is_sse(headers: Mapping[str, tuple[str, ...]]) -> bool:
    return any(
        "text/event-stream" in v
        for k, vs in headers.items()
        if k.lower() == "content-type"
        for v in vs
    )


def mapping_field(parent: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = parent.get(key)
    if value is None:
        raise KeyError(f"{where}{key}")
    if not isinstance(value, Mapping):
        raise TypeError(f"`{where}{key}` must be a mapping, not {type(value).__name__}")
    return value


def text_field(parent: Mapping[str, Any], key: str, where: str) -> str:
    value = parent.get(key)
    if value is None:
        raise KeyError(f"{where}{key}")
    if not isinstance(value, str) or not value:
        raise TypeError(f"`{where}{key}` must be a non-empty string, not {_short(value)}")
    return value


def uri_field(parent: Mapping[str, Any], where: str) -> str:
    """The request's URL, parsed once here so nothing later trips on it (`http://[::1`)."""
    uri = text_field(parent, "uri", where)
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 -- parsing the port is the check (`http://h:x/` is refused)
    except ValueError as exc:
        raise ValueError(f"`{where}uri` is not a valid URL ({exc}): {_short(uri)}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"`{where}uri` must be an http(s) URL with a host, not {_short(uri)}")
    return uri


def _short(value: Any, keep: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= keep else text[:keep] + "…"


def _problem(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return f"missing `{exc.args[0]}`"
    return str(exc)
