"""Deterministic ids and opaque tokens (signatures, encrypted reasoning) minted by the emulator.

Tokens carry an HMAC of the content they are bound to, so the emulator can tell statelessly,
from the next request alone, whether a loop sent one back unchanged. Tokens that do not carry
our marker come from a real API (recorded traffic) and are accepted as they are.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import hmac

MARKER = b"hrns1"
_SECRET = b"harness-emulator-token-key"  # not a secret: it only makes tampering detectable
_MAC_BYTES = 16
# A token whose marker was altered is still ours when the filler after its MAC is the one that
# MAC gives (chance for a real API's token: 2**-(8 * filler bytes)); the real Gemini API answers
# "Corrupted thought signature." to a signature altered in its first bytes as anywhere else
# (issue 11; gemini_validate.CORRUPTED_SIGNATURE). Our tokens carry at least this much filler.
_MIN_FILLER_BYTES = 16


class Verdict(enum.Enum):
    VALID = "valid"  # ours, unchanged
    TAMPERED = "tampered"  # ours, but the content or the token changed
    FOREIGN = "foreign"  # not minted by us (e.g. a real API's token); accepted


class Minter:
    """Mints ids and tokens for one scenario; the same inputs give the same outputs."""

    def __init__(self, seed: str) -> None:
        self.seed = seed

    def hex(self, *parts: object, length: int = 24) -> str:
        text = "\x1f".join([self.seed, *map(str, parts)])
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]

    def alnum(self, *parts: object, length: int = 24) -> str:
        """Base62-looking id text (Anthropic `toolu_01…`, `msg_01…`)."""
        digest = hashlib.sha256("\x1f".join([self.seed, *map(str, parts)]).encode()).digest()
        alphabet = "0123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
        n = int.from_bytes(digest, "big")
        out = []
        for _ in range(length):
            n, r = divmod(n, len(alphabet))
            out.append(alphabet[r])
        return "".join(out)

    def token(self, kind: str, content: str, padding: int = 48) -> bytes:
        """Raw token bytes bound to `content`: marker, MAC, then filler so it looks opaque.
        The filler follows from the MAC, so a change anywhere in the token is detected."""
        mac = _mac(kind, content, padding)
        return MARKER + mac + _filler(mac, padding)


def _filler(mac: bytes, length: int) -> bytes:
    stream = b""
    counter = 0
    while len(stream) < length:
        stream += hashlib.sha256(mac + counter.to_bytes(4, "big")).digest()
        counter += 1
    return stream[:length]


def _mac(kind: str, content: str, padding: int) -> bytes:
    """Bound to the token's length too, so a truncated token does not verify."""
    msg = f"{kind}\x1f{padding}\x1f{content}".encode()
    return hmac.new(_SECRET, msg, hashlib.sha256).digest()[:_MAC_BYTES]


def decode_b64(text: str) -> bytes | None:
    """Decode standard or URL-safe base64, padded or not (SDKs differ). None if not base64."""
    cleaned = text.strip().replace("-", "+").replace("_", "/")
    cleaned += "=" * (-len(cleaned) % 4)
    try:
        # validate=True: without it b64decode silently drops characters outside the alphabet
        # and returns the wrong bytes instead of failing.
        return base64.b64decode(cleaned.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        return None


def verify(kind: str, content: str, raw: bytes | None) -> Verdict:
    """Check token bytes against the content they must be bound to."""
    if raw is None or not minted_here(raw):
        return Verdict.FOREIGN
    padding = len(raw) - len(MARKER) - _MAC_BYTES
    mac = _mac(kind, content, padding)
    expected = MARKER + mac + _filler(mac, padding)
    return Verdict.VALID if hmac.compare_digest(raw, expected) else Verdict.TAMPERED


def minted_here(raw: bytes) -> bool:
    """Our token, even with its first bytes (the marker) altered: the MAC and the filler that
    follows from it still agree."""
    if raw.startswith(MARKER):
        return True
    rest = raw[len(MARKER) :]
    mac, filler = rest[:_MAC_BYTES], rest[_MAC_BYTES:]
    return len(filler) >= _MIN_FILLER_BYTES and hmac.compare_digest(
        _filler(mac, len(filler)), filler
    )
