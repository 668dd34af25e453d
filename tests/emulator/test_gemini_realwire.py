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
from tests.conftest import REALWIRE_BATCHES, realwire_files
from tests.emulator.gemini_fixtures import ctx_for
from tests.emulator.test_gemini_render import rendered

FILES = realwire_files("google")
GOOGLE = [str(b / "google") for b in REALWIRE_BATCHES]
needs_realwire = pytest.mark.skipif(not FILES, reason=f"realwire folders absent: {GOOGLE}")


def _recorded() -> list[Any]:
    return [
        pytest.param(ex, id=f"{path.stem[:48]}#{ex.index}")
        for path in FILES
        for ex in read_cassette(path)
    ]


def _ctx_of(uri: str) -> Context:
    url = urlsplit(uri)
    match = re.search(r"/models/([^/:]+):(\w+)$", url.path)
    assert match is not None
    ctx = ctx_for(match[1], stream=match[2] == "streamGenerateContent")
    return dataclasses.replace(ctx, query=dict(parse_qsl(url.query)))


@needs_realwire
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


@needs_realwire
def test_realwire_holds_no_recorded_400() -> None:
    """Were one recorded, it would need its message compared here."""
    statuses = {ex.status for p in FILES for ex in read_cassette(p)}
    assert statuses == {200}


@needs_realwire
def test_realwire_gemini3_requests_without_their_signatures_get_g3() -> None:
    """Derived: the accepted gemini-3 round-2 requests with the signature stripped."""
    checked = 0
    for path in [p for p in FILES if "gemini-3" in p.name]:
        for ex in read_cassette(path):
            body = copy.deepcopy(ex.request_json)
            # G3 asks the current turn's steps to be signed: the model contents after the
            # last user content with text (realwire2's 3.6 file adds one between rounds)
            texts = [
                n
                for n, c in enumerate(body["contents"])
                if c.get("role") == "user" and any("text" in p for p in c["parts"])
            ]
            current = body["contents"][texts[-1] + 1 :]
            model_turns = [c for c in current if c.get("role") == "model"]
            if not model_turns:
                continue
            for content in model_turns:
                for part in content["parts"]:
                    part.pop("thoughtSignature", None)
            err = API.validate(body, _ctx_of(ex.uri))
            assert err is not None and err.rule == "G3", path.name
            checked += 1
    assert checked >= 3


@needs_realwire
def test_rendered_key_order_matches_recorded_stream_chunks() -> None:
    """llm-gemini files keep the API's own key order (the array stream, unsorted)."""
    recorded = [
        chunk
        for path in [p for p in FILES if p.name.startswith("llm-gemini__")]
        for ex in read_cassette(path)
        for chunk in json.loads(ex.response_text)
    ]
    ours = json.loads(rendered(ctx_for(stream=True))[1])
    assert {tuple(c) for c in recorded} == {tuple(c) for c in ours}
    with_finish = [c["candidates"][0] for c in recorded if "finishReason" in c["candidates"][0]]
    order = [k for k in ("content", "finishReason", "index", "finishMessage")]
    assert all([k for k in order if k in c] == list(c) for c in with_finish)
    assert list(ours[-1]["candidates"][0]) == order
