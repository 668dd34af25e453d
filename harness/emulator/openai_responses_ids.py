"""Ids and encrypted reasoning the emulated Responses API mints, and how it reads them back.

Real ids (`resp_`, `rs_`, `fc_`, `msg_`) are 50 hex digits that share segments with their
`resp_` id: a 16-digit prefix, `01`, the creation time in hex, 4 digits, `81`, 2 digits and
16 more (realwire `llm__responses_store_false_encrypted_reasoning_3rounds`:
`resp_0f4809b27460351d0169fab217db348196b9…`, `rs_0f4809b27460351d0169fab21897dc8196960e…`).
Ours keep that shape and put in the slots what a stateless validator needs:

    <kind>_<prefix:16>01<created:8><slot:4>81<flags:2><mac:16>

`prefix` and `created` name the response; `slot` the item in it; `flags` say whether the
response held a reasoning item and whether a function_call (not a message) came right after
it; `mac` proves we minted the id. From an `fc_`/`msg_` id alone we can so rebuild the `rs_` id
that preceded it (O5), and from an `rs_` id the id of the item that must follow it (O6).
Ids without a valid mac are FOREIGN (a real API's, e.g. in realwire) and never judged that way.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Literal, TypeAlias

from harness.emulator.tokens import Minter, decode_b64

ItemKind: TypeAlias = Literal["resp", "rs", "msg", "fc"]

_ID = re.compile(
    r"^(?P<kind>resp|rs|msg|fc)_(?P<prefix>[0-9a-f]{16})01(?P<created>[0-9a-f]{8})"
    r"(?P<slot>[0-9a-f]{4})81(?P<flags>[0-9a-f]{2})(?P<mac>[0-9a-f]{16})$"
)
_FLAGS_BASE = 0x90  # keeps the byte looking like the real ids' (`96`, `97`, `a0`)
_HAS_REASONING = 0x01
_CALL_FOLLOWS_REASONING = 0x02
REASONING_SLOT = "reasoning"
MESSAGE_SLOT = "message"
# Real encrypted reasoning is a Fernet token: version byte 0x80 and an 8-byte timestamp, then
# the ciphertext, in URL-safe base64 (`gAAAAABp-rIa…` in realwire). Ours keeps that head and
# carries a `Minter.token` bound to the reasoning item's id.
_FERNET_VERSION = b"\x80"
REASONING_TOKEN_KIND = "openai-reasoning"
_TOKEN_PADDING = 96


@dataclass(frozen=True, kw_only=True)
class ResponseKey:
    """What every id of one emulated response shares."""

    prefix: str  # 16 hex digits, one per response
    created: int  # the response's `created_at`
    reasoning: bool  # the response holds a reasoning item
    call_follows_reasoning: bool  # the item after the reasoning is a function_call


@dataclass(frozen=True, kw_only=True)
class OwnId:
    """An id we minted, read back."""

    kind: ItemKind
    key: ResponseKey


class ResponseIds:
    """Mints the ids of one scenario's responses and recognises them later."""

    def __init__(self, minter: Minter) -> None:
        self.minter = minter

    def key(
        self,
        user_index: int,
        turn_index: int,
        created: int,
        *,
        reasoning: bool,
        call_follows_reasoning: bool,
    ) -> ResponseKey:
        prefix = self.minter.hex("response", user_index, turn_index, length=16)
        return ResponseKey(
            prefix=prefix,
            created=created,
            reasoning=reasoning,
            call_follows_reasoning=call_follows_reasoning,
        )

    def mint(self, kind: ItemKind, key: ResponseKey, slot: str) -> str:
        slot_hex = self.minter.hex("slot", kind, key.prefix, slot, length=4)
        flags = _flags(key)
        head = f"{key.prefix}01{key.created:08x}{slot_hex}81{flags:02x}"
        return f"{kind}_{head}{self._mac(kind, head)}"

    def call_slot(self, index: int) -> str:
        return f"call{index}"

    def call_id(self, key: ResponseKey, index: int) -> str:
        """`call_` + 24 letters and digits, like `call_uy7tfNVokIN7NjFF6k7OtLyl`."""
        return "call_" + self.minter.alnum("call_id", key.prefix, index, length=24)

    def read(self, item_id: object) -> OwnId | None:
        """The id read back if we minted it, else None (FOREIGN or not an id at all)."""
        if not isinstance(item_id, str):
            return None
        match = _ID.match(item_id)
        if match is None:
            return None
        head = item_id[len(match["kind"]) + 1 : -16]
        if match["mac"] != self._mac(match["kind"], head):
            return None
        flags = int(match["flags"], 16)
        key = ResponseKey(
            prefix=match["prefix"],
            created=int(match["created"], 16),
            reasoning=bool(flags & _HAS_REASONING),
            call_follows_reasoning=bool(flags & _CALL_FOLLOWS_REASONING),
        )
        kind: ItemKind = match["kind"]  # type: ignore[assignment]  # the regex admits only these
        return OwnId(kind=kind, key=key)

    def reasoning_of(self, key: ResponseKey) -> str:
        """The id of the reasoning item a response's message or call required (O5)."""
        return self.mint("rs", key, REASONING_SLOT)

    def follower_of(self, key: ResponseKey) -> str:
        """The id of the item that came right after the response's reasoning item (O6)."""
        if key.call_follows_reasoning:
            return self.mint("fc", key, self.call_slot(0))
        return self.mint("msg", key, MESSAGE_SLOT)

    def encrypted_content(self, reasoning_id: str, created: int) -> str:
        raw = self.minter.token(REASONING_TOKEN_KIND, reasoning_id, padding=_TOKEN_PADDING)
        head = _FERNET_VERSION + created.to_bytes(8, "big")
        return base64.urlsafe_b64encode(head + raw).decode("ascii")

    def _mac(self, kind: str, head: str) -> str:
        return self.minter.hex("item-id-mac", kind, head, length=16)


def _flags(key: ResponseKey) -> int:
    flags = _FLAGS_BASE
    if key.reasoning:
        flags |= _HAS_REASONING
    if key.call_follows_reasoning:
        flags |= _CALL_FOLLOWS_REASONING
    return flags


def token_payload(encrypted_content: str) -> bytes | None:
    """The bytes after the Fernet-like head, or the whole decoded blob; None if not base64."""
    raw = decode_b64(encrypted_content)
    if raw is not None and raw.startswith(_FERNET_VERSION) and len(raw) > 9:
        return raw[9:]
    return raw
