"""Raw HTTP for the emulator's hostile-request tests: requests written byte by byte (so the
framing itself can be malformed) and the answer read back with http.client (no test of its own).
"""

from __future__ import annotations

import http.client
import json
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.emulator.server import Emulator
from harness.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
ONE_TOOL = load_scenario(ROOT / "scenarios" / "one_tool_then_answer.yaml")
# A bound on waiting for an answer, not a timing assertion: a dropped or hung request fails.
WAIT = 20.0
PATHS = {
    "anthropic": "/v1/messages",
    "openai-responses": "/v1/responses",
    "openai-chat": "/v1/chat/completions",
    "gemini": "/v1beta/models/gemini-2.5-flash:generateContent",
}


@dataclass(frozen=True, kw_only=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def api_path(emu: Emulator, api: str, run: str = "hostile") -> str:
    return f"/s/{ONE_TOOL.id}/r/{run}{PATHS[api]}"


def send_raw(emu: Emulator, request: bytes) -> Answer:
    """Send `request` as is on a fresh connection, end the sending side (so a short body reads
    as cut, not pending) and read one HTTP response."""
    with socket.create_connection(("127.0.0.1", emu.port), timeout=WAIT) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        return read_answer(sock)


def read_answer(sock: socket.socket) -> Answer:
    response = http.client.HTTPResponse(sock)
    response.begin()
    body = response.read()
    return Answer(
        status=response.status,
        headers={k.lower(): v for k, v in response.getheaders()},
        body=body,
    )


def post(emu: Emulator, path: str, body: bytes, headers: dict[str, str] | None = None) -> Answer:
    """A POST with a correct Content-Length unless `headers` gives framing of its own."""
    fields = {"host": "127.0.0.1", "content-type": "application/json"}
    fields.update(headers if headers is not None else {"content-length": str(len(body))})
    head = f"POST {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items())
    return send_raw(emu, head.encode("latin-1") + b"\r\n" + body)


def post_json(emu: Emulator, api: str, body: Any, run: str = "hostile") -> Answer:
    return post(emu, api_path(emu, api, run), json.dumps(body).encode())


def chunked(body: bytes, size: int = 7) -> bytes:
    pieces = [body[i : i + size] for i in range(0, len(body), size)]
    return b"".join(f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in pieces) + b"0\r\n\r\n"


def nested(depth: int) -> str:
    """JSON text of arrays nested `depth` deep (json.dumps itself refuses ~1,000 levels)."""
    return "[" * depth + "1" + "]" * depth


def with_raw_field(body: Any, name: str, raw_json: str) -> bytes:
    """`body` (a JSON object) with one more field whose value is the JSON text `raw_json`."""
    return (json.dumps(body)[:-1] + f', "{name}": {raw_json}}}').encode()


def error_message(api: str, answer: Answer) -> str:
    """The error message out of the API's envelope (asserting the envelope's shape)."""
    payload = answer.json()
    error = payload["error"]
    if api == "anthropic":
        assert error["type"]
    elif api == "gemini":
        assert error["code"] == answer.status and error["status"]
    else:
        assert error["type"] and "param" in error and "code" in error
    return str(error["message"])
