"""SSE bodies kept as events rebuild the exact bytes: every real stream in realwire, through
our YAML and back; and the frames outside the grammar are kept verbatim."""

from __future__ import annotations

import pytest
import yaml

from harness.cassettes.files import Loader, dump_yaml
from harness.cassettes.read import read_cassette
from harness.cassettes.sse import (
    CRLF_SEPARATOR,
    body_from_text,
    body_from_yaml,
    body_to_yaml,
    whitespace_insertions,
)
from tests.conftest import REALWIRE_BATCHES, realwire_files


def _realwire_streams() -> list[tuple[str, str]]:
    out = []
    for path in realwire_files():
        for exchange in read_cassette(path):
            if "event-stream" in (exchange.header("content-type") or ""):
                out.append((f"{path.name}#{exchange.index + 1}", exchange.response_text))
    return out


STREAMS = _realwire_streams()


def _through_yaml(text: str) -> str:
    layout, events = body_to_yaml(body_from_text(text))
    loaded = yaml.load(dump_yaml({"sse": layout, "events": events}), Loader=Loader)
    return body_from_yaml(loaded["sse"], loaded["events"]).text()


@pytest.mark.skipif(
    not STREAMS, reason=f"no realwire folder in {[str(b) for b in REALWIRE_BATCHES]}"
)
@pytest.mark.parametrize(("name", "text"), STREAMS, ids=[n for n, _ in STREAMS])
def test_real_streams_round_trip_byte_for_byte(name: str, text: str) -> None:
    body = body_from_text(text)
    assert _through_yaml(text) == text
    assert all(e.raw is None for e in body.events), "every real frame is stored parsed"


@pytest.mark.parametrize(
    ("text", "separator", "raw_frames"),
    [
        ('event: ping\ndata: {"type":"ping"}\n\n', "\n\n", 0),
        ('data: {"a": 1,"b": [1, 2]}\r\n\r\n', CRLF_SEPARATOR, 0),  # Gemini's mixed spacing
        ('event: x\ndata: {"a":1}   \n\n', "\n\n", 0),  # Anthropic's padding
        ('data: {"t":"caf\\u00e9"}\n\n', "\n\n", 0),  # escaped non-ASCII
        ("data: [DONE]\n\n", "\n\n", 0),
        (": keep-alive comment\n\n", "\n\n", 1),
        ('data: {"a":\ndata: 1}\n\n', "\n\n", 1),  # a multi-line data field
        ('data: {"a":1}\n\ndata: {"b"', "\n\n", 0),  # cut: the tail is kept
    ],
)
def test_frames_rebuild_exactly(text: str, separator: str, raw_frames: int) -> None:
    body = body_from_text(text)
    assert body.separator == separator
    assert sum(1 for e in body.events if e.raw is not None) == raw_frames
    assert body.text() == text
    assert _through_yaml(text) == text


def test_chunks_are_one_event_each() -> None:
    text = 'event: a\ndata: {"x":1}\n\nevent: b\ndata: {"y":2}\n\n'
    assert body_from_text(text).chunks() == [
        b'event: a\ndata: {"x":1}\n\n',
        b'event: b\ndata: {"y":2}\n\n',
    ]


def test_whitespace_insertions() -> None:
    assert whitespace_insertions('{"a": 1}', '{"a":1}') == ((5, " "),)
    assert whitespace_insertions('{"a":2}', '{"a":1}') is None


@pytest.mark.parametrize(
    ("layout", "events", "problem"),
    [
        (None, [{"event": "x"}], "event 1: missing `data`"),
        (None, [{"data": 1, "colour": "red"}], "unknown event key"),
        (None, "not a list", "`events` must be a list"),
        ({"separator": "\n"}, [], "sse separator"),
        (None, [{"data": {}, "ws": [["a", " "]]}], "ws entries"),
    ],
)
def test_malformed_events_say_what(layout: object, events: object, problem: str) -> None:
    with pytest.raises((ValueError, TypeError), match=problem):
        body_from_yaml(layout, events)
