"""Emulator throughput on loopback: requests per second, JSON and streamed, per API.

Run:  python benchmarks/emulator_throughput.py [--requests 400] [--threads 1 4]

Each request is a first call of `scenarios/one_tool_then_answer.yaml` (validated, played, and
answered with one tool call), sent by a keep-alive httpx2 client, so the number measures the
emulator's whole request path. Numbers go in the README; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import httpx2

from harness.emulator.server import Emulator
from harness.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = load_scenario(ROOT / "scenarios" / "one_tool_then_answer.yaml")
TEXT = SCENARIO.messages[0].text
PARAMS = {"type": "object", "properties": {"exercise": {"type": "string"}}}
TOOL = "get_workout_history"


def requests_for(stream: bool) -> dict[str, tuple[str, dict[str, Any]]]:
    """path suffix and body per API, for the base URL of each SDK."""
    gemini_action = "streamGenerateContent?alt=sse" if stream else "generateContent"
    return {
        "anthropic": (
            "/v1/messages",
            {
                "model": "claude-bench",
                "max_tokens": 256,
                "stream": stream,
                "messages": [{"role": "user", "content": TEXT}],
                "tools": [{"name": TOOL, "description": "d", "input_schema": PARAMS}],
            },
        ),
        "openai-responses": (
            "/v1/responses",
            {
                "model": "gpt-bench",
                "store": False,
                "stream": stream,
                "input": TEXT,
                "tools": [
                    {"type": "function", "name": TOOL, "description": "d", "parameters": PARAMS}
                ],
            },
        ),
        "openai-chat": (
            "/v1/chat/completions",
            {
                "model": "gpt-bench",
                "stream": stream,
                "messages": [{"role": "user", "content": TEXT}],
                "tools": [
                    {
                        "type": "function",
                        "function": {"name": TOOL, "description": "d", "parameters": PARAMS},
                    }
                ],
            },
        ),
        "gemini": (
            f"/v1beta/models/gemini-bench:{gemini_action}",
            {
                "contents": [{"role": "user", "parts": [{"text": TEXT}]}],
                "tools": [
                    {
                        "functionDeclarations": [
                            {"name": TOOL, "description": "d", "parametersJsonSchema": PARAMS}
                        ]
                    }
                ],
            },
        ),
    }


def measure(url: str, body: bytes, total: int, threads: int) -> float:
    """Requests per second over `total` requests split across `threads` keep-alive clients."""
    per_thread = total // threads
    errors: list[str] = []

    def worker() -> None:
        with httpx2.Client(timeout=30) as client:
            for _ in range(per_thread):
                reply = client.post(url, content=body, headers={"content-type": "application/json"})
                reply.read()
                if reply.status_code != 200:
                    errors.append(reply.text[:200])

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    started = time.perf_counter()
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    elapsed = time.perf_counter() - started
    if errors:
        raise SystemExit(f"the emulator rejected a benchmark request: {errors[0]}")
    return per_thread * threads / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with Emulator([SCENARIO]) as emu:
        base = emu.base_urls(SCENARIO.id, "bench")["anthropic"]
        print(f"{'api':<18}{'form':<8}" + "".join(f"{f'{n} thread(s)':>16}" for n in args.threads))
        for stream in (False, True):
            for api, (suffix, body) in requests_for(stream).items():
                data = json.dumps(body).encode()
                measure(base + suffix, data, 20, 1)  # warm up
                cols = []
                for threads in args.threads:
                    rates = [
                        measure(base + suffix, data, args.requests, threads)
                        for _ in range(args.repeats)
                    ]
                    cols.append(f"{statistics.median(rates):>12.0f} r/s")
                form = "stream" if stream else "json"
                print(f"{api:<18}{form:<8}" + "".join(f"{c:>16}" for c in cols), flush=True)


if __name__ == "__main__":
    main()
