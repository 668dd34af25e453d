"""The cassette file: our format reads back (by us, by `read_cassette`, by vcrpy), foreign
vcrpy cassettes load and replay, and a broken or hand-edited file is one clear error naming
the file, the interaction and the field."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
import pytest
import vcr

from harness.cassettes import vcr_serializer
from harness.cassettes.cassette import cassette_path
from harness.cassettes.files import cassette_from_text, dump_cassette, load_cassette
from harness.cassettes.read import read_cassette
from harness.cassettes.replay import ReplayApp
from harness.emulator.server import Emulator
from harness.errors import CassetteError
from tests.cassettes.conftest import Library
from tests.conftest import REALWIRE_BATCHES, realwire_files
from tests.endpoint.support import serving

REALWIRE_FILES = realwire_files()


def _paths(lib: Library) -> list[Path]:
    return sorted(lib.folder.glob("*/*.yaml"))


def test_files_are_named_by_provider_scenario_and_variant(library: Library) -> None:
    names = {str(p.relative_to(library.folder)) for p in _paths(library)}
    assert "anthropic/one_tool_then_answer.yaml" in names
    assert "gemini/one_tool_then_answer.stream.yaml" in names
    assert len(names) == len(library.cells)


def test_our_files_are_readable_yaml_with_metadata(library: Library) -> None:
    path = cassette_path(library.folder, "openai", "one_tool_then_answer", True)
    text = path.read_text()
    assert text.startswith("harness:\n  source: scripted\n  provider: openai\n")
    assert "uri: https://api.openai.com/v1/responses\n" in text
    assert "parsed_body:\n" in text and "events:\n" in text
    assert "!!binary" not in text and '\\"' not in text  # no gzip, no escaped JSON
    meta = load_cassette(path).meta
    assert meta is not None and meta.stream and meta.model and meta.recorded
    assert set(meta.sdk) == {"harness", "openai", "httpx2"}


def test_dump_then_load_is_stable(library: Library) -> None:
    for path in _paths(library):
        cassette = load_cassette(path)
        assert dump_cassette(cassette) == path.read_text(), path


def test_read_cassette_reads_our_format(library: Library) -> None:
    for path in _paths(library):
        ours = load_cassette(path)
        theirs = read_cassette(path)
        assert len(theirs) == len(ours.interactions)
        for mine, read in zip(ours.interactions, theirs, strict=True):
            assert read.request_json == mine.request.body
            assert read.status == mine.response.status
            if mine.response.sse is not None:  # the exact stream text
                assert read.response_text.encode() == b"".join(mine.response.chunks())
            else:
                assert read.response_json == mine.response.json


def test_stock_vcrpy_plays_our_cassettes(library: Library) -> None:
    """Other tools read them: vcrpy with our serializer serves the recorded bytes."""
    path = cassette_path(library.folder, "anthropic", "one_tool_then_answer", True)
    cassette = load_cassette(path)
    my_vcr = vcr.VCR(serializer="harness", record_mode="none")
    my_vcr.register_serializer("harness", vcr_serializer)
    with my_vcr.use_cassette(str(path)) as played, httpx2.Client() as client:
        for interaction in cassette.interactions:
            response = client.post(interaction.request.uri, content=interaction.request.content())
            assert response.content == b"".join(interaction.response.chunks())
        assert played.all_played


@pytest.mark.skipif(
    not REALWIRE_FILES, reason=f"no realwire folder in {[str(b) for b in REALWIRE_BATCHES]}"
)
@pytest.mark.parametrize("path", REALWIRE_FILES, ids=[p.name for p in REALWIRE_FILES])
def test_foreign_vcrpy_cassettes_replay(path: Path) -> None:
    """Third-party recordings (parsed_body, escaped strings, gzip, SSE) replay byte-exact."""
    cassette = load_cassette(path)
    expected = read_cassette(path)
    app = ReplayApp(cassette, "anthropic")
    with serving(app) as served, httpx2.Client() as client:
        for interaction, recorded in zip(cassette.interactions, expected, strict=True):
            parts = urlsplit(interaction.request.uri)
            response = client.request(
                interaction.request.method,
                served.base + parts.path + (f"?{parts.query}" if parts.query else ""),
                content=interaction.request.content(),
            )
            assert response.status_code == recorded.status
            if recorded.response_json is not None:
                assert response.json() == recorded.response_json
            else:
                assert response.text == recorded.response_text
    assert app.findings() == []


GOOD = """\
harness:
  source: scripted
  provider: anthropic
  model: claude-x
  scenario: s
  stream: false
  recorded: '2026-11-30'
interactions:
- request:
    method: POST
    uri: https://api.anthropic.com/v1/messages
    headers: {}
    parsed_body: {model: claude-x}
  response:
    status: {code: 200, message: OK}
    headers: {content-type: [text/event-stream]}
    events:
    - event: message_start
      data: {type: message_start}
    - event: message_stop
      data: {type: message_stop}
- request:
    method: POST
    uri: https://api.anthropic.com/v1/messages
    parsed_body: {model: claude-x}
  response:
    status: {code: 200, message: OK}
    parsed_body: {id: msg_1}
version: 1
"""

BROKEN = [
    ("not yaml", GOOD.replace("version: 1", "version: [1"), "not valid YAML"),
    ("a list", "- 1\n- 2\n", "not a vcrpy cassette"),
    ("version", GOOD.replace("version: 1", "version: 2"), "format version 2"),
    (
        "no response",
        GOOD.replace(
            "  response:\n    status: {code: 200, message: OK}\n    parsed_body: {id: msg_1}\n", ""
        ),
        "interaction 2: missing `response`",
    ),
    (
        "no method",
        GOOD.replace("    method: POST\n", "", 1),
        "interaction 1: missing `request.method`",
    ),
    (
        "bad status",
        GOOD.replace("code: 200", "code: two hundred", 1),
        "interaction 1: response.status.code must be an HTTP status",
    ),
    (
        "event without data",
        GOOD.replace("      data: {type: message_stop}\n", ""),
        "interaction 1: response.events: event 2: missing `data`",
    ),
    (
        "a date in a body",
        GOOD.replace("parsed_body: {id: msg_1}", "parsed_body: {created: 2026-11-30}"),
        "interaction 2: response.parsed_body is not JSON",
    ),
    ("bad metadata", GOOD.replace("stream: false", "stream: maybe"), "`harness:` metadata"),
    (
        "headers not a mapping",
        GOOD.replace("headers: {}", "headers: [a, b]"),
        "interaction 1: request.headers must be a mapping",
    ),
]


def test_the_good_example_loads() -> None:
    cassette = cassette_from_text("good.yaml", GOOD)
    assert [i.number for i in cassette.interactions] == [1, 2]
    sse = cassette.interactions[0].response.sse
    assert sse is not None and len(sse.events) == 2
    assert json.loads(cassette.interactions[1].response.chunks()[0]) == {"id": "msg_1"}


@pytest.mark.parametrize(
    ("text", "problem"), [(t, p) for _, t, p in BROKEN], ids=[n for n, _, _ in BROKEN]
)
def test_broken_cassettes_name_file_interaction_and_field(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "edited.yaml"
    path.write_text(text)
    with pytest.raises(CassetteError) as caught:
        load_cassette(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and problem in message, message
    assert "\n" not in message


def test_missing_file_is_a_cassette_error(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="no such cassette"):
        load_cassette(tmp_path / "nope.yaml")


@pytest.mark.parametrize("stream", [False, True])
def test_vcrpy_records_in_our_format(emulator: Emulator, tmp_path: Path, stream: bool) -> None:
    """vcrpy with our serializer writes what we write: parsed JSON, SSE as events."""
    path = tmp_path / "vcr.yaml"
    my_vcr = vcr.VCR(serializer="harness", record_mode="all")
    my_vcr.register_serializer("harness", vcr_serializer)
    base = emulator.base_urls("one_tool_then_answer", f"vcr-{stream}")["anthropic"]
    body = {
        "model": "claude-x",
        "max_tokens": 100,
        "stream": stream,
        "messages": [{"role": "user", "content": "How is my bench press going?"}],
    }
    with my_vcr.use_cassette(str(path)), httpx2.Client() as client:
        sent = client.post(
            f"{base}/v1/messages?key=AIzaSecret", json=body, headers={"x-api-key": "sk-ant-x"}
        )
    [interaction] = load_cassette(path).interactions
    assert interaction.request.body == body
    assert b"".join(interaction.response.chunks()) == sent.content
    assert (interaction.response.sse is not None) == stream
    text = path.read_text()
    assert "parsed_body:" in text and "sk-ant-x" not in text and "AIzaSecret" not in text
