"""No secret reaches a cassette: headers are kept by allowlist, credential query parameters
are dropped, and a text that still holds anything key-shaped (or a known key value) is never
written, and never half-written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.cassettes.build import interaction_from_record, real_uri
from harness.cassettes.cassette import Cassette
from harness.cassettes.files import dump_cassette, write_atomic
from harness.endpoint.capture import Recorded
from harness.errors import CassetteError
from harness.scrub import find_key

ANTHROPIC_KEY = "sk-ant-api03-" + "A1b2C3d4" * 6
OPENAI_KEY = "sk-proj-" + "Z9y8X7w6" * 6
GOOGLE_KEY = "AIzaSy" + "Q1w2E3r4" * 4 + "xyz"
OAUTH_TOKEN = "ya29." + "a0AfH6SM" * 5
KEYS = (ANTHROPIC_KEY, OPENAI_KEY, GOOGLE_KEY, OAUTH_TOKEN)

REQUEST_HEADERS = [
    ("Authorization", f"Bearer {OPENAI_KEY}"),
    ("x-api-key", ANTHROPIC_KEY),
    ("X-Goog-Api-Key", GOOGLE_KEY),
    ("api-key", OPENAI_KEY),
    ("Cookie", f"session={ANTHROPIC_KEY}"),
    ("Proxy-Authorization", f"Basic {OAUTH_TOKEN}"),
    ("x-gateway-token", OAUTH_TOKEN),  # a header nobody listed: the allowlist drops it
    ("ANTHROPIC-custom", ANTHROPIC_KEY),
    ("content-type", "application/json"),
    ("anthropic-version", "2023-06-01"),
]
RESPONSE_HEADERS = [
    ("Set-Cookie", f"__cf_bm={OAUTH_TOKEN}; path=/"),
    ("anthropic-organization-id", "org-123"),
    ("openai-organization", "user-abc"),
    ("openai-project", "proj_abc"),
    ("x-echo-key", GOOGLE_KEY),
    ("content-type", "application/json"),
    ("request-id", "req_011"),
]
QUERY = f"?key={GOOGLE_KEY}&api_key={OPENAI_KEY}&access_token={OAUTH_TOKEN}&alt=sse"


def leaky_record(url: str) -> Recorded:
    return Recorded(
        seq=1,
        method="POST",
        url=url + QUERY,
        request_headers=REQUEST_HEADERS,
        request_body=b'{"model":"m","messages":[]}',
        status=200,
        reason="OK",
        response_headers=RESPONSE_HEADERS,
        body=b'{"id":"msg_1"}',
        complete=True,
    )


@pytest.mark.parametrize(
    ("provider", "url"),
    [
        ("anthropic", "http://127.0.0.1:9/s/x/r/y/v1/messages"),
        ("openai", "https://proxy.internal/openai/v1/responses"),
        ("gemini", "https://generativelanguage.googleapis.com/v1/models/m:streamGenerateContent"),
    ],
)
def test_keys_in_every_header_and_query_position_are_gone(provider: str, url: str) -> None:
    interaction = interaction_from_record(1, provider, leaky_record(url))
    text = dump_cassette(Cassette(path="x.yaml", meta=None, interactions=(interaction,)))
    for key in KEYS:
        assert key not in text
    assert find_key(text) is None
    assert "cookie" not in text.lower() and "authorization" not in text.lower()
    assert "organization" not in text and "openai-project" not in text
    assert interaction.request.uri.endswith("?alt=sse")
    assert set(interaction.request.headers) == {"content-type", "anthropic-version"}
    assert set(interaction.response.headers) == {"content-type", "request-id"}


def test_uris_name_the_real_api() -> None:
    assert real_uri("anthropic", "http://127.0.0.1:5/s/a/r/b/v1/messages") == (
        "https://api.anthropic.com/v1/messages"
    )
    assert real_uri("openai", "http://127.0.0.1:5/s/a/r/b/v1/responses?key=x") == (
        "https://api.openai.com/v1/responses"
    )
    assert real_uri(
        "gemini", "http://127.0.0.1:5/s/a/r/b/v1beta/models/g-3:streamGenerateContent?alt=sse"
    ) == (
        "https://generativelanguage.googleapis.com/v1beta/models/g-3:streamGenerateContent?alt=sse"
    )


@pytest.mark.parametrize(
    "leak",
    [
        f"the user pasted {ANTHROPIC_KEY} into the chat",
        f"Authorization: Bearer {'q' * 30}",
        f"key {GOOGLE_KEY}",
    ],
)
def test_a_key_left_in_a_body_refuses_the_write(tmp_path: Path, leak: str) -> None:
    target = tmp_path / "a.yaml"
    target.write_text("old\n")
    with pytest.raises(CassetteError, match="looks like a key") as caught:
        write_atomic(target, f"interactions:\n- {leak}\n")
    assert target.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["a.yaml"]
    for key in KEYS:
        assert key not in str(caught.value)  # the error masks what it found


def test_a_known_secret_value_refuses_the_write_whatever_its_shape(tmp_path: Path) -> None:
    secret = "internal-gateway-token-31337"
    with pytest.raises(CassetteError, match="looks like a key"):
        write_atomic(tmp_path / "b.yaml", f"x: {secret}\n", secrets=[secret])
    assert not (tmp_path / "b.yaml").exists()


def test_an_interrupt_while_writing_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "c.yaml"
    target.write_bytes(b"old bytes\n")

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, "new text\n" * 1000)
    assert target.read_bytes() == b"old bytes\n"
    assert os.listdir(tmp_path) == ["c.yaml"]


def test_new_files_are_readable_by_others(tmp_path: Path) -> None:
    write_atomic(tmp_path / "d" / "e.yaml", "x: 1\n")
    assert (tmp_path / "d" / "e.yaml").stat().st_mode & 0o777 == 0o644
