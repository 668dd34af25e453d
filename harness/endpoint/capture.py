"""Server-side capture: each exchange as it reached the endpoint — the request bytes and
headers as received, the response as sent — in arrival order, per run.

A record is opened when a request arrives (so tools that run after call N are tied to call N)
and closed when its reply was written whole, when writing it failed (the client went away
before the end), or when the run is settled with it still open. Records keep raw bytes and raw
headers in memory only; every view that leaves the process (`Exchange`, cassettes) is scrubbed.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace

from harness.capture import Exchange, exchange_from_record

SETTLE_SECONDS = 10.0  # how long a finished query waits for replies still being written
NEVER_COMPLETED = "never completed: the reply was still being written when the loop returned"


@dataclass(kw_only=True)
class Recorded:
    """One exchange as the bytes went (mutable while in flight; read only once it ended).

    `body` is the response body as sent, content-encoding undone; `complete` is False when
    the reply did not go out whole; `retries` lists upstream answers the forwarder retried."""

    seq: int
    method: str
    url: str
    request_headers: list[tuple[str, str]]
    request_body: bytes
    started: float = field(default_factory=time.time)
    status: int | None = None
    reason: str = ""
    response_headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    complete: bool = False
    error: str | None = None
    retries: list[str] = field(default_factory=list)
    ended: float | None = None


class RunCapture:
    """What one run (a cell, or a `harness emulate` run id) sent and was answered. Thread-safe."""

    def __init__(self, keep: int | None = None) -> None:
        """`keep`: at most this many records (the oldest ended ones go first); None keeps all,
        for a cell, whose run ends with the cell."""
        self.keep = keep
        self._changed = threading.Condition()
        self._records: list[Recorded] = []
        self._views: dict[int, Exchange] = {}
        self._seq = 0

    def begin(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes) -> Recorded:
        with self._changed:
            self._seq += 1
            record = Recorded(
                seq=self._seq, method=method, url=url, request_headers=headers, request_body=body
            )
            self._records.append(record)
            if self.keep is not None and len(self._records) > self.keep:
                ended = [r for r in self._records if r.ended is not None]
                for old in ended[: len(self._records) - self.keep]:
                    self._records.remove(old)
                    self._views.pop(old.seq, None)
            return record

    def end(self, record: Recorded, error: str | None = None) -> None:
        with self._changed:
            if record.ended is not None:
                return
            record.error = record.error or error
            record.complete = record.error is None and record.status is not None
            record.ended = time.time()
            self._changed.notify_all()

    def arrivals(self) -> int:
        """How many requests have arrived so far (ended or not)."""
        with self._changed:
            return self._seq

    def settle(self, timeout: float = SETTLE_SECONDS) -> None:
        """Wait until every reply has been written; one still open after `timeout` is closed
        as never completed."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while any(r.ended is None for r in self._records):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            for index, record in enumerate(self._records):
                if record.ended is None:
                    self._records[index] = self._given_up(record)

    def _given_up(self, record: Recorded) -> Recorded:
        """End `record` as never completed (the lock held) and return a copy of it as it
        stands, which readers get from now on: the server's thread still writing the reply
        goes on with the original, so what was judged never changes under a reader."""
        self.end(record, NEVER_COMPLETED)
        return replace(
            record,
            request_headers=list(record.request_headers),
            response_headers=list(record.response_headers),
            retries=list(record.retries),
        )

    def records(self) -> list[Recorded]:
        with self._changed:
            return list(self._records)

    def exchanges(self) -> list[Exchange]:
        """The scrubbed, decoded view of every ended exchange, in arrival order."""
        out: list[Exchange] = []
        for record in self.records():
            if record.ended is None:
                continue
            view = self._views.get(record.seq)
            if view is None:
                view = self._views[record.seq] = exchange_from_record(record)
            out.append(view)
        return out
