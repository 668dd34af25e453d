"""Tokens: deterministic ids, binding to content, both base64 alphabets."""

from __future__ import annotations

import base64

from harness.emulator.tokens import Minter, Verdict, decode_b64, verify


def test_ids_are_deterministic_and_distinct() -> None:
    a, b = Minter("s/anthropic"), Minter("s/anthropic")
    assert a.hex(1, 2) == b.hex(1, 2) and a.hex(1, 2) != a.hex(1, 3)
    assert a.alnum("x") == b.alnum("x") and len(a.alnum("x", length=10)) == 10


def test_token_verifies_only_against_its_content() -> None:
    raw = Minter("seed").token("thinking", "I should check the history")
    assert verify("thinking", "I should check the history", raw) is Verdict.VALID
    assert verify("thinking", "I should check the histories", raw) is Verdict.TAMPERED
    assert verify("other-kind", "I should check the history", raw) is Verdict.TAMPERED
    assert verify("thinking", "anything", b"real-api-signature") is Verdict.FOREIGN
    assert verify("thinking", "anything", None) is Verdict.FOREIGN


def test_a_change_anywhere_in_the_token_is_detected() -> None:
    raw = Minter("seed").token("sig", "content", padding=40)
    for index in range(len(b"hrns1"), len(raw)):
        changed = raw[:index] + bytes([raw[index] ^ 1]) + raw[index + 1 :]
        assert verify("sig", "content", changed) is Verdict.TAMPERED, index
    assert verify("sig", "content", raw[:-1]) is Verdict.TAMPERED


def test_a_change_in_the_first_bytes_is_detected_too() -> None:
    """The marker altered: the MAC and the filler that follows from it still say it is ours."""
    raw = Minter("seed").token("sig", "content", padding=40)
    for index in range(len(b"hrns1")):
        changed = raw[:index] + bytes([raw[index] ^ 1]) + raw[index + 1 :]
        assert verify("sig", "content", changed) is Verdict.TAMPERED, index
    assert verify("sig", "content", bytes(len(raw))) is Verdict.FOREIGN  # not ours at all


def test_decode_accepts_standard_and_url_safe_alphabets() -> None:
    # Bytes whose standard encoding holds '+' and '/': the SDK sends them back URL-safe.
    data = bytes(range(250, 256)) * 8
    standard = base64.b64encode(data).decode()
    url_safe = base64.urlsafe_b64encode(data).decode()
    assert "+" in standard or "/" in standard
    assert decode_b64(standard) == data
    assert decode_b64(url_safe) == data
    assert decode_b64(url_safe.rstrip("=")) == data
    assert decode_b64("not base64 at all!") is None
