"""The emulator's own limits: what one request may cost it, and how much of the past it keeps.

A request (each number can be changed per server with `Emulator(limits=Limits(...))`):

- body: each API's real limit (`WireApi.max_body_bytes`: Anthropic 32 MiB, OpenAI 32 MiB,
  Gemini 100 MiB), answered with that API's 413 before the body is read (Content-Length) or as
  soon as a chunked body passes it; `body_bytes` overrides it for every API.
- JSON nesting: at most 100 levels (Google's transcoder rejects deeper bodies, and it keeps the
  validators' recursion far from Python's limit); deeper gets a clear 400.
- idle connections: a socket read or write waiting more than 30 s ends the connection, so idle
  or half-open connections cannot pin a thread each for ever; the listen backlog is 128.

The endpoint keeps the capture of runs made on demand for the 100 most recently made runs,
the newest 200 exchanges of each (cells' own runs are kept whole until the cell ends).

The per-run log (`Emulator.log(run)`): the last 1,000 requests of each run, for the 1,000 runs
written to most recently, and at most 64 MiB of request bodies in all (the oldest entries go
first; a run's newest entry always stays). Parsed bodies take several times their wire size in
memory, so the budget bounds the log to a few hundred MB in the worst case.
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024
# protobuf's default recursion limit, which Google's JSON transcoder applies (gemini_json:
# "Message too deep. Max recursion depth reached for key …"). Anthropic's parser allows more
# (orjson: 1024); the emulator keeps one limit so no validator can recurse past Python's.
MAX_JSON_DEPTH = 100
# Longer than the SDKs' keep-alive expiry (httpx: 5 s), so the server never closes a pooled
# connection a client is about to reuse; short enough that idle sockets do not pile up.
IDLE_TIMEOUT = 30.0
# The stdlib's default backlog is 5: a burst of parallel clients then sees refused connections.
LISTEN_BACKLOG = 128
# A path no API serves is answered 404 after its body is read (keep-alive), up to this much.
UNROUTED_BODY_BYTES = 32 * MIB
LOG_ENTRIES_PER_RUN = 1_000
LOG_RUNS = 1_000
LOG_BYTES = 64 * MIB
# The endpoint's capture of runs made on demand (`harness emulate`, a base URL nobody opened):
# the newest exchanges of the most recently made runs. Runs a cell opens keep everything until
# the cell closes them.
CAPTURE_RUNS = 100
CAPTURE_PER_RUN = 200


@dataclass(frozen=True, kw_only=True)
class Limits:
    """`body_bytes=None`: each API's real request-size limit."""

    body_bytes: int | None = None
    idle_timeout: float = IDLE_TIMEOUT
    log_entries_per_run: int = LOG_ENTRIES_PER_RUN
    log_runs: int = LOG_RUNS
    log_bytes: int = LOG_BYTES
    capture_runs: int = CAPTURE_RUNS
    capture_per_run: int = CAPTURE_PER_RUN
