"""Fuzz the cassette readers: the replay loader (`cassette_from_text`, what `harness run` reads)
and `harness audit` (`audit_cassette`, any project's vcrpy file), on library cassettes with
one node replaced by a hostile value, a hostile body (gzip bomb, truncated gzip, bytes that
are not UTF-8), a line's value replaced by a hand-made attack, or a few bytes mutated. Every
example reads, or raises one `CassetteError` line naming the file."""

from __future__ import annotations

import gzip
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from harness.cassettes.files import cassette_from_text
from harness.commands.audit import audit_cassette
from harness.errors import CassetteError
from harness.limits import MAX_BODY_BYTES
from tests.conftest import ROOT
from tests.fuzz.hostile import FUZZ, byte_mutated, dump_yaml, one_line, spliced, structural

# Small ones, one per API and body form (JSON, SSE), so each example stays fast.
PICKED = [
    "anthropic/one_tool_then_answer.yaml",
    "openai/answer_without_tools.stream.yaml",
    "gemini/answer_after_failing_tool.yaml",
    "anthropic/answer_without_tools.stream.yaml",
]
TEXTS = {name: (ROOT / "cassettes" / name).read_text("utf-8") for name in PICKED}
FOLDER = Path(tempfile.mkdtemp(prefix="harness-fuzz-cassette-"))
BODIES = [
    gzip.compress(b"0" * (MAX_BODY_BYTES + 1)),  # a gzip bomb: ~33 KB in, 32 MiB + 1 out
    gzip.compress(b'{"id": 1}')[:-6],  # truncated
    b"\xff\xfe not UTF-8",
    gzip.compress(b'{"a": "\\ud800"}'),  # a lone surrogate inside
    gzip.compress(b"[" * 5000 + b"]" * 5000),  # nested past every limit
]


@pytest.fixture(autouse=True, scope="module")
def no_parse_cache() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HARNESS_CASSETTE_CACHE", "off")
        yield


def check(content: str | bytes) -> None:
    path = FOLDER / "fuzzed.yaml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, "utf-8", errors="surrogatepass")
    try:
        audit_cassette(path)
    except CassetteError as exc:
        one_line(str(exc), path)
    if isinstance(content, str):
        try:
            cassette_from_text(str(path), content)
        except CassetteError as exc:
            one_line(str(exc), path)


names = st.sampled_from(PICKED)
check(TEXTS[PICKED[0]])  # warm up (the checks' imports), so no example pays for it


@FUZZ
@given(st.data())
def test_one_node_replaced(data: st.DataObject) -> None:
    document = yaml.safe_load(TEXTS[data.draw(names)])
    check(dump_yaml(data.draw(structural(document))))


@FUZZ
@given(st.data())
def test_a_hostile_body(data: st.DataObject) -> None:
    document: Any = yaml.safe_load(TEXTS[data.draw(names)])
    interaction = data.draw(st.sampled_from(document["interactions"]))
    part = interaction[data.draw(st.sampled_from(["request", "response"]))]
    for key in ("parsed_body", "events", "sse"):
        part.pop(key, None)
    body = data.draw(st.sampled_from(BODIES))
    part["body"] = data.draw(st.sampled_from([body, {"string": body}]))
    if data.draw(st.booleans()):
        part["headers"] = {"content-encoding": ["deflate"], "content-type": ["text/event-stream"]}
    check(dump_yaml(document))


@FUZZ
@given(st.data())
def test_one_value_replaced_by_an_attack(data: st.DataObject) -> None:
    check(data.draw(spliced(TEXTS[data.draw(names)])))


@FUZZ
@given(st.data())
def test_bytes_mutated(data: st.DataObject) -> None:
    check(data.draw(byte_mutated(TEXTS[data.draw(names)].encode())))
