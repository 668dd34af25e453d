"""A vcrpy serializer for our cassettes, so stock vcrpy (and pytest-recording) can play them:

    import vcr
    from harness.cassettes import vcr_serializer
    my_vcr = vcr.VCR(serializer="harness")
    my_vcr.register_serializer("harness", vcr_serializer)

vcrpy wants each body as a string (`body` / `body.string`); ours are stored parsed or as SSE
events, so `deserialize` rebuilds the bytes, and `serialize` stores what vcrpy recorded the way
we do, with the same scrubbing and key scan as `harness record`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from harness.cassettes.build import (
    REQUEST_HEADERS,
    RESPONSE_HEADER_PREFIXES,
    RESPONSE_HEADERS,
    kept_headers,
)
from harness.cassettes.cassette import FORMAT_VERSION, cassette_from_yaml, interaction_to_yaml
from harness.cassettes.files import dump_yaml, parse_yaml
from harness.cassettes.sse import body_from_text
from harness.scrub import scrub_url


def deserialize(cassette_string: str) -> dict[str, Any]:
    cassette = cassette_from_yaml("<vcrpy>", parse_yaml("<vcrpy>", cassette_string))
    interactions = []
    for interaction in cassette.interactions:
        req, resp = interaction.request, interaction.response
        interactions.append(
            {
                "request": {
                    "method": req.method,
                    "uri": req.uri,
                    "body": req.content() or None,
                    "headers": {k: list(v) for k, v in req.headers.items()},
                },
                "response": {
                    "status": {"code": resp.status, "message": resp.reason},
                    "headers": {k: list(v) for k, v in resp.headers.items()},
                    "body": {"string": b"".join(resp.chunks()).decode()},
                },
            }
        )
    return {"version": FORMAT_VERSION, "interactions": interactions}


def serialize(cassette_dict: Mapping[str, Any]) -> str:
    from harness.cassettes.files import cassette_from_text, check_no_secret

    interactions = [_ours(raw) for raw in cassette_dict.get("interactions", [])]
    data = {"interactions": interactions, "version": FORMAT_VERSION}
    # Through our reader once more, so what vcrpy recorded is stored in our canonical form.
    cassette = cassette_from_text("<vcrpy>", dump_yaml(data))
    text = dump_yaml(
        {
            "interactions": [interaction_to_yaml(i) for i in cassette.interactions],
            "version": FORMAT_VERSION,
        }
    )
    check_no_secret("<vcrpy cassette>", text)
    return text


def _ours(raw: Mapping[str, Any]) -> dict[str, Any]:
    """One vcrpy interaction in our form, scrubbed as our own recordings are (headers by
    allowlist, credential query parameters dropped)."""
    request = dict(raw["request"])
    response = dict(raw["response"])
    request["uri"] = scrub_url(str(request["uri"]))
    request["headers"] = _allowed(request.get("headers"), REQUEST_HEADERS, ())
    response["headers"] = _allowed(
        response.get("headers"), RESPONSE_HEADERS, RESPONSE_HEADER_PREFIXES
    )
    body = request.pop("body", None)
    request.update(_parsed(body))
    resp_body = response.pop("body", {}) or {}
    text = _text(resp_body.get("string") if isinstance(resp_body, Mapping) else resp_body)
    content_type = ",".join(
        str(v)
        for k, vs in (response.get("headers") or {}).items()
        if k.lower() == "content-type"
        for v in (vs if isinstance(vs, list) else [vs])
    )
    if text and "text/event-stream" in content_type:
        from harness.cassettes.sse import body_to_yaml

        layout, events = body_to_yaml(body_from_text(text))
        response.update({"sse": layout, "events": events} if layout else {"events": events})
    else:
        response.update(_parsed(text))
    return {"request": request, "response": response}


def _allowed(
    headers: Any, allowed: frozenset[str], prefixes: tuple[str, ...]
) -> dict[str, list[str]]:
    pairs = [
        (str(name), str(value))
        for name, values in (headers or {}).items()
        for value in (values if isinstance(values, list) else [values])
    ]
    return {k: list(v) for k, v in kept_headers(pairs, allowed, prefixes).items()}


def _parsed(body: Any) -> dict[str, Any]:
    text = _text(body)
    if not text:
        return {"body": None}
    try:
        return {"parsed_body": json.loads(text)}
    except json.JSONDecodeError:
        return {"body": {"string": text}}


def _text(body: Any) -> str | None:
    if isinstance(body, bytes):
        return body.decode("utf-8", "replace")
    return body if isinstance(body, str) or body is None else str(body)
