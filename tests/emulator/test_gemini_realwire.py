"""The Gemini realwire recordings against the emulator: every request the real API answered
200 is accepted, the gemini-3 ones fail G3 once their signatures are stripped, and the emulator's
chunks keep the recorded key order."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from harness.cassettes.read import read_cassette
from harness.emulator.gemini_api import API
from harness.emulator.wire import Context
from tests.conftest import REALWIRE
from tests.emulator.gemini_fixtures import ctx_for
from tests.emulator.test_gemini_render import rendered

GOOGLE = REALWIRE / "google"


def _recorded() -> list[Any]:
    if not GOOGLE.is_dir():
        return []
    return [
        pytest.param(ex, id=f"{path.stem[:48]}#{ex.index}")
        for path in sorted(GOOGLE.glob("*.yaml"))
        for ex in read_cassette(path)
    ]


def _ctx_of(uri: str) -> Context:
    url = urlsplit(uri)
    match = re.search(r"/models/([^/:]+):(\w+)$", url.path)
    assert match is not None
    ctx = ctx_for(match[1], stream=match[2] == "streamGenerateContent")
    return dataclasses.replace(ctx, query=dict(parse_qsl(url.query)))


@pytest.mark.skipif(not GOOGLE.is_dir(), reason=f"realwire folder absent: {GOOGLE}")
@pytest.mark.parametrize("exchange", _recorded())
def test_realwire_requests_are_answered_as_recorded(exchange: Any) -> None:
    """200: accepted. A recorded 4xx (none so far) must get the recorded message."""
    err = API.validate(exchange.request_json, _ctx_of(exchange.uri))
    if exchange.status == 200:
        assert err is None
        return
    recorded = exchange.response_json
    recorded = recorded[0] if isinstance(recorded, list) else recorded
    assert err is not None and err.message == recorded["error"]["message"]


@pytest.mark.skipif(not GOOGLE.is_dir(), reason=f"realwire folder absent: {GOOGLE}")
def test_realwire_holds_no_recorded_400() -> None:
    """Were one recorded, it would need its message compared here."""
    statuses = {ex.status for p in GOOGLE.glob("*.yaml") for ex in read_cassette(p)}
    assert statuses == {200}


@pytest.mark.skipif(not GOOGLE.is_dir(), reason=f"realwire folder absent: {GOOGLE}")
def test_realwire_gemini3_requests_without_their_signatures_get_g3() -> None:
    """Derived: the accepted gemini-3 round-2 requests with the signature stripped."""
    checked = 0
    for path in sorted(GOOGLE.glob("*gemini-3*.yaml")):
        for ex in read_cassette(path):
            body = copy.deepcopy(ex.request_json)
            model_turns = [c for c in body["contents"] if c.get("role") == "model"]
            if not model_turns:
                continue
            for content in model_turns:
                for part in content["parts"]:
                    part.pop("thoughtSignature", None)
            err = API.validate(body, _ctx_of(ex.uri))
            assert err is not None and err.rule == "G3", path.name
            checked += 1
    assert checked >= 3


@pytest.mark.skipif(not GOOGLE.is_dir(), reason=f"realwire folder absent: {GOOGLE}")
def test_rendered_key_order_matches_recorded_stream_chunks() -> None:
    """llm-gemini files keep the API's own key order (the array stream, unsorted)."""
    recorded = [
        chunk
        for path in sorted(GOOGLE.glob("llm-gemini__*.yaml"))
        for ex in read_cassette(path)
        for chunk in json.loads(ex.response_text)
    ]
    ours = json.loads(rendered(ctx_for(stream=True))[1])
    assert {tuple(c) for c in recorded} == {tuple(c) for c in ours}
    with_finish = [c["candidates"][0] for c in recorded if "finishReason" in c["candidates"][0]]
    order = [k for k in ("content", "finishReason", "index", "finishMessage")]
    assert all([k for k in order if k in c] == list(c) for c in with_finish)
    assert list(ours[-1]["candidates"][0]) == order
