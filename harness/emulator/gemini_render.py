"""The Gemini API's `GenerateContentResponse` for a scripted turn, in its three wire forms:
one JSON object (`generateContent`), SSE frames (`streamGenerateContent?alt=sse`) and a JSON
array written piece by piece (`streamGenerateContent` without `alt`).

Shapes follow the realwire recordings (`../realwire/google/`): pretty-printed JSON with
two-space indents for the object and the array; SSE `data: ` frames with `": "` after keys and
`\\r\\n\\r\\n` between events; array elements joined by `\\n,\\r\\n` and closed by `\\n]`; the last
chunk carries an empty text part, `finishReason` and the final usage.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any

from harness.emulator import gemini_validate as gv
from harness.emulator.wire import Context, Reply, Step
from harness.scenario.model import ScriptedCall

# Seen on every function-call answer in realwire (non-streamed, and 2.5 streamed).
FINISH_MESSAGE = "Model generated function call(s)."
JSON_HEADERS = {
    "content-type": "application/json; charset=UTF-8",
    "vary": "Origin, X-Origin, Referer",
    "x-content-type-options": "nosniff",
    "x-frame-options": "SAMEORIGIN",
    "x-xss-protection": "0",
}
SSE_HEADERS = {
    **JSON_HEADERS,
    "content-type": "text/event-stream",
    "content-disposition": "attachment",
}
_TEXT_CHUNKS = 3
_ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


def render(step: Step, body: Mapping[str, Any], ctx: Context) -> Reply:
    turn = _Turn(step, body, ctx)
    if not ctx.stream:
        return Reply(status=200, headers=JSON_HEADERS, chunks=(pretty(turn.whole()) + b"\n",))
    chunks = turn.chunks()
    if ctx.query.get("alt") == "sse":
        frames = [b"data: " + _sse_json(c) + b"\r\n\r\n" for c in chunks]
        return Reply(status=200, headers=SSE_HEADERS, chunks=frames, streamed=True)
    pieces = [(b"[" if i == 0 else b"\n,\r\n") + pretty(c) for i, c in enumerate(chunks)]
    return Reply(status=200, headers=JSON_HEADERS, chunks=[*pieces, b"\n]"], streamed=True)


def pretty(payload: Any) -> bytes:
    return json.dumps(payload, ensure_ascii=False, indent=2).encode()


def _sse_json(payload: Any) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ": ")).encode()


def signature_for(ctx: Context, call_part: Mapping[str, Any]) -> str:
    """Standard base64 (as the API sends it) of a token bound to the model and the call."""
    raw = ctx.minter.token(gv.SIGNATURE_KIND, gv.bound_content(ctx.model, call_part), padding=96)
    return base64.b64encode(raw).decode("ascii")


def call_id(ctx: Context, step: Step, index: int) -> str:
    """Eight lower-case letters and digits, like the ids Gemini 3 is reported to return."""
    n = int(ctx.minter.hex("gemini-call", step.user_index, step.turn_index, index), 16)
    out = []
    for _ in range(8):
        n, r = divmod(n, len(_ID_ALPHABET))
        out.append(_ID_ALPHABET[r])
    return "".join(out)


def split_text(text: str, pieces: int = _TEXT_CHUNKS) -> list[str]:
    """`text` in up to `pieces` chunks cut after spaces; joined they give `text` back."""
    words = text.split(" ")
    if len(words) < 2 or pieces < 2:
        return [text]
    size = -(-len(words) // pieces)
    groups = [words[i : i + size] for i in range(0, len(words), size)]
    return [" ".join(g) + (" " if i < len(groups) - 1 else "") for i, g in enumerate(groups)]


class _Turn:
    """One scripted turn as parts, usage and the candidate envelope."""

    def __init__(self, step: Step, body: Mapping[str, Any], ctx: Context) -> None:
        self.step, self.body, self.ctx = step, body, ctx
        self.text = step.turn.text
        self.call_parts = [self._call_part(k, c) for k, c in enumerate(step.turn.calls)]
        self.response_id = _response_id(ctx, step)
        self.prompt_tokens = _prompt_tokens(body)
        self.thoughts = self._thoughts()

    def whole(self) -> dict[str, Any]:
        parts: list[dict[str, Any]] = [{"text": self.text}] if self.text else []
        parts += self.call_parts
        if not parts:
            parts = [{"text": ""}]
        return self._response(
            parts, self._output_tokens(len(self.call_parts), self.text), final=True
        )

    def chunks(self) -> list[dict[str, Any]]:
        out, said = [], ""
        for piece in split_text(self.text) if self.text else []:
            said += piece
            out.append(self._response([{"text": piece}], self._output_tokens(0, said), final=False))
        for k, part in enumerate(self.call_parts):
            out.append(self._response([part], self._output_tokens(k + 1, said), final=False))
        tokens = self._output_tokens(len(self.call_parts), said)
        out.append(self._response([{"text": ""}], tokens, final=True))
        return out

    def _call_part(self, index: int, call: ScriptedCall) -> dict[str, Any]:
        fc: dict[str, Any] = {"name": call.name, "args": dict(call.arguments)}
        if self.ctx.options.gemini_call_ids:
            fc = {"id": call_id(self.ctx, self.step, index), **fc}
        part: dict[str, Any] = {"functionCall": fc}
        if index == 0 and self.ctx.options.gemini_thought_signatures:
            part["thoughtSignature"] = signature_for(self.ctx, part)
        return part

    def _output_tokens(self, calls: int, text: str) -> int:
        args = sum(len(json.dumps(p["functionCall"]["args"])) for p in self.call_parts[:calls])
        return len(text) // 4 + (1 if text else 0) + args // 3 + 5 * calls

    def _thoughts(self) -> int:
        """Thinking models report thought tokens on call turns and first answers (realwire)."""
        step = self.step
        if not _thinks(self.ctx.model, self.body) or not (step.turn.calls or step.turn_index <= 0):
            return 0
        seed = self.ctx.minter.hex("gemini-thoughts", step.user_index, step.turn_index)
        return 24 + int(seed, 16) % 200

    def _response(self, parts: list[dict[str, Any]], output: int, final: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
        if final:
            candidate["finishReason"] = "STOP"
        candidate["index"] = 0
        if final and self.call_parts:
            candidate["finishMessage"] = FINISH_MESSAGE
        return {
            "candidates": [candidate],
            "usageMetadata": self._usage(output),
            "modelVersion": self.ctx.model,
            "responseId": self.response_id,
        }

    def _usage(self, output: int) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "promptTokenCount": self.prompt_tokens,
            "candidatesTokenCount": output,
            "totalTokenCount": self.prompt_tokens + output + self.thoughts,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": self.prompt_tokens}],
        }
        if self.thoughts:
            usage["thoughtsTokenCount"] = self.thoughts
        return usage


def _response_id(ctx: Context, step: Step) -> str:
    raw = bytes.fromhex(
        ctx.minter.hex("gemini-response", step.user_index, step.turn_index, length=34)
    )
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")[:23]


def _prompt_tokens(body: Mapping[str, Any]) -> int:
    """About four characters a token over what the model reads."""
    read: Sequence[Any] = [
        gv.contents_of(body),
        body.get("systemInstruction") or body.get("system_instruction"),
        body.get("tools"),
    ]
    return max(1, len(json.dumps(read, ensure_ascii=False, default=str)) // 4)


def _thinks(model: str, body: Mapping[str, Any]) -> bool:
    """Gemini 2.5 and 3 think by default; a zero thinking budget turns it off (2.5 Flash)."""
    if not model.startswith(("gemini-2.5", "gemini-3")):
        return False
    config = body.get("generationConfig") or body.get("generation_config") or {}
    thinking = config.get("thinkingConfig") or config.get("thinking_config") or {}
    budget = thinking.get("thinkingBudget", thinking.get("thinking_budget"))
    return budget != 0
